package simcluster_test

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/trace"
	"github.com/regimentd/regiment/simcluster"
)

// TestRegimentPolicyIsDeterministicAndServes runs the hierarchy in memory on
// the small example for two hours: it must keep apps within their SLO most of
// the time, cost less than provisioning for the peak, and repeat exactly.
func TestRegimentPolicyIsDeterministicAndServes(t *testing.T) {
	cfg, err := config.LoadFile("../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../cmd/regiment/testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = 2 * time.Hour
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	run := func() sim.Metrics {
		s, err := sim.New(cfg, sc, traces)
		if err != nil {
			t.Fatal(err)
		}
		p, err := simcluster.NewPolicy(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := s.Run(p)
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
		return m
	}
	a, b := run(), run()
	if a.CostCoreHours != b.CostCoreHours || a.BreachAppMinutes != b.BreachAppMinutes || a.ScalingActions != b.ScalingActions {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.SLOCompliance < 0.95 || a.ScalingActions == 0 {
		t.Fatalf("regiment on the small example: compliance %.4f, %d actions", a.SLOCompliance, a.ScalingActions)
	}
}
