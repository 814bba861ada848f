package reward

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ChurnWindow is the node-churn window: a node provisioned and deprovisioned
// again within it counts in CommanderInput.ChurnedNodes.
const ChurnWindow = 10 * time.Minute

// ProactiveLead is how far ahead of a forecast spike the Commander must have
// raised a domain's budget for CommanderInput.Proactive to be set (strictly
// more than this).
const ProactiveLead = 5 * time.Minute

// DomainOutcome is what one domain did over a Commander tick.
type DomainOutcome struct {
	P99, SLO float64 // p99 response time and its objective, seconds; SLO <= 0: none
	// ErrorRate is the share of failed requests, ErrorBudget the tolerated
	// share (e.g. 0.001); ErrorBudget <= 0: none.
	ErrorRate, ErrorBudget float64
	Weight                 float64 // priority weight (domain "weight", default 1), >= 0
	// Share is the domain's share of the contested pool after the guards and
	// Floor its configured minimum, both in [0, 1]; Floor <= 0: none.
	Share, Floor float64
	// Demand is the share of the pool the domain's demand asks for, >= 0:
	// the cores its apps would request at the target utilisation over the
	// pool's. Only a domain that asks for more than its share (Demand >
	// Share) is held near its floor; one whose demand fits its share scores
	// no floor proximity, however close to the floor it sits.
	Demand float64
	// CeilingBound: every app of the domain over its objective has its
	// max_replicas ready, so no allocation serves its breaches (raising the
	// ceiling does). Such a domain counts in neither adherence nor
	// degradation.
	CeilingBound bool
}

// CommanderInput is the outcome of one Commander tick.
type CommanderInput struct {
	Domains []DomainOutcome
	// Cost is what the cluster cost over the tick and ReferenceCost what a
	// reference policy (e.g. static peak provisioning) costs over the same
	// window, in the same unit. ReferenceCost <= 0 disables the cost term.
	Cost, ReferenceCost float64
	// ChurnedNodes counts nodes provisioned and deprovisioned again within
	// ChurnWindow; Nodes is the cluster's node count.
	ChurnedNodes, Nodes int
	// Proactive: a budget was raised more than ProactiveLead ahead of a
	// forecast spike. BeatProportional: over the same window the outcome beat
	// the proportional allocator's. The bonus needs both.
	Proactive, BeatProportional bool
	// PowerWatts is the cluster's power over the tick (provisioned nodes at
	// idle plus their busy cores, domains.Cluster's power model) and
	// ReferencePowerWatts the power of the whole pool at full load, in the
	// same unit. ReferencePowerWatts <= 0 disables the energy term.
	PowerWatts, ReferencePowerWatts float64
}

// CommanderWeights weighs the Commander's terms in Total. Every weight is a
// magnitude, >= 0: the terms carry the sign, so a penalty term's weight makes
// it a negative contribution. The zero value weighs nothing; start from
// DefaultCommanderWeights.
type CommanderWeights struct {
	Adherence      float64 // SLO adherence, A in [-1, 1]; default 1.0
	Degradation    float64 // worst weighted degradation, penalty in [-1, 0]; default 1.0
	Cost           float64 // cost over reference, penalty in [-1, 0]; default 0.5
	Churn          float64 // node churn, penalty in [-1, 0]; default 0.2
	Proactivity    float64 // forecast proactivity, bonus in {0, 1}; default 0.2
	FloorProximity float64 // closest wanting domain to its floor, penalty in [-1, 0]; default 0.1
	// FloorMargin is the share above its floor at which a domain's floor
	// proximity reaches 0, in (0, 1]; default 0.05 (5 points of share).
	FloorMargin float64
	// Energy weighs the power over reference, penalty in [-1, 0]; default 0:
	// a node's power is mostly its idle draw, which follows its cores as
	// Cost does, so a weight by default would count the node count twice
	// and move every trained policy's objective. Set it to trade latency or
	// cost for energy.
	Energy float64
}

// DefaultCommanderWeights are the defaults documented on CommanderWeights:
// the SLO terms dominate, cost counts half, and the shaping terms (churn,
// proactivity, floor proximity) are too small to outweigh an SLO breach.
func DefaultCommanderWeights() CommanderWeights {
	return CommanderWeights{
		Adherence:      1.0,
		Degradation:    1.0,
		Cost:           0.5,
		Churn:          0.2,
		Proactivity:    0.2,
		FloorProximity: 0.1,
		FloorMargin:    0.05,
	}
}

// Validate reports every weight that is negative or not finite and a
// FloorMargin outside (0, 1], all at once.
func (w CommanderWeights) Validate() error {
	errs := checkWeights(CommanderBreakdown{Weights: w}.Terms())
	if !(w.FloorMargin > 0 && w.FloorMargin <= 1) {
		errs = append(errs, fmt.Errorf("floor_margin = %v: want in (0, 1]", w.FloorMargin))
	}
	return errors.Join(errs...)
}

