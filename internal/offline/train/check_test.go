package train

import (
	"math/rand/v2"
	"testing"
)

func TestCheckFlagsATermThatMovesWithRewardButNoOutcome(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var eps []Episode
	for range 2000 {
		comp := 0.9 + 0.1*r.Float64()
		gamed := r.Float64()          // drives the reward, unrelated to outcomes
		honest := comp*10 - 9         // tracks compliance
		wasteful := 0.5 + r.Float64() // rises with cost
		cost := 10 + 10*wasteful
		eps = append(eps, Episode{Steps: 1, Return: gamed + honest + wasteful, Terms: []float64{gamed, honest, wasteful, 1},
			Compliance: comp, CostCoreHours: cost, Actions: 3})
	}
	rep := Check("test", []string{"gamed", "honest", "wasteful", "constant"}, eps)
	want := map[string]bool{"gamed": true, "honest": false, "wasteful": true, "constant": false}
	for _, tc := range rep.Terms[:4] {
		if tc.Gaming != want[tc.Name] {
			t.Errorf("term %s: gaming %v, want %v (%+v)", tc.Name, tc.Gaming, want[tc.Name], tc)
		}
	}
	if !rep.Terms[3].Constant {
		t.Errorf("a constant term is not reported constant: %+v", rep.Terms[3])
	}
	if got := rep.Terms[len(rep.Terms)-1].Name; got != "total" {
		t.Errorf("last row %q, want total", got)
	}
}

func TestGatePassesOnlyAtTheDocumentedCompliance(t *testing.T) {
	for _, tt := range []struct {
		name string
		comp []float64
		pass bool
	}{
		{"mean at the gate passes", []float64{0.96, 0.98}, true},
		{"mean below the gate fails", []float64{0.96, 0.97}, false},
		{"no episodes fail", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var eps []Episode
			for _, c := range tt.comp {
				eps = append(eps, Episode{Compliance: c})
			}
			if got := SoldierGate.Check(eps).Pass; got != tt.pass {
				t.Fatalf("pass %v, want %v", got, tt.pass)
			}
		})
	}
}

// A term that sits at its bound nearly always is reported pinned, whatever
// its correlations; one that leaves it often enough is not.
func TestCheckReportsATermPinnedAtItsBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var eps []Episode
	for range 200 {
		comp := 0.9 + 0.1*r.Float64()
		pinned := -1 + 0.01*r.Float64() // -1 but for a hundredth
		moving := -0.9 * r.Float64()
		eps = append(eps, Episode{Steps: 1, Return: pinned + moving + comp, Terms: []float64{pinned, moving},
			Compliance: comp, CostCoreHours: 10, Actions: 3})
	}
	rep := Check("test", []string{"pinned", "moving"}, eps)
	if !rep.Terms[0].Pinned || rep.Terms[1].Pinned || len(rep.Pinned) != 1 || rep.Pinned[0] != "pinned" {
		t.Fatalf("pinned %v (terms %+v): want only the term at -1", rep.Pinned, rep.Terms)
	}
	if rep.Terms[len(rep.Terms)-1].Pinned {
		t.Error("the total, which has no bound, is reported pinned")
	}
}
