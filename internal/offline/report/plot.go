package report

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/regimentd/regiment/internal/offline/eval"
)

// PlotName is the file of the replicas plot.
const PlotName = "replicas.png"

// maxPoints is the most points a line gets: longer series are thinned to
// bucket means.
const maxPoints = 1500

// The colours of the plot's lines: live (what the cluster ran) and
// recommended (what the Soldier would have set).
var (
	LiveColor        = color.RGBA{R: 0x1f, G: 0x4e, B: 0x9c, A: 0xff}
	RecommendedColor = color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}
)

// WritePlot draws, one above the other, each domain's replicas summed over
// its apps and then each domain's top apps (by the difference in
// core-hours), live against recommended, and writes the PNG to w.
func WritePlot(w io.Writer, rec *Recorded, results []DomainResult, top int) error {
	var plots []*plot.Plot
	for i, d := range rec.Domains {
		live, recd := make([]float64, len(d.At)), make([]float64, len(d.At))
		for _, a := range d.Apps {
			addInto(live, a.Live)
			addInto(recd, a.Recommended)
		}
		p, err := replicasPlot(d.Name+": replicas of every app", d, live, recd)
		if err != nil {
			return err
		}
		plots = append(plots, p)
		for _, ar := range results[i].Apps[:min(top, len(results[i].Apps))] {
			a := d.app(ar.Name)
			p, err := replicasPlot(a.Name+": replicas", d, a.Live, a.Recommended)
			if err != nil {
				return err
			}
			plots = append(plots, p)
		}
	}
	img := vgimg.NewWith(vgimg.UseWH(10*vg.Inch, vg.Length(2.4*float64(len(plots))+0.4)*vg.Inch), vgimg.UseDPI(96))
	c := draw.New(img)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	eval.DrawStack(c, plots)
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("write %s: %w", PlotName, err)
	}
	return nil
}

// app is the app of d named name.
func (d *Domain) app(name string) *App {
	for i := range d.Apps {
		if d.Apps[i].Name == name {
			return &d.Apps[i]
		}
	}
	return nil
}

// replicasPlot plots live and recommended replicas against hours since d's
// first step.
func replicasPlot(title string, d *Domain, live, recommended []float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "hours from " + d.At[0].UTC().Format("2006-01-02 15:04 MST")
	p.Y.Label.Text = "replicas"
	p.Y.Min = 0
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for _, l := range []struct {
		name string
		ys   []float64
		c    color.Color
	}{{"live (the cluster)", live, LiveColor}, {"regiment (recommended)", recommended, RecommendedColor}} {
		line, err := plotter.NewLine(thinned(d, l.ys))
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", title, err)
		}
		line.Color, line.Width = l.c, vg.Points(1.2)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	p.Y.Max = math.Max(p.Y.Max*1.25, 1)
	return p, nil
}

// thinned is ys against hours since d's first step, at most maxPoints bucket
// means; unrecorded values are left out.
func thinned(d *Domain, ys []float64) plotter.XYs {
	step := max(1, (len(ys)+maxPoints-1)/maxPoints)
	xy := make(plotter.XYs, 0, len(ys)/step+1)
	for k := 0; k < len(ys); k += step {
		sum, n := 0.0, 0
		for _, y := range ys[k:min(k+step, len(ys))] {
			if !math.IsNaN(y) {
				sum, n = sum+y, n+1
			}
		}
		if n > 0 {
			xy = append(xy, plotter.XY{X: d.At[k].Sub(d.At[0]).Hours(), Y: sum / float64(n)})
		}
	}
	return xy
}