// CommanderBreakdown is the Commander's reward for one tick, term by term.
// Every term is normalised and signed so that higher is better.
type CommanderBreakdown struct {
	Adherence      float64 // mean SLO adherence over domains, [-1, 1]
	Degradation    float64 // -worst priority-weighted degradation, [-1, 0]
	Cost           float64 // -cost / reference cost, [-1, 0]
	Churn          float64 // -churned nodes / nodes, [-1, 0]
	Proactivity    float64 // 1 when acted ahead and beat proportional, {0, 1}
	FloorProximity float64 // -proximity to its floor of the closest domain wanting more, [-1, 0]
	Energy         float64 // -power / reference power, [-1, 0]
	Total          float64 // weighted sum of the terms

	// DegradedDomain and FloorDomain index CommanderInput.Domains: the domain
	// that set Degradation and FloorProximity, or -1 when the term is 0.
	DegradedDomain, FloorDomain int

	Weights CommanderWeights // the weights Total was computed with
}

// Commander scores one Commander tick (docs/architecture.md, Reward). With domains d,
// r_d = p99_d / SLO_d and e_d = errorRate_d / errorBudget_d:
//
//	A = mean_{d not ceiling-bound} Adherence(r_d)
//	D = -min(1, max_{d not ceiling-bound} weight_d x max(r_d - 1, e_d - 1, 0))
//	C = -min(1, cost / referenceCost)
//	N = -min(1, churnedNodes / nodes)
//	P = 1 if proactive and beat proportional, else 0
//	F = -max_{d: demand_d > share_d} min(1, max(0, (floor_d + margin - share_d) / margin))
//	E = -min(1, power / referencePower)
//	R = wA A + wD D + wC C + wN N + wP P + wF F + wE E
//
// It does not allocate and is safe for concurrent use.
func Commander(in CommanderInput, w CommanderWeights) CommanderBreakdown {
	b := CommanderBreakdown{DegradedDomain: -1, FloorDomain: -1, Weights: w}
	var adherence, worst, closest float64
	scored := 0 // domains in A and D: those not ceiling-bound
	for i, d := range in.Domains {
		if !d.CeilingBound {
			scored++
			r := ratio(d.P99, d.SLO)
			adherence += Adherence(r)
			// weight_d x max(r_d - 1, e_d - 1, 0)
			deg := math.Max(d.Weight, 0) * math.Max(math.Max(r-1, ratio(d.ErrorRate, d.ErrorBudget)-1), 0)
			if deg > worst || (math.IsNaN(deg) && !math.IsNaN(worst)) {
				worst, b.DegradedDomain = deg, i
			}
		}
		if d.Floor <= 0 || d.Demand <= d.Share { // a NaN demand counts as wanting more
			continue
		}
		p := floorProximity(d.Share, d.Floor, w.FloorMargin)
		if p > closest || (math.IsNaN(p) && !math.IsNaN(closest)) {
			closest, b.FloorDomain = p, i
		}
	}
	if scored > 0 {
		b.Adherence = bounded(adherence/float64(scored), -1, 1)
	}
	b.Degradation = bounded(-worst, -1, 0)
	if !(in.ReferenceCost <= 0) { // NaN falls through and scores -1
		b.Cost = bounded(-math.Max(in.Cost, 0)/in.ReferenceCost, -1, 0)
	}
	b.Churn = bounded(-share(in.ChurnedNodes, in.Nodes), -1, 0)
	if in.Proactive && in.BeatProportional {
		b.Proactivity = 1
	}
	b.FloorProximity = bounded(-closest, -1, 0)
	if !(in.ReferencePowerWatts <= 0) { // NaN falls through and scores -1
		b.Energy = bounded(-math.Max(in.PowerWatts, 0)/in.ReferencePowerWatts, -1, 0)
	}

	// R = wA A + wD D + wC C + wN N + wP P + wF F + wE E
	b.Total = w.Adherence*b.Adherence +
		w.Degradation*b.Degradation +
		w.Cost*b.Cost +
		w.Churn*b.Churn +
		w.Proactivity*b.Proactivity +
		w.FloorProximity*b.FloorProximity +
		w.Energy*b.Energy
	return b
}

// floorProximity is 1 at or below the floor, falling linearly to 0 at
// margin above it (a step at the floor when margin <= 0).
func floorProximity(share, floor, margin float64) float64 {
	if margin <= 0 {
		if share <= floor {
			return 1
		}
		return 0
	}
	return clip((floor+margin-share)/margin, 0, 1)
}

// AppendTerms appends the terms, in the order of the fields, to dst.
func (b CommanderBreakdown) AppendTerms(dst []Term) []Term {
	w := b.Weights
	return append(dst,
		Term{"adherence", b.Adherence, w.Adherence},
		Term{"degradation", b.Degradation, w.Degradation},
		Term{"cost", b.Cost, w.Cost},
		Term{"churn", b.Churn, w.Churn},
		Term{"proactivity", b.Proactivity, w.Proactivity},
		Term{"floor_proximity", b.FloorProximity, w.FloorProximity},
		Term{"energy", b.Energy, w.Energy},
	)
}

// Terms returns the terms in a fixed order: adherence, degradation, cost,
// churn, proactivity, floor_proximity, energy. Total is not among them (see
// TotalName).
func (b CommanderBreakdown) Terms() []Term { return b.AppendTerms(make([]Term, 0, 7)) }
