package commander

import (
	"context"
	"math"
)

// Pool is the node pool as the Commander steers it: one cluster-wide
// capacity plan per tick, asked for early and once, rather than the burst of
// per-app pending pods a wall of autoscalers makes when demand arrives.
//
// A real cluster holds planned capacity with placeholder pods of the lowest
// priority ("balloon" or overprovisioning pods) that the node autoscaler
// provisions nodes for and that any real pod preempts at once; the
// simulator holds it with Sim.SetCapacityTarget (simcluster.Cluster).
type Pool interface {
	// SetCapacityTarget asks the pool to hold at least cores CPU cores of
	// nodes, ready or on their way, until set again.
	SetCapacityTarget(ctx context.Context, cores float64) error
}

// maxPlanGrowth bounds the growth a plan provisions for ahead of demand:
// a forecast that triples within ten minutes is more likely an artefact of
// a short history than a ramp worth paying nodes for.
const maxPlanGrowth = 3

// PlanCapacity is the node cores the pool should hold for the next 15
// minutes, the capacity plan: each domain's scheduled cores scaled by its
// forecast trend, the p80 at +15 min over the p80 at +5 min (within [1,
// maxPlanGrowth]), summed, plus spare x that held free as a buffer that any
// domain's new replicas schedule on without waiting for a node. spare >= 0.
//
// The trend is a ratio of two forecasts of the same quantile, so the
// forecast's own margin cancels and a flat or falling forecast plans
// exactly the cores in use: the plan adds nodes only ahead of a ramp the
// forecast sees, early enough for the provisioner (a node is ready in
// node_provision_time, minutes before the ramp's replicas are), and it
// holds them, idle, until the ramp has come. Pending replicas get their
// nodes from the pool as always; a stale domain counts its last reported
// cores without growth. PlanCapacity is pure and does not allocate.
//
// Chosen on the seed-scale training scenarios (docs/experiments.md,
// "A capacity plan"): planning the p80 at +15 min over today's rate, or
// the Soldiers' demand rather than their scheduled cores, cost 17-19% more
// than the HPA and doubled node churn.
func PlanCapacity(o *Observation, spare float64) float64 {
	total := 0.0
	for i := range o.Domains {
		d := &o.Domains[i]
		growth := 1.0
		if !d.Stale && d.ForecastP80[0] > 0 {
			growth = min(max(d.ForecastP80[1]/d.ForecastP80[0], 1), maxPlanGrowth)
		}
		if cores := d.CoresUsed * growth; cores >= 0 && !math.IsInf(cores, 0) {
			total += cores // NaN fails cores >= 0
		}
	}
	return total * (1 + spare)
}
