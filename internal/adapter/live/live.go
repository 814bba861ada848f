package live

import (
	"context"
	"fmt"
	"sync"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Cluster is a simulation shared by the Soldiers of every domain.
type Cluster struct {
	mu      sync.Mutex
	s       *sim.Sim
	first   []int // first app id per domain
	count   []int // apps per domain
	written int   // replica writes applied
	// hpa is the cluster's own HPAs on the apps of recommend-mode domains
	// (nil: none), which move them as Step begins.
	hpa     *baseline.ClusterHPA
	bounds  [][2]int32           // per app id, min and max replicas: its HPA's bounds
	callers [][][]soldier.Caller // per domain and app, its callers
}

// New wraps s, a simulation of cfg. The apps of domains in recommend mode
// (or shadow) are scaled by the cluster's own HPAs (baseline.ClusterHPA), as
// on a real cluster where their Soldier writes nothing.
func New(s *sim.Sim, cfg *domains.Config) *Cluster {
	c := &Cluster{s: s, first: make([]int, len(cfg.Domains)), count: make([]int, len(cfg.Domains)),
		hpa: baseline.NewClusterHPA(cfg), bounds: make([][2]int32, cfg.AppCount())}
	for i := range c.first {
		c.first[i] = -1
	}
	for _, a := range cfg.Apps() {
		if c.first[a.Domain] < 0 {
			c.first[a.Domain] = a.ID
		}
		c.count[a.Domain]++
		c.bounds[a.ID] = [2]int32{int32(a.MinReplicas), int32(a.MaxReplicas)}
	}
	for di := range cfg.Domains {
		c.callers = append(c.callers, soldier.Callers(cfg, di))
	}
	return c
}

// Domain is the view of one domain: an Observer and an Actuator.
func (c *Cluster) Domain(di int) *Domain { return &Domain{c: c, di: di} }

// Step lets the cluster's own HPAs act, if any, and advances the simulation
// one tick.
func (c *Cluster) Step() {
	c.mu.Lock()
	c.hpa.Act(c.s.Now(), c.s.Telemetry(), c.s.Targets())
	c.s.Step()
	c.mu.Unlock()
}

// Sim runs fn with the simulation locked.
func (c *Cluster) Sim(fn func(s *sim.Sim)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn(c.s)
}

// SetCapacityTarget implements commander.Pool on the simulation's pool
// (Sim.SetCapacityTarget), for a Commander that plans capacity.
func (c *Cluster) SetCapacityTarget(_ context.Context, cores float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s.SetCapacityTarget(cores)
}

// NodeCounts implements commander.NodeCounter on the simulation's pool
// (Sim.NodeCounts), for the Commander's observation.
func (c *Cluster) NodeCounts() (ready, pending int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ready, pending = c.s.NodeCounts()
	return ready, pending, true
}

// Writes is how many replica writes Soldiers applied.
func (c *Cluster) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written
}

// Domain is one domain's Observer and Actuator on the shared simulation.
type Domain struct {
	c  *Cluster
	di int
}

// Observe implements soldier.Observer: metrics are the simulation's lagged
// telemetry; Replicas is the target in force now, as a workload's spec is;
// HPAMin and HPAMax are the bounds of the app's HPA where the cluster's own
// HPAs scale it.
func (d *Domain) Observe(_ context.Context, obs *soldier.Observation) error {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.s.Telemetry()
	first, n := c.first[d.di], c.count[d.di]
	if len(obs.Apps) != n {
		return fmt.Errorf("observation has %d apps, domain has %d", len(obs.Apps), n)
	}
	targets := c.s.Targets()
	rps := func(id int) float64 { return t.Apps[id].RPS }
	for i := range n {
		a := &t.Apps[first+i]
		obs.Apps[i] = soldier.AppObservation{
			RPS: a.RPS, CallerRPS: soldier.CallerRPS(c.callers[d.di][i], rps),
			P99: a.P99, ErrorRate: a.ErrorRate, CPUUtil: a.CPURequestUtil,
			Ready: a.Ready, Starting: a.Starting, Pending: a.Pending, Replicas: targets[first+i],
		}
		if c.hpa.Scales(first + i) {
			obs.Apps[i].HPAMin, obs.Apps[i].HPAMax = c.bounds[first+i][0], c.bounds[first+i][1]
		}
	}
	obs.P99, obs.ErrorRate = t.DomainP99(d.di), t.Domains[d.di].ErrorRate
	return nil
}

// Apply implements soldier.Actuator: every change or, when one names an app
// the domain does not have, none.
func (d *Domain) Apply(_ context.Context, changes []soldier.Change) error {
	c := d.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range changes {
		if ch.App < 0 || ch.App >= c.count[d.di] {
			return fmt.Errorf("app index %d out of range for domain %d (%d apps): nothing applied", ch.App, d.di, c.count[d.di])
		}
	}
	targets := c.s.Targets()
	for _, ch := range changes {
		targets[c.first[d.di]+ch.App] = ch.Replicas
		c.written++
	}
	return nil
}
