package soldier

import (
	"fmt"
	"math"
	"time"
)

// Input is what a policy decides from.
type Input struct {
	Apps []App
	Obs  *Observation
	// BudgetCores is the domain's budget; +Inf when no budget binds (fallback).
	BudgetCores float64
	Headroom    float64 // spare capacity to keep above demand, fraction [0, 1]
	TargetUtil  float64 // utilisation apps are sized for, (0, 1]
	SLO         float64 // the domain's p99 objective, seconds
	// Now is the tick's time (the learned policy reads the time of day);
	// zero when unknown.
	Now time.Time
	// NoReason says nobody reads the reason (the Soldier records nothing):
	// a policy may return "" rather than format one.
	NoReason bool
}

// Policy proposes a replica target per app. It writes into out (one per app)
// and returns a short reason.
type Policy interface {
	Decide(in Input, out []int32) string
}

// Proportional sizes every app for its demand at the target utilisation plus
// headroom, boosting apps at risk (p99 over 80% of the SLO, or erroring), and,
// when the domain's demand exceeds its budget, gives at-risk apps their size
// first and shares what is left between the others in proportion to their
// demand above their minimum.
type Proportional struct {
	desired []int32 // scratch
	risky   []bool  // scratch
}

// riskBoost is the largest extra sizing for an app over its SLO.
const riskBoost = 1.0

// Desired is app a's replicas for its observed demand: the larger of
// rps / (capacity x util), from the configured service time, and
// ready x observed CPU utilisation / util, which sees a slowed service the
// configuration does not know about; times 1 + headroom, and times
// 1 + min(riskBoost, p99/SLO - 0.8) when the app is at risk, within its
// bounds. Replicas already ready are kept while the app is at risk.
func Desired(a *App, o *AppObservation, headroom, util, slo float64) (n int32, risky bool) {
	need := max(o.RPS/(a.Capacity*util), float64(o.Ready)*o.CPUUtil/util) * (1 + headroom)
	r := o.P99 / slo
	if r > 0.8 || o.ErrorRate > 0.01 {
		risky = true
		need *= 1 + min(riskBoost, max(r-0.8, o.ErrorRate))
	}
	n = int32(math.Ceil(need - 1e-9))
	if risky {
		n = max(n, o.Ready)
	}
	return min(max(n, a.Min), a.Max), risky
}

// Decide implements Policy.
func (p *Proportional) Decide(in Input, out []int32) string {
	if cap(p.desired) < len(in.Apps) {
		p.desired = make([]int32, len(in.Apps))
		p.risky = make([]bool, len(in.Apps))
	}
	desired, risky := p.desired[:len(in.Apps)], p.risky[:len(in.Apps)]
	for i := range in.Apps {
		desired[i], risky[i] = Desired(&in.Apps[i], &in.Obs.Apps[i], in.Headroom, in.TargetUtil, in.SLO)
	}
	s := Distribute(in.Apps, desired, risky, in.BudgetCores, out)
	if in.NoReason {
		return ""
	}
	if !s.Over {
		return fmt.Sprintf("demand %.1f cores within budget %.1f; %d apps at risk", s.DemandCores, in.BudgetCores, s.Risky)
	}
	return fmt.Sprintf("demand %.1f cores over budget %.1f: %d at-risk apps first, the rest at %.0f%%", s.DemandCores, in.BudgetCores, s.Risky, 100*s.RestFactor)
}

// Distribution summarises one Distribute call.
type Distribution struct {
	DemandCores float64 // cores the desired sizes request
	Risky       int     // apps at risk
	Over        bool    // the demand exceeded the budget
	RestFactor  float64 // share of their desired growth above minimum the apps not at risk got, [0, 1]; 1 when not over
}

// Distribute fits the desired replicas of apps (risky marks the apps at
// risk) into budgetCores (+Inf: no budget) and writes the targets into out.
// Within budget every app gets its desired size. Over budget, minimums come
// first, then at-risk apps (scaled down together if even they do not fit),
// then the rest share what is left in proportion to their desired cores
// above their minimum. It does not allocate.
func Distribute(apps []App, desired []int32, risky []bool, budgetCores float64, out []int32) Distribution {
	var s Distribution
	floor, riskyCores := 0.0, 0.0
	for i := range apps {
		a := &apps[i]
		s.DemandCores += float64(desired[i]) * a.CPU
		floor += float64(a.Min) * a.CPU
		if risky[i] {
			s.Risky++
			riskyCores += float64(desired[i]-a.Min) * a.CPU
		}
	}
	if s.DemandCores <= budgetCores {
		copy(out, desired)
		s.RestFactor = 1
		return s
	}
	// Over budget: minimums first, then at-risk apps, then the rest pro rata.
	s.Over = true
	spare := max(0, budgetCores-floor)
	riskyFactor := 1.0
	if riskyCores > spare {
		riskyFactor = spare / riskyCores
	}
	spare -= riskyCores * riskyFactor
	restCores := s.DemandCores - floor - riskyCores
	if restCores > 0 {
		s.RestFactor = min(1, spare/restCores)
	}
	for i := range apps {
		a := &apps[i]
		f := s.RestFactor
		if risky[i] {
			f = riskyFactor
		}
		out[i] = a.Min + int32(math.Floor(float64(desired[i]-a.Min)*f))
	}
	return s
}

// DemandCores is the cores the domain's apps want at the target utilisation,
// with no budget: what the Soldier reports so the Commander can size shares.
func DemandCores(in Input) float64 {
	c := 0.0
	for i := range in.Apps {
		n, _ := Desired(&in.Apps[i], &in.Obs.Apps[i], in.Headroom, in.TargetUtil, in.SLO)
		c += float64(n) * in.Apps[i].CPU
	}
	return c
}
