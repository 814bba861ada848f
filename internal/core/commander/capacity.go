package commander

import (
	"context"
	"math"
	"time"
)

// Pool is the node pool as the Commander steers it: one cluster-wide
// capacity plan per tick, asked for early and once, rather than the burst of
// per-app pending pods a wall of autoscalers makes when demand arrives.
//
// A real cluster holds planned capacity with placeholder pods of the lowest
// priority ("balloon" or overprovisioning pods) that the node autoscaler
// provisions nodes for and that any real pod preempts at once; the
// simulator holds it with Sim.SetCapacityTarget (live.Cluster, and
// simcluster.WithPool for the in-memory hierarchy).
type Pool interface {
	// SetCapacityTarget asks the pool to hold at least cores CPU cores of
	// nodes, ready or on their way, until set again.
	SetCapacityTarget(ctx context.Context, cores float64) error
}

// Capacity is the contested pool as the cluster gives it to Regiment's
// domains: on Kubernetes the most node cores the pool may grow to less
// what others request on its nodes (pool.Watcher). ok is false while
// it is not known.
type Capacity interface {
	CapacityCores() (cores float64, ok bool)
}

// NodeCounter is the pool's nodes as the Commander observes them, the
// cluster.nodes and cluster.pending_nodes of its Observation: ready nodes,
// and nodes asked for and not ready yet (launching, or requested and not
// started). ok is false while they are not known. The Commander reads them
// from its Capacity source, else from its Pool, whichever implements it
// (pool.Watcher on Kubernetes, the simulated pool offline); without one
// both are 0.
type NodeCounter interface {
	NodeCounts() (ready, pending int, ok bool)
}

// nodeCounts is the pool's ready and pending nodes from the first of the
// Capacity source and the Pool that counts them; 0, 0 when none does.
func (c *Commander) nodeCounts() (ready, pending int) {
	if nc, ok := c.capSrc.(NodeCounter); ok {
		if r, p, ok := nc.NodeCounts(); ok {
			return r, p
		}
	}
	if nc, ok := c.pool.(NodeCounter); ok {
		if r, p, ok := nc.NodeCounts(); ok {
			return r, p
		}
	}
	return 0, 0
}

// SetCapacity makes the Commander share out src's capacity, within the
// config's capacity_cores, from the next tick on: directive cores are
// share x min(capacity_cores, src's cores), and the observation's pool is
// that size. While src does not know, or says 0, capacity_cores is the
// pool. Call it before Run.
func (c *Commander) SetCapacity(src Capacity) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.capSrc = src
}

// poolCores is the pool's size from the Capacity source, or 0.
func (c *Commander) poolCores() float64 {
	if c.capSrc == nil {
		return 0
	}
	if cores, ok := c.capSrc.CapacityCores(); ok && cores > 0 && !math.IsInf(cores, 0) {
		return cores
	}
	return 0
}

// maxPlanGrowth is the most growth within ten minutes that a plan believes:
// a forecast that rises faster, or whose +5 min median is that far from the
// rate now, is taken for a broken forecast (a young one extrapolating a few
// noisy minutes: 30x on the small world's first hour), not for a ramp worth
// paying nodes for, and plans no growth. A spike that fast is no forecast's
// to see anyway; the pending pods get their nodes as without a plan.
const maxPlanGrowth = 1.5

// PlanHold keeps a capacity plan's largest value for a while: a plan that
// falls is held at its last peak until that peak is hold old, then follows
// the plan again; a plan at or above the held value replaces it at once. It
// is the HPA's scale-down stabilisation applied to nodes: the pool keeps a
// ramp's nodes through the dips that follow it instead of removing and
// starting them again. The zero value holds nothing yet.
type PlanHold struct {
	held float64   // cores
	at   time.Time // when held was planned
}

// Apply returns the plan to ask of the pool at now for this tick's plan.
// hold <= 0 returns plan.
func (h *PlanHold) Apply(plan float64, now time.Time, hold time.Duration) float64 {
	if plan >= h.held || now.Sub(h.at) >= hold {
		h.held, h.at = plan, now
	}
	return h.held
}

// minPlanResiduals is how many of its errors a forecast must have been
// checked against, one a minute, before the plan buys nodes for its trend:
// half an hour. A younger forecast extrapolates the trend of a few noisy
// minutes (on the small world's first minutes it asked for 2.6x the cores
// in use).
const minPlanResiduals = 30

// PlanCapacity is the node cores the pool should hold for the next 15
// minutes, the capacity plan: each domain's scheduled cores scaled by its
// forecast trend, the median at +15 min over the median at +5 min (at least
// 1), summed, plus spare x that held free as a buffer that any domain's new
// replicas schedule on without waiting for a node. spare >= 0.
//
// The trend is a ratio of two medians, so the forecast's margin does not
// enter it and a flat or falling forecast plans exactly the cores in use:
// the plan adds nodes only ahead of a ramp the forecast sees, early enough
// for the provisioner (a node is ready node_provision_time after it
// starts, minutes before the ramp's replicas would have asked), and holds
// them, idle, until the ramp has come. It believes no forecast younger than
// minPlanResiduals checks nor one past maxPlanGrowth; a stale domain counts
// its last reported cores without growth. Pending replicas get their nodes
// from the pool as always. PlanCapacity is pure and does not allocate.
//
// Chosen on the training scenarios (docs/experiments.md, "A capacity
// plan"): the ratio of two p80s, or the p80 over the rate now, plans the
// forecast's margin too and cost 2-19% more at seed scale.
func PlanCapacity(o *Observation, spare float64) float64 {
	total := 0.0
	for i := range o.Domains {
		d := &o.Domains[i]
		growth := 1.0
		if !d.Stale && d.RPS > 0 && d.ForecastP50[0] > 0 && d.ForecastResiduals >= minPlanResiduals {
			near, trend := d.ForecastP50[0]/d.RPS, d.ForecastP50[1]/d.ForecastP50[0]
			if near <= maxPlanGrowth && near >= 1/maxPlanGrowth && trend <= maxPlanGrowth {
				growth = max(trend, 1)
			}
		}
		if cores := max(d.CoresUsed*growth, d.EventCores); cores >= 0 && !math.IsInf(cores, 0) {
			total += cores // NaN fails cores >= 0
		}
	}
	return total * (1 + spare)
}
