package commander

import "github.com/regimentd/regiment/internal/core/reward"

// rewardOf scores the outcome the Commander observes at a tick (the result of
// its earlier allocations) with the Commander reward terms. Cost is the pool's
// used cores against the whole pool, the cost of provisioning every core; a
// domain's demand is its reported demand cores over the pool's.
func (c *Commander) rewardOf(o *Observation, final *Action) reward.CommanderBreakdown {
	c.outcomes = c.outcomes[:0]
	used := 0.0
	for i := range o.Domains {
		d := &o.Domains[i]
		c.outcomes = append(c.outcomes, reward.DomainOutcome{
			P99: d.P99, SLO: d.SLO, ErrorRate: d.ErrorRate, ErrorBudget: d.ErrorBudget,
			Weight: d.Weight, Share: final.Shares[i], Floor: d.Floor, Demand: d.DemandCores / o.Cluster.CapacityCores,
		})
		used += d.CoresUsed
	}
	return reward.Commander(reward.CommanderInput{
		Domains: c.outcomes, Cost: used, ReferenceCost: o.Cluster.CapacityCores,
	}, c.weights)
}
