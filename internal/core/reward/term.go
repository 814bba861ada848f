package reward

import (
	"fmt"
	"math"
)

// TotalName is the key a caller stores a Breakdown's Total under when it
// flattens the breakdown into named values (store.Step.Reward uses "total").
const TotalName = "total"

// Term is one named reward term: its normalised value and the weight it
// enters Total with. Value is signed so that higher is better; penalties are
// at most 0.
type Term struct {
	Name   string  // stable snake_case key, e.g. "floor_proximity"
	Value  float64 // normalised term, in [-1, 1]
	Weight float64 // weight of the term in Total, >= 0
}

// Contribution is the term's share of Total, Weight x Value.
func (t Term) Contribution() float64 { return t.Weight * t.Value }

// clip limits x to [lo, hi]. NaN stays NaN, so a NaN input reaches bounded.
func clip(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// bounded limits a finished term to [lo, hi] and gives NaN the worst value,
// lo: terms are signed so that lo is always the worst. A negated 0 comes
// back as +0, so that stored breakdowns read "0", not "-0".
func bounded(x, lo, hi float64) float64 {
	switch {
	case math.IsNaN(x):
		return lo
	case x == 0:
		return 0
	}
	return clip(x, lo, hi)
}

// ratio is x / limit, or 0 when limit <= 0: no objective is set, so it is met.
func ratio(x, limit float64) float64 {
	if limit <= 0 {
		return 0
	}
	return x / limit
}

// share is n / d for counts, with d < 1 read as 1 and n < 0 as 0.
func share(n, d int) float64 {
	return float64(max(n, 0)) / float64(max(d, 1))
}

// checkWeights reports each term whose weight is negative or not finite, by
// the term's name: Validate passes a zero breakdown's Terms, so the names are
// the ones AppendTerms writes.
func checkWeights(terms []Term) []error {
	var errs []error
	for _, t := range terms {
		if !(t.Weight >= 0) || math.IsInf(t.Weight, 1) {
			errs = append(errs, fmt.Errorf("weight %s = %v: want finite and >= 0", t.Name, t.Weight))
		}
	}
	return errs
}
