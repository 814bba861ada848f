package commander

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

func TestPlanCapacity(t *testing.T) {
	// dom is a domain using used cores at 100 requests/s, with medians at
	// +5 and +15 min checked against 60 errors.
	dom := func(used, p50at5, p50at15 float64, stale bool) DomainObs {
		return DomainObs{CoresUsed: used, DemandCores: 2 * used, RPS: 100, Stale: stale, ForecastResiduals: 60,
			ForecastP50: [3]float64{p50at5, p50at15, p50at15}, ForecastP80: [3]float64{2 * p50at5, 4 * p50at15, 4 * p50at15}}
	}
	young := dom(100, 100, 120, false)
	young.ForecastResiduals = minPlanResiduals - 1
	tests := []struct {
		rule  string
		doms  []DomainObs
		spare float64
		want  float64
	}{
		{"a flat forecast plans the cores in use, not the Soldiers' demand nor the p80", []DomainObs{dom(100, 120, 120, false)}, 0, 100},
		{"a rising forecast plans ahead by its trend, +15 over +5 min", []DomainObs{dom(100, 120, 150, false)}, 0, 125},
		{"a falling forecast never plans below the cores in use", []DomainObs{dom(100, 120, 60, false)}, 0, 100},
		{"the most growth believed is planned", []DomainObs{dom(100, 100, 100*maxPlanGrowth, false)}, 0, 100 * maxPlanGrowth},
		{"a trend past the most believed is a broken forecast: no growth", []DomainObs{dom(100, 100, 1000, false)}, 0, 100},
		{"a +5 min median far above the rate now is a broken forecast", []DomainObs{dom(100, 200, 240, false)}, 0, 100},
		{"a +5 min median far below the rate now is a broken forecast", []DomainObs{dom(100, 50, 60, false)}, 0, 100},
		{"a forecast checked fewer than minPlanResiduals times plans no growth", []DomainObs{young}, 0, 100},
		{"a stale domain keeps its last cores without growth", []DomainObs{dom(100, 120, 144, true)}, 0, 100},
		{"no forecast yet is no growth", []DomainObs{dom(100, 0, 0, false)}, 0, 100},
		{"domains add up", []DomainObs{dom(100, 100, 100, false), dom(50, 100, 120, false)}, 0, 160},
		{"spare holds a share on top", []DomainObs{dom(100, 100, 100, false)}, 0.1, 110},
		{"a non-finite report counts as nothing", []DomainObs{dom(math.NaN(), 100, 100, false), dom(math.Inf(1), 100, 100, false), dom(10, 100, 100, false)}, 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			o := &Observation{Domains: tt.doms}
			if got := PlanCapacity(o, tt.spare); math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("PlanCapacity = %v, want %v", got, tt.want)
			}
		})
	}
}

// recordingPool keeps every capacity target asked of it.
type recordingPool struct{ targets []float64 }

func (p *recordingPool) SetCapacityTarget(_ context.Context, cores float64) error {
	p.targets = append(p.targets, cores)
	return nil
}

// allocationPublisher keeps the allocations it is given.
type allocationPublisher struct {
	nopPublisher
	allocs []wire.Allocation
}

func (p *allocationPublisher) PublishAllocation(_ context.Context, a wire.Allocation) error {
	p.allocs = append(p.allocs, a)
	return nil
}

func TestCommanderAsksThePoolForItsPlanEveryTick(t *testing.T) {
	for _, plan := range []string{domains.PlanForecast, domains.PlanOff} {
		t.Run(plan, func(t *testing.T) {
			cfg := testConfig()
			cfg.Commander.CapacityPlan = plan
			now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
			pub, pool := &allocationPublisher{}, &recordingPool{}
			var recs []Record
			c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, recorderFunc(func(r Record) { recs = append(recs, r) }), 1, 0)
			c.SetPool(pool)
			for i, d := range cfg.Domains {
				c.OnReport(report(cfg, d.Name, float64(100*(i+1)), 0.05, now))
			}
			if _, err := c.Tick(context.Background(), now); err != nil {
				t.Fatal(err)
			}
			if plan == domains.PlanOff {
				if len(pool.targets) != 0 || pub.allocs[0].CapacityTargetCores != 0 || recs[0].CapacityTarget != 0 {
					t.Fatalf("capacity_plan off asked the pool for %v (allocation %v, record %v)", pool.targets, pub.allocs[0].CapacityTargetCores, recs[0].CapacityTarget)
				}
				return
			}
			// No forecast history yet: the plan is the cores in use, 100+200+300.
			if len(pool.targets) != 1 || pool.targets[0] != 600 {
				t.Fatalf("pool targets %v, want [600]", pool.targets)
			}
			if pub.allocs[0].CapacityTargetCores != 600 || recs[0].CapacityTarget != 600 {
				t.Fatalf("allocation says %v, record %v; want the plan, 600", pub.allocs[0].CapacityTargetCores, recs[0].CapacityTarget)
			}
			if err := pub.allocs[0].Validate(nil); err != nil {
				t.Fatalf("the allocation with a plan is invalid: %v", err)
			}
		})
	}
}

type recorderFunc func(Record)

func (f recorderFunc) Record(r Record) { f(r) }

