package simcluster_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// TestRegimentPolicyIsDeterministicAndServes runs the hierarchy in memory on
// the small example for two hours: it must keep apps within their SLO most of
// the time, cost less than provisioning for the peak, and repeat exactly.
func TestRegimentPolicyIsDeterministicAndServes(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../../../cmd/regiment/testdata/small-sample.hcl", cfg)
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
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	if a.SLOCompliance < 0.95 || a.ScalingActions == 0 {
		t.Fatalf("regiment on the small example: compliance %.4f, %d actions", a.SLOCompliance, a.ScalingActions)
	}
	// Provisioning for the peak: the static baseline on the same world.
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	st, err := baseline.New("static", cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	peak := s.Run(st)
	t.Logf("regiment %.1f core-hours, compliance %.4f; static %.1f core-hours", a.CostCoreHours, a.SLOCompliance, peak.CostCoreHours)
	if !(a.CostCoreHours > 0) || a.CostCoreHours >= peak.CostCoreHours {
		t.Fatalf("regiment costs %.1f core-hours, provisioning for the peak (static) %.1f: want less", a.CostCoreHours, peak.CostCoreHours)
	}
}

// TestCommanderPlansTheSimulatedPool runs the hierarchy with the pool
// (WithPool) for 30 simulated minutes: the Commander's capacity plan becomes
// the simulation's capacity target once the Soldiers have reported, and
// follows the cores in use; with capacity_plan = "off" the pool has no
// target.
func TestCommanderPlansTheSimulatedPool(t *testing.T) {
	for _, plan := range []string{"forecast", "off"} {
		t.Run(plan, func(t *testing.T) {
			cfg, s := simtest.World(t, "../../../examples/small.hcl", "../../../cmd/regiment/testdata/small-sample.hcl")
			cfg.Commander.CapacityPlan = plan
			p, err := simcluster.NewPolicy(cfg, nil, nil, simcluster.WithPool(s))
			if err != nil {
				t.Fatal(err)
			}
			step := func(ticks int) {
				for range ticks {
					p.Decide(s.Now(), s.Telemetry(), s.Targets())
					s.Step()
				}
				if p.Err() != nil {
					t.Fatal(p.Err())
				}
			}
			// The Commander's second tick, its first with the Soldiers' reports.
			step(int(cfg.Commander.Tick/cfg.Soldier.Tick) + 1)
			if got := s.CapacityTarget(); (got > 0) != (plan == "forecast") {
				t.Fatalf("capacity_plan %q: the pool's target after the second tick is %v cores", plan, got)
			}
			step(int(30 * time.Minute / cfg.Soldier.Tick))
			used := 0.0
			for _, d := range s.Telemetry().Domains {
				used += d.CoresUsed
			}
			if got := s.CapacityTarget(); plan == "forecast" && (got < 0.5*used || got > 3*used) {
				t.Fatalf("after 30 minutes the plan is %v cores for %v cores in use", got, used)
			}
		})
	}
}

// TestCommanderCountsTheSimulatedPoolsNodes runs the hierarchy on the
// small example with its pool (WithPool) for 20 simulated minutes: the
// Commander observes the pool's ready and pending nodes as the telemetry
// the policies see shows them (cluster.nodes, cluster.pending_nodes), not 0.
func TestCommanderCountsTheSimulatedPoolsNodes(t *testing.T) {
	cfg, s := simtest.World(t, "../../../examples/small.hcl", "../../../cmd/regiment/testdata/small-sample.hcl")
	p, err := simcluster.NewPolicy(cfg, nil, nil, simcluster.WithPool(s))
	if err != nil {
		t.Fatal(err)
	}
	for range int(20 * time.Minute / cfg.Soldier.Tick) {
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	o, _ := p.Commander().Decide(s.Now())
	c := s.Telemetry().Cluster
	if o.Cluster.Nodes == 0 || o.Cluster.Nodes != int(c.Nodes) || o.Cluster.PendingNodes != int(c.ProvisioningNodes+c.QueuedNodes) {
		t.Fatalf("the Commander observes %d nodes, %d pending; the telemetry shows %d ready, %d provisioning, %d queued",
			o.Cluster.Nodes, o.Cluster.PendingNodes, c.Nodes, c.ProvisioningNodes, c.QueuedNodes)
	}
}

// TestRecommendModeLeavesTheWorldToItsHPAs runs the hierarchy with every
// domain in recommend mode for two hours: its Soldiers write nothing, so the
// cluster's own HPAs (baseline.ClusterHPA) are all that scale the apps, and
// the run is the hpa baseline's to the last figure. With one domain in
// recommend mode, the others still scale by Regiment: the run differs from
// both.
func TestRecommendModeLeavesTheWorldToItsHPAs(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../../../cmd/regiment/testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc.Duration = 2 * time.Hour
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	run := func(p func(s *sim.Sim) sim.Policy) sim.Metrics {
		s, err := sim.New(cfg, sc, traces)
		if err != nil {
			t.Fatal(err)
		}
		return s.Run(p(s))
	}
	regiment := func(s *sim.Sim) sim.Policy {
		p, err := simcluster.NewPolicy(cfg, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	hpa := run(func(s *sim.Sim) sim.Policy { return baseline.NewHPA(cfg, baseline.DefaultHPASettings(cfg)) })
	active := run(regiment)

	cfg.Soldier.Mode = domains.ModeRecommend
	all := run(regiment)
	if !reflect.DeepEqual(all, hpa) {
		t.Fatalf("every domain in recommend mode:\n%+v\nthe hpa baseline:\n%+v", all, hpa)
	}
	cfg.Soldier.Mode = domains.ModeActive
	cfg.Domains[0].Mode = domains.ModeShadow // the alias
	one := run(regiment)
	if reflect.DeepEqual(one, hpa) || reflect.DeepEqual(one, active) || one.ScalingActions == 0 {
		t.Fatalf("one domain in recommend mode: %+v\nequals the hpa's %+v or regiment's %+v", one, hpa, active)
	}
}

// cutWatch wraps Regiment's policy and keeps, per domain, the smallest sum of
// targets over its first ticks relative to the sum it started with.
type cutWatch struct {
	p        *simcluster.Policy
	apps     []int // domain of each app id
	start    []float64
	min      []float64
	ticks    int
	maxTicks int
}

// firstTick keeps the Commander's first record.
type firstTick struct {
	r    commander.Record
	seen bool
}

func (f *firstTick) Record(r commander.Record) {
	if !f.seen {
		f.r, f.seen = r, true
	}
}

func (w *cutWatch) Decide(now time.Time, t *sim.Telemetry, targets []int32) {
	sums := func() []float64 {
		s := make([]float64, len(w.min))
		for id, d := range w.apps {
			s[d] += float64(targets[id])
		}
		return s
	}
	if w.start == nil {
		w.start = sums()
	}
	w.p.Decide(now, t, targets)
	if w.ticks < w.maxTicks {
		for d, v := range sums() {
			w.min[d] = min(w.min[d], v/w.start[d])
		}
	}
	w.ticks++
}

// TestRegimentStartsWithoutCutting starts Regiment on the seed-scale cluster
// sized for its load, as it would start on a running cluster: the
// Commander's first tick comes on the Soldiers' first reports, and in the
// first three minutes no domain loses more than 5% of its replicas. When the
// Commander ticked first and directed domains it had not heard from, every
// domain got a budget of its floor and the data domain was cut to under half.
func TestRegimentStartsWithoutCutting(t *testing.T) {
	cfg, s := simtest.WorldFor(t, "../../../examples/seedscale.hcl", "../../../examples/scenarios/seed/train/postmortem.hcl", 3*time.Minute)
	start := s.Now()
	first := &firstTick{}
	p, err := simcluster.NewPolicy(cfg, first, nil, simcluster.WithPool(s))
	if err != nil {
		t.Fatal(err)
	}
	w := &cutWatch{p: p, min: make([]float64, len(cfg.Domains)), maxTicks: 18}
	for i := range w.min {
		w.min[i] = 1
	}
	for _, a := range cfg.Apps() {
		w.apps = append(w.apps, a.Domain)
	}
	s.Run(w)
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if !first.seen || len(first.r.Stale) > 0 || !first.r.At.Equal(start) {
		t.Errorf("the Commander's first tick at %v found %v without a report; want one at the start, on every domain's report",
			first.r.At, first.r.Stale)
	}
	for d, m := range w.min {
		if m < 0.95 {
			t.Errorf("%s fell to %.2f of its replicas in Regiment's first three minutes", cfg.Domains[d].Name, m)
		}
	}
}
