package reward

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// OscillationWindow is the replica-oscillation window: an app scaled down
// within it of a scale-up counts in SoldierInput.Oscillations.
const OscillationWindow = 120 * time.Second

// SoldierInput is the outcome of one Soldier tick for its domain.
type SoldierInput struct {
	P99, SLO               float64 // domain p99 response time and its objective, seconds; SLO <= 0: none
	ErrorRate, ErrorBudget float64 // share of failed requests and the tolerated share; ErrorBudget <= 0: none
	// BudgetCores is the directive's budget, UsedCores what the domain's
	// replicas request, in cores.
	BudgetCores, UsedCores float64
	// Intended and Actual are the per-app allocations the directive implied
	// and the Soldier made, in cores or replicas (the same unit for both),
	// app k at index k.
	Intended, Actual []float64
	// Oscillations counts apps scaled down within OscillationWindow of a
	// scale-up; Apps is the domain's app count.
	Oscillations, Apps int
	Ready, Replicas    int // ready replicas and all replicas of the domain
}

// SoldierWeights weighs the Soldier's terms in Total. Every weight is a
// magnitude, >= 0: the terms carry the sign, so a penalty term's weight makes
// it a negative contribution. The zero value weighs nothing; start from
// DefaultSoldierWeights.
type SoldierWeights struct {
	Adherence   float64 // domain SLO adherence, A in [-1, 1]; default 1.0
	Utilisation float64 // budget utilisation deviation, penalty in [-1, 0]; default 0.5
	Alignment   float64 // directive alignment, in [0, 1] for allocations; default 0.5
	Oscillation float64 // replica oscillation, penalty in [-1, 0]; default 0.2
	ColdStart   float64 // replicas not yet ready, penalty in [-1, 0]; default 0.1
	// UtilisationTarget is the budget utilisation (used / budget) the
	// utilisation term is centred on, in (0, 1]; default 0.85.
	UtilisationTarget float64
}

// DefaultSoldierWeights are the defaults documented on SoldierWeights: the
// SLO comes first, spending the budget well and following the directive
// next, and the churn-like terms are small.
func DefaultSoldierWeights() SoldierWeights {
	return SoldierWeights{
		Adherence:         1.0,
		Utilisation:       0.5,
		Alignment:         0.5,
		Oscillation:       0.2,
		ColdStart:         0.1,
		UtilisationTarget: 0.85,
	}
}

// Validate reports every weight that is negative or not finite and a
// UtilisationTarget outside (0, 1], all at once.
func (w SoldierWeights) Validate() error {
	errs := checkWeights(SoldierBreakdown{Weights: w}.Terms())
	if !(w.UtilisationTarget > 0 && w.UtilisationTarget <= 1) {
		errs = append(errs, fmt.Errorf("utilisation_target = %v: want in (0, 1]", w.UtilisationTarget))
	}
	return errors.Join(errs...)
}

// SoldierBreakdown is a Soldier's reward for one tick, term by term. Every
// term is normalised and signed so that higher is better.
type SoldierBreakdown struct {
	Adherence   float64 // SLO adherence of the worse of latency and errors, [-1, 1]
	Utilisation float64 // -quadratic deviation from the utilisation target, [-1, 0]
	Alignment   float64 // directive alignment, [-1, 1] ([0, 1] for allocations)
	Oscillation float64 // -oscillating apps / apps, [-1, 0]
	ColdStart   float64 // -unready replicas / replicas, [-1, 0]
	Total       float64 // weighted sum of the terms

	Weights SoldierWeights // the weights Total was computed with
}

// Soldier scores one Soldier tick (docs/architecture.md, Reward):
//
//	A = Adherence(max(p99 / SLO, errorRate / errorBudget))
//	U = UtilisationDeviation(usedCores / budgetCores, target)
//	L = Alignment(actual, intended)
//	O = -min(1, oscillations / apps)
//	S = -min(1, (replicas - ready) / replicas)
//	R = wA A + wU U + wL L + wO O + wS S
//
// With no budget (budgetCores <= 0), U is 0 when nothing is used and -1
// otherwise. It does not allocate and is safe for concurrent use.
func Soldier(in SoldierInput, w SoldierWeights) SoldierBreakdown {
	b := SoldierBreakdown{Weights: w}
	b.Adherence = Adherence(math.Max(ratio(in.P99, in.SLO), ratio(in.ErrorRate, in.ErrorBudget)))
	switch {
	case in.BudgetCores > 0 || math.IsNaN(in.BudgetCores):
		b.Utilisation = UtilisationDeviation(in.UsedCores/in.BudgetCores, w.UtilisationTarget)
	case !(in.UsedCores <= 0):
		b.Utilisation = -1
	}
	b.Alignment = Alignment(in.Actual, in.Intended)
	b.Oscillation = bounded(-share(in.Oscillations, in.Apps), -1, 0)
	if in.Replicas > 0 {
		b.ColdStart = bounded(-float64(in.Replicas-in.Ready)/float64(in.Replicas), -1, 0)
	}

	// R = wA A + wU U + wL L + wO O + wS S
	b.Total = w.Adherence*b.Adherence +
		w.Utilisation*b.Utilisation +
		w.Alignment*b.Alignment +
		w.Oscillation*b.Oscillation +
		w.ColdStart*b.ColdStart
	return b
}

// AppendTerms appends the terms, in the order of the fields, to dst.
func (b SoldierBreakdown) AppendTerms(dst []Term) []Term {
	w := b.Weights
	return append(dst,
		Term{"adherence", b.Adherence, w.Adherence},
		Term{"utilisation", b.Utilisation, w.Utilisation},
		Term{"alignment", b.Alignment, w.Alignment},
		Term{"oscillation", b.Oscillation, w.Oscillation},
		Term{"cold_start", b.ColdStart, w.ColdStart},
	)
}

// Terms returns the terms in a fixed order: adherence, utilisation,
// alignment, oscillation, cold_start. Total is not among them (see TotalName).
func (b SoldierBreakdown) Terms() []Term { return b.AppendTerms(make([]Term, 0, 5)) }
