package eval

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// maxPoints is the most points a line gets: longer per-minute series are
// thinned to bucket means.
const maxPoints = 1500

// plotDPI is the resolution of the PNGs.
const plotDPI = 96

// costPlotName is the file of the cost against SLO compliance scatter.
const costPlotName = "cost-vs-slo.png"

// tradeOffPlotName is the file of the whole set's cost against breaches,
// over the HPA's.
const tradeOffPlotName = "trade-off.png"

// domainPlotName is the file of a scenario's demand and replicas plot for one domain.
func domainPlotName(scenario, domain string) string {
	return fileSafe(scenario) + "-" + fileSafe(domain) + ".png"
}

// breachPlotName is the file of a scenario's breach timeline.
func breachPlotName(scenario string) string { return fileSafe(scenario) + "-breaches.png" }

// nodesPlotName is the file of a scenario's nodes over time.
func nodesPlotName(scenario string) string { return fileSafe(scenario) + "-nodes.png" }

// pendingPlotName is the file of a scenario's pending pods per tier over time.
func pendingPlotName(scenario string) string { return fileSafe(scenario) + "-pending.png" }

// fileSafe keeps letters, digits, '-', '_' and '.', and replaces the rest by '_'.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// WritePlots writes the PNG plots into dir and returns their paths: per
// scenario and domain, demand and replicas per policy over time (seed index
// 0); per scenario, breaching apps per minute, ready, provisioning and queued
// nodes, and pending pods per priority tier, each per policy; and cost
// against SLO compliance, one point per scenario x seed; and, when hpa ran,
// each policy's cost against its breaches over the whole set, over the
// HPA's (drawTradeOff).
func (r *Report) WritePlots(dir string) ([]string, error) {
	var paths []string
	save := func(name string, w, h vg.Length, draw func(draw.Canvas) error) error {
		img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(plotDPI))
		if err := draw(drawCanvas(img)); err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		path := filepath.Join(dir, name)
		if err := writeFile(path, func(out io.Writer) error {
			_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(out)
			return err
		}); err != nil {
			return err
		}
		paths = append(paths, path)
		return nil
	}
	for _, sc := range r.Scenarios {
		sampled := r.sampled(sc.Name)
		if len(sampled) == 0 {
			continue
		}
		for di, d := range sampled[0].series.Domains {
			err := save(domainPlotName(sc.Name, d.Name), 10*vg.Inch, 7*vg.Inch, func(c draw.Canvas) error {
				return r.drawDomain(c, sc.Name, sampled, di)
			})
			if err != nil {
				return paths, err
			}
		}
		err := save(breachPlotName(sc.Name), 10*vg.Inch, 5*vg.Inch, func(c draw.Canvas) error {
			return r.drawBreaches(c, sc.Name, sampled)
		})
		if err != nil {
			return paths, err
		}
		err = save(nodesPlotName(sc.Name), 10*vg.Inch, 9*vg.Inch, func(c draw.Canvas) error {
			return r.drawNodes(c, sc.Name, sampled)
		})
		if err != nil {
			return paths, err
		}
		rows := max(1, len(r.Tiers))
		err = save(pendingPlotName(sc.Name), 10*vg.Inch, vg.Length(max(5, 2.4*float64(rows)+0.6))*vg.Inch, func(c draw.Canvas) error {
			return r.drawPending(c, sc.Name, sampled)
		})
		if err != nil {
			return paths, err
		}
	}
	if err := save(costPlotName, 9*vg.Inch, 6*vg.Inch, r.drawCost); err != nil {
		return paths, err
	}
	if hpa := r.Total(refHPA); hpa != nil && hpa.CostCoreHours > 0 && hpa.BreachAppMinutes > 0 {
		err := save(tradeOffPlotName, 9*vg.Inch, 6*vg.Inch, func(c draw.Canvas) error { return r.drawTradeOff(c, hpa) })
		return paths, err
	}
	return paths, nil
}

func drawCanvas(img *vgimg.Canvas) draw.Canvas {
	c := draw.New(img)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	return c
}

