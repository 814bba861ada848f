package sim

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// App ids of schedWorld.
const (
	p0a, p0b = 0, 1 // domain p0 (priority 0), app set a
	p1x      = 2    // domain p1 (priority 1)
	p3y      = 3    // domain p3 (priority 3)
)

// schedWorld is a full pool of one 5-core node, which may not grow, with
// replicas of one core: two P0 apps of one replica each, a P1 app of one
// and a P3 app of two, all at a trickle of demand.
func schedWorld(t *testing.T, priorityClasses bool, packingLoss float64) *Sim {
	t.Helper()
	set := func(name string, count, min int) domains.AppSet {
		return domains.AppSet{Name: name, Count: count, CPUPerReplica: 1, MinReplicas: min, MaxReplicas: 10,
			ServiceTime: 10 * time.Millisecond, Concurrency: 4}
	}
	dom := func(name string, prio int, s domains.AppSet) domains.Domain {
		return domains.Domain{Name: name, Priority: prio, SLO: domains.SLO{LatencyP99: time.Second}, AppSets: []domains.AppSet{s}}
	}
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: 5, NodeCores: 5,
			PriorityClasses: priorityClasses, PackingLoss: packingLoss},
		Domains: []domains.Domain{dom("p0", 0, set("a", 2, 1)), dom("p1", 1, set("x", 1, 1)), dom("p3", 3, set("y", 1, 2))},
	}
	cfg.Defaults()
	sc := &domains.Scenario{Name: "t", Duration: time.Hour, Seed: 1}
	tr := map[string][]trace.Series{}
	for _, d := range cfg.Domains {
		sc.Traffic = append(sc.Traffic, domains.Traffic{Domain: d.Name, Trace: "mem", Format: domains.FormatTimeseries, PeakRPS: 1})
		tr[d.Name] = []trace.Series{{Name: "mem", Values: []float64{1, 1}}}
	}
	sc.Defaults()
	return mustNew(t, cfg, sc, tr)
}

// victimWorld is a full 11-core pool: one P0 replica, and a P3 domain of a
// big app (8 replicas) and a small one (2).
func victimWorld(t *testing.T) *Sim {
	t.Helper()
	set := func(name string, min int) domains.AppSet {
		return domains.AppSet{Name: name, Count: 1, CPUPerReplica: 1, MinReplicas: min, MaxReplicas: 20,
			ServiceTime: 10 * time.Millisecond, Concurrency: 4}
	}
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: 11, NodeCores: 11, PriorityClasses: true},
		Domains: []domains.Domain{
			{Name: "p0", Priority: 0, SLO: domains.SLO{LatencyP99: time.Second}, AppSets: []domains.AppSet{set("a", 1)}},
			{Name: "p3", Priority: 3, SLO: domains.SLO{LatencyP99: time.Second}, AppSets: []domains.AppSet{set("big", 8), set("small", 2)}},
		},
	}
	cfg.Defaults()
	sc := &domains.Scenario{Name: "t", Duration: time.Hour, Seed: 1}
	tr := map[string][]trace.Series{}
	for _, d := range cfg.Domains {
		sc.Traffic = append(sc.Traffic, domains.Traffic{Domain: d.Name, Trace: "mem", Format: domains.FormatTimeseries, PeakRPS: 1})
		tr[d.Name] = []trace.Series{{Name: "mem", Values: []float64{1, 1}}}
	}
	sc.Defaults()
	return mustNew(t, cfg, sc, tr)
}

func TestPreemptionSpreadsVictimsInProportionToReplicas(t *testing.T) {
	s := victimWorld(t)
	stepWith(s, 0, 6) // five P0 replicas, no room: five victims of 10 P3 replicas
	big, small := &s.apps[1], &s.apps[2]
	if big.ready != 4 || small.ready != 1 {
		t.Errorf("P3 big app %d ready (of 8), small %d (of 2); want half of each preempted: 4 and 1", big.ready, small.ready)
	}
}

// stepWith sets app targets (id, replicas pairs) and steps once.
func stepWith(s *Sim, targets ...int32) {
	for k := 0; k < len(targets); k += 2 {
		s.Targets()[targets[k]] = targets[k+1]
	}
	s.Step()
}

func TestSchedulingIsInArrivalOrderWithoutPriorityClasses(t *testing.T) {
	s := schedWorld(t, false, 0)
	if s.pool.nodes != 1 || s.pool.scheduled != 5 {
		t.Fatalf("start: %d nodes, %g cores scheduled; want one full node", s.pool.nodes, s.pool.scheduled)
	}
	stepWith(s, p3y, 3) // a P3 replica queues first
	stepWith(s, p0a, 2) // then a P0 one
	stepWith(s, p1x, 0) // room for one
	y, a := &s.apps[p3y], &s.apps[p0a]
	if y.starting != 1 || y.pending != 0 {
		t.Errorf("P3 app: %d starting, %d pending; want its earlier replica placed", y.starting, y.pending)
	}
	if a.pending != 1 {
		t.Errorf("P0 app: %d pending; want its later replica to wait", a.pending)
	}
	m := s.Metrics()
	if m.PriorityInversions != 1 || m.P3WhileP0Waits != 1 {
		t.Errorf("inversions %d, P3 while P0 waits %d; want 1 and 1", m.PriorityInversions, m.P3WhileP0Waits)
	}
	if m.Preemptions != 0 || y.ready != 2 {
		t.Errorf("%d preemptions, P3 app %d ready; without PriorityClasses nothing is preempted", m.Preemptions, y.ready)
	}
}

