package train

import (
	"fmt"
	"github.com/regimentd/regiment/internal/core/stats"
	"io"
	"math"
	"strings"
)

// Correlation thresholds of the reward-outcome check.
const (
	// MovesWithReward: a term whose |r| with the total reaches it drives the reward.
	MovesWithReward = 0.3
	// MovesWithOutcome: a term whose |r| with some outcome reaches it tracks that outcome.
	MovesWithOutcome = 0.1
	// PinnedMean: a term whose mean over the episodes is this close to -1 or 1
	// sits at its bound nearly always, so it carries almost no signal.
	PinnedMean = 0.02
)

// TermCheck is one reward term's (or the total's) Pearson correlations over
// the evaluation episodes.
type TermCheck struct {
	Name       string  `json:"name"`
	Mean       float64 `json:"mean"`       // the term's mean over episodes
	WithTotal  float64 `json:"with_total"` // r(term, total return)
	Compliance float64 `json:"with_compliance"`
	// Cost is r(term, -cost): positive when the term rises as cost falls.
	Cost float64 `json:"with_lower_cost"`
	// Actions is r(term, -actions): positive when the term rises as
	// scaling actions fall.
	Actions  float64 `json:"with_fewer_actions"`
	Constant bool    `json:"constant"` // the term did not vary: no correlation is defined
	// Pinned: the term varied, but its mean is within PinnedMean of -1 or 1,
	// the bound of every term: it varies too rarely to teach the policy
	// anything.
	Pinned bool `json:"pinned"`
	// Gaming flags a term that moves with the reward (|WithTotal| >=
	// MovesWithReward) but with no outcome in the same direction: for every
	// outcome, sign(WithTotal) x r < MovesWithOutcome (unrelated, or
	// moving against it).
	Gaming bool `json:"gaming"`
}

// CheckReport is the reward-outcome check of one stage.
type CheckReport struct {
	Stage    string      `json:"stage"`
	Episodes int         `json:"episodes"`
	Terms    []TermCheck `json:"terms"`   // every term, then "total"
	Flagged  []string    `json:"flagged"` // the terms that move with the reward and no outcome (Gaming)
	Pinned   []string    `json:"pinned"`  // the terms pinned at their bound (Pinned)
}

// Check correlates each reward term and the total return with the true
// outcomes (compliance, cost, actions) over episodes, whose Terms follow
// names.
func Check(stage string, names []string, episodes []Episode) CheckReport {
	rep := CheckReport{Stage: stage, Episodes: len(episodes), Flagged: []string{}, Pinned: []string{}}
	n := len(episodes)
	total, comp, cost, acts := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, e := range episodes {
		total[i] = e.Return / float64(max(e.Steps, 1))
		comp[i], cost[i], acts[i] = e.Compliance, -e.CostCoreHours/float64(max(e.Steps, 1)), -float64(e.Actions)/float64(max(e.Steps, 1))
	}
	row := func(name string, x []float64) TermCheck {
		// Pearson is 0 where undefined: the term, or the outcome, did not vary.
		t := TermCheck{Name: name, Mean: mean(x)}
		var varies bool
		t.WithTotal, varies = stats.Pearson(x, total)
		t.Constant = !varies
		if !t.Constant {
			t.Compliance, _ = stats.Pearson(x, comp)
			t.Cost, _ = stats.Pearson(x, cost)
			t.Actions, _ = stats.Pearson(x, acts)
		}
		s := math.Copysign(1, t.WithTotal)
		t.Gaming = !t.Constant && math.Abs(t.WithTotal) >= MovesWithReward &&
			s*t.Compliance < MovesWithOutcome && s*t.Cost < MovesWithOutcome && s*t.Actions < MovesWithOutcome
		return t
	}
	x := make([]float64, n)
	for k, name := range names {
		for i, e := range episodes {
			x[i] = e.Terms[k]
		}
		t := row(name, x)
		t.Pinned = !t.Constant && 1-math.Abs(t.Mean) <= PinnedMean // the total has no bound
		rep.Terms = append(rep.Terms, t)
		if t.Gaming {
			rep.Flagged = append(rep.Flagged, name)
		}
		if t.Pinned {
			rep.Pinned = append(rep.Pinned, name)
		}
	}
	rep.Terms = append(rep.Terms, row("total", total))
	return rep
}

// Write prints the report as a table.
func (r CheckReport) Write(w io.Writer) {
	fmt.Fprintf(w, "reward-outcome check, stage %s, %d episodes (Pearson r)\n", r.Stage, r.Episodes)
	fmt.Fprintf(w, "  %-16s %9s %9s %11s %11s %13s\n", "term", "mean", "r(total)", "r(complied)", "r(-cost)", "r(-actions)")
	for _, t := range r.Terms {
		flag := ""
		switch {
		case t.Gaming:
			flag = "  <- moves with reward, not with outcomes"
		case t.Constant:
			flag = "  (constant)"
		case t.Pinned:
			flag = "  (pinned at its bound: little signal)"
		}
		fmt.Fprintf(w, "  %-16s %9.4f %9.3f %11.3f %11.3f %13.3f%s\n", t.Name, t.Mean, t.WithTotal, t.Compliance, t.Cost, t.Actions, flag)
	}
	if len(r.Flagged) > 0 {
		fmt.Fprintf(w, "  flagged: %s\n", strings.Join(r.Flagged, ", "))
	}
	if len(r.Pinned) > 0 {
		fmt.Fprintf(w, "  pinned at their bound: %s\n", strings.Join(r.Pinned, ", "))
	}
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(max(len(x), 1))
}

// Gate is a stage's pass criterion over its evaluation episodes, fixed in
// docs/training.md#stages before training.
type Gate struct {
	Stage string
	// MinCompliance is the least mean compliance (share of app-ticks within
	// SLO) over the evaluation episodes.
	MinCompliance float64
}

// SoldierGate is the Soldier stage's gate: at least 97% compliant
// app-ticks on the held-in single-domain evaluation set.
var SoldierGate = Gate{Stage: "soldier", MinCompliance: 0.97}

// GateResult is a gate's verdict.
type GateResult struct {
	Stage         string  `json:"stage"`
	Episodes      int     `json:"episodes"`
	Compliance    float64 `json:"compliance"`     // mean over episodes
	MinCompliance float64 `json:"min_compliance"` // the gate
	CostCoreHours float64 `json:"cost_core_hours_per_episode"`
	Actions       float64 `json:"actions_per_episode"`
	Pass          bool    `json:"pass"`
}

// Check applies the gate to episodes.
func (g Gate) Check(episodes []Episode) GateResult {
	r := GateResult{Stage: g.Stage, Episodes: len(episodes), MinCompliance: g.MinCompliance}
	for _, e := range episodes {
		r.Compliance += e.Compliance
		r.CostCoreHours += e.CostCoreHours
		r.Actions += float64(e.Actions)
	}
	if n := float64(len(episodes)); n > 0 {
		r.Compliance /= n
		r.CostCoreHours /= n
		r.Actions /= n
	}
	r.Pass = len(episodes) > 0 && r.Compliance >= g.MinCompliance
	return r
}