// sampled lists the scenario's runs with a series, in policy order.
func (r *Report) sampled(scenario string) []*RunResult {
	var out []*RunResult
	for _, pol := range r.Policies {
		if x := r.Run(scenario, pol, 0); x != nil && x.series != nil {
			out = append(out, x)
		}
	}
	return out
}

// policyColor is the colour of a policy in every plot.
func (r *Report) policyColor(policy string) color.Color {
	for i, p := range r.Policies {
		if p == policy {
			return plotutil.DarkColors[i%len(plotutil.DarkColors)]
		}
	}
	return color.Black
}

// hours thins a per-minute series to at most maxPoints bucket means, with x in
// hours from the scenario start.
func hours(v []float64) plotter.XYs {
	step := max(1, (len(v)+maxPoints-1)/maxPoints)
	xy := make(plotter.XYs, 0, len(v)/step+1)
	for k := 0; k < len(v); k += step {
		end := min(k+step, len(v))
		sum := 0.0
		for _, x := range v[k:end] {
			sum += x
		}
		xy = append(xy, plotter.XY{X: float64(k+end) / 2 / 60, Y: sum / float64(end-k)})
	}
	return xy
}

func addLine(p *plot.Plot, name string, xy plotter.XYs, c color.Color) error {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(1.2)
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Y.Tick.Marker = plot.TickerFunc(roundTicks)
	p.Add(plotter.NewGrid())
	return p
}

// roundTicks labels about five round values (1, 2 or 5 x 10^k apart) over
// [lo, hi], compactly: 1500, 20k, 1.5M.
func roundTicks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: compact(lo)}}
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: compact(v)})
		ticks = append(ticks, plot.Tick{Value: v + step/2}) // minor
	}
	return ticks
}

// compact formats v with k and M suffixes and at most 3 significant digits.
func compact(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	case a < 1e-9:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// timeAxis spans x over [0, span] hours with ticks on round hours, and leaves
// room above the data for legend lines of legend entries.
func timeAxis(p *plot.Plot, span float64, legend int) {
	p.X.Min, p.X.Max = 0, span
	step := 1.0
	for _, s := range []float64{1, 2, 3, 6, 12, 24, 48, 168} {
		if step = s; span/s <= 12 {
			break
		}
	}
	p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		var ticks []plot.Tick
		for h := 0.0; h <= hi+1e-9; h += step {
			if h >= lo-1e-9 {
				ticks = append(ticks, plot.Tick{Value: h, Label: strconv.FormatFloat(h, 'f', -1, 64)})
			}
		}
		return ticks
	})
	p.Y.Max = math.Max(p.Y.Max*(1.1+0.07*float64(legend)), 1)
}

// drawDomain draws domain di's demand (the same for every policy of a seed)
// above each policy's replicas.
func (r *Report) drawDomain(c draw.Canvas, scenario string, runs []*RunResult, di int) error {
	name := runs[0].series.Domains[di].Name
	top := newPlot(fmt.Sprintf("%s: %s demand (seed %d)", scenario, name, runs[0].Seed), "", "requests/s")
	if err := addLine(top, "demand", hours(runs[0].series.Domains[di].RPS), color.Black); err != nil {
		return err
	}
	bottom := newPlot(fmt.Sprintf("%s: %s replicas (ready, starting and pending)", scenario, name), "hours from scenario start", "replicas")
	for _, x := range runs {
		if err := addLine(bottom, x.Policy, hours(x.series.Domains[di].Replicas), r.policyColor(x.Policy)); err != nil {
			return err
		}
	}
	span := float64(runs[0].series.Minutes) / 60
	timeAxis(top, span, 1)
	timeAxis(bottom, span, len(runs))
	plots := [][]*plot.Plot{{top}, {bottom}}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6),
		PadRight: vg.Points(12), PadY: vg.Points(12)}
	canvases := plot.Align(plots, tiles, c)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	return nil
}

