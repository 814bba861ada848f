package sim

import (
	"math"
	"testing"
)

// TestSetDemandDrivesArrivals pins the replay hook: external rates replace
// the trace from the next step, callers' calls are added at call_ratio, and
// the rates hold until set again.
func TestSetDemandDrivesArrivals(t *testing.T) {
	cfg, sc, tr := world(400, 400, false)
	sc.Noise = 0
	cfg.Domains[0].AppSets[0].CallRatio = 0.5
	s := mustNew(t, cfg, sc, tr)
	if err := s.SetDemand([]float64{120, 80, 30}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s.Step()
		now := &s.tel[s.step%len(s.tel)]
		want := []float64{120, 80, 30 + 0.5*(120+80)} // a-0 and a-1 both call b
		for id, w := range want {
			if got := now.Apps[id].RPS; math.Abs(got-w) > 1e-9 {
				t.Fatalf("step %d app %d: rps %v, want %v", s.step, id, got, w)
			}
		}
	}
}

func TestSetDemandRejectsBadRates(t *testing.T) {
	cfg, sc, tr := world(400, 400, true)
	s := mustNew(t, cfg, sc, tr)
	for _, rps := range [][]float64{{1, 2}, {1, 2, -1}, {1, math.NaN(), 2}, {1, 2, math.Inf(1)}} {
		if err := s.SetDemand(rps); err == nil {
			t.Errorf("SetDemand(%v) accepted", rps)
		}
	}
}

func BenchmarkSetDemand(b *testing.B) {
	cfg, sc, tr := world(400, 400, true)
	s := mustNew(b, cfg, sc, tr)
	rps := []float64{100, 100, 50}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.SetDemand(rps); err != nil {
			b.Fatal(err)
		}
	}
}