func TestPreemptionEvictsTheLowestTierForAPendingP0Replica(t *testing.T) {
	s := schedWorld(t, true, 0)
	stepWith(s, p3y, 3) // P3 is the lowest tier: it preempts nobody
	if m := s.Metrics(); m.Preemptions != 0 {
		t.Fatalf("a P3 replica preempted %d replicas of higher tiers", m.Preemptions)
	}
	stepWith(s, p0a, 2) // P0 fails to fit: preemption
	y, a, x := &s.apps[p3y], &s.apps[p0a], &s.apps[p1x]
	m := s.Metrics()
	if m.Preemptions != 1 || m.Tiers[2].Preempted != 1 {
		t.Fatalf("%d preemptions (%d of P3); want exactly one P3 victim for one replica (pod-scoped)", m.Preemptions, m.Tiers[2].Preempted)
	}
	if y.ready != 1 || y.pending != 2 || x.ready != 1 {
		t.Errorf("P3 app %d ready, %d pending, P1 app %d ready; want one P3 replica evicted and recreated pending, P1 untouched", y.ready, y.pending, x.ready)
	}
	// The victim's cores are free only after its 30 s grace period: the
	// preemptor waits for them, nominated.
	s.Step()
	if a.starting != 0 || a.pending != 1 {
		t.Errorf("one tick after preempting, P0 app %d starting, %d pending; want it waiting for the victim to terminate", a.starting, a.pending)
	}
	s.Step()
	s.Step()
	if a.starting != 1 || a.pending != 0 {
		t.Errorf("after the grace period, P0 app %d starting, %d pending; want it placed", a.starting, a.pending)
	}
	if y.pending != 2 || s.Metrics().Preemptions != 1 {
		t.Errorf("P3 app %d pending, %d preemptions; want the victims still pending and no second preemption", y.pending, s.Metrics().Preemptions)
	}
}

func TestPreemptionSparesEqualPriorities(t *testing.T) {
	s := schedWorld(t, true, 0)
	stepWith(s, p3y, 0, p1x, 0, p0a, 5) // 3 cores free for 4 P0 replicas; only P0 runs
	a, b := &s.apps[p0a], &s.apps[p0b]
	if a.starting != 3 || a.pending != 1 {
		t.Errorf("P0 app a: %d starting, %d pending; want 3 placed, 1 waiting", a.starting, a.pending)
	}
	if m := s.Metrics(); m.Preemptions != 0 || b.ready != 1 {
		t.Errorf("%d preemptions, P0 app b %d ready; a replica never preempts its own tier", m.Preemptions, b.ready)
	}
}

func TestPriorityClassesScheduleByTierThenArrival(t *testing.T) {
	for _, pc := range []bool{false, true} {
		s := schedWorld(t, pc, 0)
		stepWith(s, p3y, 3)         // a P3 replica queues first
		stepWith(s, p0a, 2, p1x, 0) // a P0 one later, with room for one
		y, a := &s.apps[p3y], &s.apps[p0a]
		m := s.Metrics()
		if pc && (a.starting != 1 || y.pending != 1 || m.Preemptions != 0 || m.PriorityInversions != 0) {
			t.Errorf("with PriorityClasses: P0 %d starting, P3 %d pending, %d preemptions, %d inversions; want the P0 replica placed first, no preemption",
				a.starting, y.pending, m.Preemptions, m.PriorityInversions)
		}
		if !pc && (y.starting != 1 || a.pending != 1 || m.P3WhileP0Waits != 1) {
			t.Errorf("without PriorityClasses: P3 %d starting, P0 %d pending, %d P3-while-P0; want the earlier P3 replica placed", y.starting, a.pending, m.P3WhileP0Waits)
		}
	}
}

func TestPackingLossLeavesPartOfEachNodeUnused(t *testing.T) {
	ideal, lossy := schedWorld(t, false, 0), schedWorld(t, false, 0.2)
	if y := &ideal.apps[p3y]; y.ready != 2 || y.pending != 0 {
		t.Fatalf("ideal packing: P3 app %d ready, %d pending; want all five replicas on the 5-core node", y.ready, y.pending)
	}
	// At 20% loss the node holds 4 one-core replicas: the lowest tier's
	// second one waits.
	if y := &lossy.apps[p3y]; y.ready != 1 || y.pending != 1 {
		t.Errorf("20%% packing loss: P3 app %d ready, %d pending; want one of its replicas pending", y.ready, y.pending)
	}
	if free := lossy.Telemetry().Cluster.FreeCores; free < -1e-9 || free > 1e-9 {
		t.Errorf("free cores %g on a full node; want 0", free)
	}
	for _, s := range []*Sim{ideal, lossy} {
		stepWith(s, p1x, 0)
	}
	if y := &lossy.apps[p3y]; y.starting != 1 {
		t.Errorf("after a replica left, P3 app %d starting; want its pending one placed", y.starting)
	}
	if ci, cl := ideal.Metrics().CostCoreHours, lossy.Metrics().CostCoreHours; ci != cl {
		t.Errorf("cost %g with ideal packing, %g with a loss; the same node costs the same", ci, cl)
	}
}

func TestPreemptingStepDoesNotAllocate(t *testing.T) {
	s := schedWorld(t, true, 0)
	k := 0
	cycle := func() { // P0 and P3 rise and fall in turn: preemption every few ticks
		k++
		hi := int32(1 + k%8/4)
		stepWith(s, p0a, hi, p3y, 5-hi)
	}
	for range 50 {
		cycle()
	}
	before := s.Metrics().Preemptions
	if allocs := testing.AllocsPerRun(200, cycle); allocs != 0 {
		t.Fatalf("%.1f allocations per step", allocs)
	}
	if s.Metrics().Preemptions == before {
		t.Fatal("no preemption while measuring: the test measures nothing")
	}
}