// drawBreaches draws the apps in breach per minute, per policy.
func (r *Report) drawBreaches(c draw.Canvas, scenario string, runs []*RunResult) error {
	p := newPlot(fmt.Sprintf("%s: apps in breach of their SLO (seed %d, per-minute mean)", scenario, runs[0].Seed),
		"hours from scenario start", "apps in breach")
	for _, x := range runs {
		total := make([]float64, x.series.Minutes)
		for _, d := range x.series.Domains {
			for k, v := range d.BreachedApps {
				total[k] += v
			}
		}
		if err := addLine(p, x.Policy, hours(total), r.policyColor(x.Policy)); err != nil {
			return err
		}
	}
	timeAxis(p, float64(runs[0].series.Minutes)/60, len(runs))
	p.Draw(padded(c))
	return nil
}

// DrawStack draws plots one above the other on c, sharing the time axis.
func DrawStack(c draw.Canvas, plots []*plot.Plot) {
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6),
		PadRight: vg.Points(12), PadY: vg.Points(12)}
	canvases := plot.Align(rows, tiles, c)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
}

// drawNodes draws the pool's ready nodes, provisioning nodes and queued node
// requests per minute, one panel each, one line per policy.
func (r *Report) drawNodes(c draw.Canvas, scenario string, runs []*RunResult) error {
	panels := []struct {
		title string
		of    func(*ClusterSeries) []float64
	}{
		{"ready nodes", func(s *ClusterSeries) []float64 { return s.Nodes }},
		{"provisioning nodes (started, not yet ready)", func(s *ClusterSeries) []float64 { return s.Provisioning }},
		{"queued node requests (waiting for the provisioner)", func(s *ClusterSeries) []float64 { return s.Queued }},
	}
	span := float64(runs[0].series.Minutes) / 60
	var plots []*plot.Plot
	for k, panel := range panels {
		title := fmt.Sprintf("%s: %s", scenario, panel.title)
		if k == 0 {
			title += fmt.Sprintf(" (seed %d, per-minute mean)", runs[0].Seed)
		}
		xLabel := ""
		if k == len(panels)-1 {
			xLabel = "hours from scenario start"
		}
		p := newPlot(title, xLabel, "nodes")
		for _, x := range runs {
			if err := addLine(p, x.Policy, hours(panel.of(&x.series.Cluster)), r.policyColor(x.Policy)); err != nil {
				return err
			}
		}
		timeAxis(p, span, len(runs))
		plots = append(plots, p)
	}
	DrawStack(c, plots)
	return nil
}

// drawPending draws the pending pods of each priority tier per minute, one
// panel per tier, one line per policy.
func (r *Report) drawPending(c draw.Canvas, scenario string, runs []*RunResult) error {
	span := float64(runs[0].series.Minutes) / 60
	var plots []*plot.Plot
	for k, t := range r.Tiers {
		title := fmt.Sprintf("%s: P%d (%s) pending pods", scenario, t.Tier, strings.Join(t.Domains, ", "))
		if k == 0 {
			title += fmt.Sprintf(" (seed %d, per-minute mean)", runs[0].Seed)
		}
		xLabel := ""
		if k == len(r.Tiers)-1 {
			xLabel = "hours from scenario start"
		}
		p := newPlot(title, xLabel, "pending pods")
		for _, x := range runs {
			total := make([]float64, x.series.Minutes)
			for _, d := range x.series.Domains {
				if !slices.Contains(t.Domains, d.Name) {
					continue
				}
				for m, v := range d.Pending {
					total[m] += v
				}
			}
			if err := addLine(p, x.Policy, hours(total), r.policyColor(x.Policy)); err != nil {
				return err
			}
		}
		timeAxis(p, span, len(runs))
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return fmt.Errorf("no priority tier to plot")
	}
	DrawStack(c, plots)
	return nil
}

