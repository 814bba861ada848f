package simcluster

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// TestIndependentHasNoCommander runs regiment-independent on the small
// example for an hour, handed the pool as regiment is: nothing plans the
// pool (its capacity target stays 0), and every Soldier holds a directive
// for the whole pool with no headroom, so no budget caps it and it never
// falls back to its baseline for want of a directive.
func TestIndependentHasNoCommander(t *testing.T) {
	cfg, s := simtest.World(t, "../../../examples/small.hcl", "../../../cmd/regiment/testdata/small-sample.hcl")
	p, err := NewIndependent(cfg, nil, WithPool(s))
	if err != nil {
		t.Fatal(err)
	}
	if p.Commander() != nil {
		t.Fatal("the ablation has a Commander")
	}
	for range int(time.Hour / cfg.Soldier.Tick) {
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
		if got := s.CapacityTarget(); got != 0 {
			t.Fatalf("the pool has a capacity target of %v cores", got)
		}
		for i, sol := range p.soldiers {
			d, ok := sol.Directive()
			if !ok || d.Share != 1 || d.Cores < cfg.Cluster.CapacityCores || d.Headroom != 0 {
				t.Fatalf("%s: directive %+v (in force: %v); want the whole pool, no headroom", cfg.Domains[i].Name, d, ok)
			}
		}
		s.Step()
	}
	if m := s.Metrics(); m.ScalingActions == 0 {
		t.Fatal("the Soldiers never scaled")
	}
}

// TestIndependentDiffersFromRegiment: on the seed-scale postmortem, where
// the Commander plans nodes and gives headroom, the hierarchy and its
// Soldiers alone are different policies.
func TestIndependentDiffersFromRegiment(t *testing.T) {
	if testing.Short() {
		t.Skip("seed scale")
	}
	run := func(independent bool) sim.Metrics {
		cfg, s := simtest.WorldFor(t, "../../../examples/seedscale.hcl", "../../../examples/scenarios/seed/train/postmortem.hcl", 20*time.Minute)
		var p *Policy
		var err error
		if independent {
			p, err = NewIndependent(cfg, nil, WithPool(s))
		} else {
			p, err = NewPolicy(cfg, nil, nil, WithPool(s))
		}
		if err != nil {
			t.Fatal(err)
		}
		peakTarget := 0.0
		for !s.Done() {
			p.Decide(s.Now(), s.Telemetry(), s.Targets())
			s.Step()
			peakTarget = max(peakTarget, s.CapacityTarget())
		}
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
		if (peakTarget > 0) == independent {
			t.Fatalf("independent %v: the pool's largest capacity target was %v cores", independent, peakTarget)
		}
		return s.Metrics()
	}
	reg, ind := run(false), run(true)
	if reg.CostCoreHours == ind.CostCoreHours && reg.BreachAppMinutes == ind.BreachAppMinutes {
		t.Fatalf("regiment and regiment-independent ran the same: cost %v, breaches %v", reg.CostCoreHours, reg.BreachAppMinutes)
	}
	t.Logf("regiment: cost %.0f core-h, breaches %.1f app-min, bad %.4f; independent: %.0f, %.1f, %.4f",
		reg.CostCoreHours, reg.BreachAppMinutes, reg.BadRequestRatio, ind.CostCoreHours, ind.BreachAppMinutes, ind.BadRequestRatio)
}
