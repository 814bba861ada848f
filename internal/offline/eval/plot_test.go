package eval

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot/vg"
)

// Three points in a row, each label wider than the gap between them, and a
// fourth apart: the first cannot go right (the next point is there), so it
// goes below; the second neither right nor below (the first's label), so
// above; the third's right is under the second's label, so it goes below;
// the fourth has room on the right. No label overlaps another or a point,
// and each stays in bounds.
func TestPlaceLabelsKeepsLabelsApart(t *testing.T) {
	at := []vg.Point{{X: 100, Y: 100}, {X: 140, Y: 100}, {X: 180, Y: 100}, {X: 100, Y: 180}}
	size := []vg.Point{{X: 50, Y: 10}, {X: 50, Y: 10}, {X: 50, Y: 10}, {X: 50, Y: 10}}
	bounds := vg.Rectangle{Max: vg.Point{X: 400, Y: 300}}
	boxes := placeLabels(at, size, bounds)
	overlaps := func(a, b vg.Rectangle) bool {
		return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
	}
	for i, b := range boxes {
		if b.Max.X-b.Min.X != size[i].X || b.Max.Y-b.Min.Y != size[i].Y {
			t.Errorf("label %d is %v, want its size %v", i, b.Size(), size[i])
		}
		if b.Min.X < bounds.Min.X || b.Max.X > bounds.Max.X || b.Min.Y < bounds.Min.Y || b.Max.Y > bounds.Max.Y {
			t.Errorf("label %d at %v leaves the bounds", i, b)
		}
		for j := range boxes {
			if j != i && overlaps(b, boxes[j]) {
				t.Errorf("labels %d %v and %d %v overlap", i, b, j, boxes[j])
			}
			glyph := vg.Rectangle{Min: at[j].Sub(vg.Point{X: labelGlyph, Y: labelGlyph}), Max: at[j].Add(vg.Point{X: labelGlyph, Y: labelGlyph})}
			if j != i && overlaps(b, glyph) {
				t.Errorf("label %d %v covers point %d", i, b, j)
			}
		}
	}
	below := func(i int) bool { return boxes[i].Max.Y <= at[i].Y }
	if !below(0) || boxes[1].Min.Y < at[1].Y || !below(2) || boxes[3].Min.X <= at[3].X {
		t.Errorf("labels %v: want the first below its point, the second above, the third below, the fourth to the right", boxes)
	}
}

// The trade-off plot is drawn when hpa ran, and only then, since its axes
// are ratios to the HPA's.
func TestTradeOffPlotNeedsTheHPA(t *testing.T) {
	total := func(pol string, cost, breach float64) Total {
		return Total{Policy: pol, Scenarios: 1, CostCoreHours: cost, BreachAppMinutes: breach}
	}
	r := &Report{Scenarios: []ScenarioInfo{{Name: "a"}}, Policies: []string{refHPA, "b+10", "b+20", "c"},
		Totals: []Total{total(refHPA, 100, 50), total("b+10", 90, 60), total("b+20", 95, 20), total("c", 110, 0)}}
	for _, withHPA := range []bool{true, false} {
		if !withHPA {
			r.Policies, r.Totals = r.Policies[1:], r.Totals[1:]
		}
		dir := t.TempDir()
		paths, err := r.WritePlots(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(paths, filepath.Join(dir, tradeOffPlotName)); got != withHPA {
			t.Fatalf("with hpa %v: plots %v", withHPA, paths)
		}
		if withHPA {
			f, err := os.Open(filepath.Join(dir, tradeOffPlotName))
			if err != nil {
				t.Fatal(err)
			}
			_, err = png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