// drawCost draws cost against SLO compliance, one point per scenario x seed:
// colour is the policy, shape the scenario.
func (r *Report) drawCost(c draw.Canvas) error {
	p := newPlot("cost against SLO compliance (one point per scenario x seed)", "SLO compliance (share of app-ticks)", "cost (node core-hours)")
	p.Legend.Top, p.Legend.Left = false, true
	for si, sc := range r.Scenarios {
		for _, pol := range r.Policies {
			var xy plotter.XYs
			for k := range r.Seeds {
				if x := r.Run(sc.Name, pol, k); x != nil {
					xy = append(xy, plotter.XY{X: x.SLOCompliance, Y: x.CostCoreHours})
				}
			}
			if len(xy) == 0 {
				continue
			}
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: r.policyColor(pol), Radius: vg.Points(5), Shape: plotutil.Shape(si)}
			p.Add(s)
		}
	}
	pad := math.Max(p.X.Max-p.X.Min, 0.002) * 0.05
	p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	p.Y.Max *= 1.05
	for _, pol := range r.Policies {
		p.Legend.Add(pol, legendGlyph{draw.GlyphStyle{Color: r.policyColor(pol), Radius: vg.Points(4), Shape: draw.CircleGlyph{}}})
	}
	for si, sc := range r.Scenarios {
		p.Legend.Add(sc.Name, legendGlyph{draw.GlyphStyle{Color: color.Gray{Y: 90}, Radius: vg.Points(4), Shape: plotutil.Shape(si)}})
	}
	p.Draw(padded(c))
	return nil
}

// drawTradeOff draws each policy's cost against its breach app-minutes
// over the whole set (Totals), both over hpa's, the breaches on a log
// scale: one labelled point per policy, the points of a family of bounds
// (names that differ after their last '+' or '@', such as oracle-now+10
// and oracle-now+30) joined by a line, and dashed lines at the HPA's
// figures, so that the quadrant below and left of them is where a policy
// beats it on both. A policy without breaches is drawn at half the
// smallest ratio of the others, its label marked "(0)".
func (r *Report) drawTradeOff(c draw.Canvas, hpa *Total) error {
	p := newPlot("cost against breaches over the whole set, over the HPA's", "breach app-minutes (x hpa, log scale)", "cost (x hpa)")
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	floor := 1.0
	for i := range r.Totals {
		if b := r.Totals[i].BreachAppMinutes / hpa.BreachAppMinutes; b > 0 {
			floor = min(floor, b/2)
		}
	}
	pts := make(plotter.XYs, len(r.Totals))
	labels := make([]string, len(r.Totals))
	families := map[string][]plotter.XY{}
	var order []string // families in policy order
	for i := range r.Totals {
		t := &r.Totals[i]
		pts[i] = plotter.XY{X: max(t.BreachAppMinutes/hpa.BreachAppMinutes, floor), Y: t.CostCoreHours / hpa.CostCoreHours}
		labels[i] = t.Policy
		if t.BreachAppMinutes == 0 {
			labels[i] += " (0)"
		}
		if k := strings.LastIndexAny(t.Policy, "+@"); k > 0 {
			f := t.Policy[:k]
			if _, ok := families[f]; !ok {
				order = append(order, f)
			}
			families[f] = append(families[f], pts[i])
		}
	}
	for _, f := range order {
		xy := families[f]
		if len(xy) < 2 {
			continue
		}
		slices.SortFunc(xy, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, err := plotter.NewLine(plotter.XYs(xy))
		if err != nil {
			return err
		}
		l.Color = color.Gray{Y: 150}
		p.Add(l)
	}
	for i := range r.Totals {
		s, err := plotter.NewScatter(pts[i : i+1])
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: r.policyColor(r.Totals[i].Policy), Radius: labelGlyph - 1, Shape: draw.CircleGlyph{}}
		p.Add(s)
	}
	p.Add(spreadLabels{pts: pts, labels: labels, style: text.Style{
		Font: font.From(plotter.DefaultFont, plotter.DefaultFontSize), Handler: plot.DefaultTextHandler}})
	lo, hi := 1.0, 1.0 // the HPA's point, and every policy's
	for _, pt := range pts {
		lo, hi = min(lo, pt.X), max(hi, pt.X)
	}
	p.X.Min, p.X.Max = lo/1.5, hi*3 // room for the labels on the right
	ylo, yhi := 1.0, 1.0
	for _, pt := range pts {
		ylo, yhi = min(ylo, pt.Y), max(yhi, pt.Y)
	}
	pad := math.Max(yhi-ylo, 0.02) * 0.08
	p.Y.Min, p.Y.Max = ylo-pad, yhi+pad
	for _, ref := range []plotter.XYs{{{X: 1, Y: p.Y.Min}, {X: 1, Y: p.Y.Max}}, {{X: p.X.Min, Y: 1}, {X: p.X.Max, Y: 1}}} {
		l, err := plotter.NewLine(ref)
		if err != nil {
			return err
		}
		l.Color, l.Dashes = color.Gray{Y: 60}, []vg.Length{vg.Points(5), vg.Points(4)}
		p.Add(l)
	}
	p.Draw(padded(c))
	return nil
}

