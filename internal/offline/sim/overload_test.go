package sim

import (
	"slices"
	"testing"
	"time"
)

// TestOverloads: d/b held to max_replicas 4 (800 rps of servers) gets the
// calls of 500 rps before the step 20 minutes in and of 2000 after it, more
// than 98% of its ceiling serves: Overloads
// names it alone before the run, with a peak past its ceiling after the
// step, for no more minutes than the run then breaches it at its ceiling;
// and asking changes nothing of the run.
func TestOverloads(t *testing.T) {
	cfg, sc, tr := world(4000, 2000, false)
	cfg.Domains[0].AppSets = slices.Clone(cfg.Domains[0].AppSets)
	cfg.Domains[0].AppSets[1].MaxReplicas = 4
	run := func(ask bool) ([]Overload, Metrics) {
		s := mustNew(t, cfg, sc, tr)
		var got []Overload
		if ask {
			got = s.Overloads()
		}
		for !s.Done() {
			s.targets[2] = 4 // d/b at its ceiling
			s.Step()
		}
		return got, s.Metrics()
	}
	got, m := run(true)
	if len(got) != 1 || got[0].App != "d/b" || got[0].MaxReplicas != 4 {
		t.Fatalf("overloads %+v, want d/b alone", got)
	}
	o := got[0]
	if o.PeakReplicas <= 4 || o.PeakAt < 20*time.Minute || o.Minutes < 35 || o.Minutes > 41 {
		t.Errorf("d/b %+v: want a peak past 4 replicas after the step at 20 min, for about the 40 minutes after it", o)
	}
	if len(m.CeilingBound) != 1 || m.CeilingBound[0].BreachAppMinutes < o.Minutes {
		t.Errorf("the run breached at the ceiling %+v, fewer minutes than the %.1f overloaded", m.CeilingBound, o.Minutes)
	}
	if _, plain := run(false); plain.SimSeconds != m.SimSeconds || plain.BreachAppMinutes != m.BreachAppMinutes || plain.CostCoreHours != m.CostCoreHours {
		t.Errorf("asking for the overloads changed the run: %+v, without %+v", m, plain)
	}

	cfg.Domains[0].AppSets[1].MaxReplicas = 100
	if got := mustNew(t, cfg, sc, tr).Overloads(); got == nil || len(got) != 0 {
		t.Errorf("overloads %+v with room to spare, want [] (not nil)", got)
	}
}