func TestPlanHold(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	steps := []struct {
		rule string
		min  int
		plan float64
		want float64
	}{
		{"the first plan is taken", 0, 100, 100},
		{"a higher plan replaces the held one at once", 1, 150, 150},
		{"a lower plan is held at the peak", 5, 120, 150},
		{"still held just before the peak is hold old", 10, 90, 150},
		{"once the peak is hold old the plan is followed", 11, 90, 90},
		{"a plan equal to the held one renews it", 12, 90, 90},
		{"and holds from then", 20, 80, 90},
	}
	var h PlanHold
	for _, s := range steps {
		if got := h.Apply(s.plan, at(s.min), 10*time.Minute); got != s.want {
			t.Fatalf("%s: at +%d min, plan %v: got %v, want %v", s.rule, s.min, s.plan, got, s.want)
		}
	}
	var none PlanHold
	none.Apply(150, at(0), 0)
	if got := none.Apply(90, at(1), 0); got != 90 {
		t.Fatalf("a hold of 0 holds nothing: got %v, want 90", got)
	}
}

// nodeCapacity is a pool whose size the test sets, as pool.Watcher
// follows nodes.
type nodeCapacity struct {
	cores float64
	known bool
}

func (n *nodeCapacity) CapacityCores() (float64, bool) { return n.cores, n.known }

func TestDirectiveCoresFollowTheClusterCapacity(t *testing.T) {
	cfg := testConfig()
	cfg.Cluster.CapacityCores = 1000
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		src  *nodeCapacity
		want float64 // the pool the directives share
	}{
		{"no capacity source: capacity_cores", nil, 1000},
		{"not known yet: capacity_cores", &nodeCapacity{cores: 300}, 1000},
		{"the nodes' cores", &nodeCapacity{cores: 300, known: true}, 300},
		{"capacity_cores caps the nodes", &nodeCapacity{cores: 5000, known: true}, 1000},
		{"no cores (no node matches): capacity_cores", &nodeCapacity{cores: 0, known: true}, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := &nopPublisher{}
			c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, nil, 1, 0)
			if tt.src != nil {
				c.SetCapacity(tt.src)
			}
			if _, err := c.Tick(context.Background(), now); err != nil {
				t.Fatal(err)
			}
			for _, d := range pub.directives {
				if math.Abs(d.Cores-d.Share*tt.want) > 1e-9 {
					t.Errorf("%s: cores %g for share %g, want share x %g", d.Domain, d.Cores, d.Share, tt.want)
				}
			}
			if o, _ := c.Decide(now); o.Cluster.CapacityCores != tt.want {
				t.Errorf("observed pool %g cores, want %g", o.Cluster.CapacityCores, tt.want)
			}
		})
	}
}

// countingCapacity is a Capacity that counts nodes too.
type countingCapacity struct {
	nodeCapacity
	ready, pending int
}

func (n *countingCapacity) NodeCounts() (int, int, bool) { return n.ready, n.pending, n.known }

// countingPool is a Pool that counts nodes too.
type countingPool struct {
	recordingPool
	ready, pending int
}

func (p *countingPool) NodeCounts() (int, int, bool) { return p.ready, p.pending, true }

// TestObservationCountsThePoolsNodes pins where cluster.nodes and
// cluster.pending_nodes come from: the Capacity source when it counts
// nodes and knows them, else the Pool when it counts them, else 0. (Until
// issue 33 nothing set them: every Commander observed 0 nodes.)
func TestObservationCountsThePoolsNodes(t *testing.T) {
	cfg := testConfig()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name                   string
		src                    Capacity
		pool                   Pool
		wantReady, wantPending int
	}{
		{"neither counts: 0", &nodeCapacity{cores: 300, known: true}, &recordingPool{}, 0, 0},
		{"the capacity source counts", &countingCapacity{nodeCapacity{300, true}, 12, 3}, &countingPool{ready: 99, pending: 9}, 12, 3},
		{"the source does not know yet: the pool's", &countingCapacity{nodeCapacity{300, false}, 12, 3}, &countingPool{ready: 99, pending: 9}, 99, 9},
		{"only the pool counts", nil, &countingPool{ready: 7, pending: 1}, 7, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &nopPublisher{}, nil, 1, 0)
			if tt.src != nil {
				c.SetCapacity(tt.src)
			}
			c.SetPool(tt.pool)
			o, _ := c.Decide(now)
			if o.Cluster.Nodes != tt.wantReady || o.Cluster.PendingNodes != tt.wantPending {
				t.Fatalf("observed %d nodes, %d pending; want %d, %d", o.Cluster.Nodes, o.Cluster.PendingNodes, tt.wantReady, tt.wantPending)
			}
			l := Layout(cfg)
			v := map[string]float64{}
			for i, name := range l {
				v[name] = o.Vector[i]
			}
			if v["cluster.nodes"] != float64(tt.wantReady)/1000 || v["cluster.pending_nodes"] != float64(tt.wantPending)/1000 {
				t.Errorf("features cluster.nodes %g, cluster.pending_nodes %g; want %g, %g", v["cluster.nodes"], v["cluster.pending_nodes"],
					float64(tt.wantReady)/1000, float64(tt.wantPending)/1000)
			}
		})
	}
}