// spreadLabels draws a label beside each point where placeLabels puts it,
// so that points close together stay readable.
type spreadLabels struct {
	pts    plotter.XYs
	labels []string // one per point
	style  text.Style
}

// Plot implements plot.Plotter.
func (l spreadLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	at := make([]vg.Point, len(l.pts))
	size := make([]vg.Point, len(l.pts))
	for i, pt := range l.pts {
		at[i] = vg.Point{X: trX(pt.X), Y: trY(pt.Y)}
		size[i] = vg.Point{X: l.style.Width(l.labels[i]), Y: l.style.Height(l.labels[i])}
	}
	for i, box := range placeLabels(at, size, c.Rectangle) {
		c.FillText(l.style, box.Min, l.labels[i])
	}
}

// placeLabels places a label of size[i] beside each point at[i], in order,
// on the first side (right, below, above, left) where it stays
// within bounds and overlaps neither a label placed before it nor another
// point (a glyph of labelGlyph's half size); on the right when no side is
// free. It returns each label's box.
func placeLabels(at, size []vg.Point, bounds vg.Rectangle) []vg.Rectangle {
	r := vg.Point{X: labelGlyph, Y: labelGlyph}
	taken := make([]vg.Rectangle, len(at), 2*len(at)) // the points, then the labels placed
	for i, pt := range at {
		taken[i] = vg.Rectangle{Min: pt.Sub(r), Max: pt.Add(r)}
	}
	overlaps := func(a, b vg.Rectangle) bool {
		return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
	}
	boxes := make([]vg.Rectangle, len(at))
	for i, pt := range at {
		w, h := size[i].X, size[i].Y
		gap := vg.Points(7)
		sides := []vg.Point{{X: gap, Y: -h / 3}, {X: 0, Y: -labelGlyph - h}, {X: 0, Y: labelGlyph}, {X: -gap - w, Y: -h / 3}}
		boxAt := func(off vg.Point) vg.Rectangle {
			lo := pt.Add(off)
			return vg.Rectangle{Min: lo, Max: lo.Add(size[i])}
		}
		boxes[i] = boxAt(sides[0])
		for _, off := range sides {
			box := boxAt(off)
			free := box.Min.X >= bounds.Min.X && box.Max.X <= bounds.Max.X && box.Min.Y >= bounds.Min.Y && box.Max.Y <= bounds.Max.Y
			for j := 0; free && j < len(taken); j++ {
				free = j == i || !overlaps(box, taken[j])
			}
			if free {
				boxes[i] = box
				break
			}
		}
		taken = append(taken, boxes[i])
	}
	return boxes
}

// labelGlyph is half the size of a point of the trade-off plot, with a
// margin: what a label keeps clear of.
const labelGlyph = vg.Length(5)

// legendGlyph is a legend thumbnail of one glyph.
type legendGlyph struct{ style draw.GlyphStyle }

func (g legendGlyph) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(g.style, c.Center())
}

// padded insets c by a few points so that labels do not touch the edge.
func padded(c draw.Canvas) draw.Canvas {
	return draw.Crop(c, vg.Points(6), -vg.Points(12), vg.Points(6), -vg.Points(6))
}
