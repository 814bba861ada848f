package soldier

import (
	"fmt"
	"math"
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
		need *= 1 + math.Min(riskBoost, math.Max(r-0.8, o.ErrorRate))
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
	}
	desired := p.desired[:len(in.Apps)]
	risky := 0
	demand, floor, riskyCores := 0.0, 0.0, 0.0
	for i := range in.Apps {
		a := &in.Apps[i]
		n, r := Desired(a, &in.Obs.Apps[i], in.Headroom, in.TargetUtil, in.SLO)
		desired[i] = n
		demand += float64(n) * a.CPU
		floor += float64(a.Min) * a.CPU
		if r {
			risky++
			riskyCores += float64(n-a.Min) * a.CPU
		}
	}
	if demand <= in.BudgetCores {
		copy(out, desired)
		return fmt.Sprintf("demand %.1f cores within budget %.1f; %d apps at risk", demand, in.BudgetCores, risky)
	}
	// Over budget: minimums first, then at-risk apps, then the rest pro rata.
	spare := math.Max(0, in.BudgetCores-floor)
	riskyFactor := 1.0
	if riskyCores > spare {
		riskyFactor = spare / riskyCores
	}
	spare -= riskyCores * riskyFactor
	restCores := demand - floor - riskyCores
	restFactor := 0.0
	if restCores > 0 {
		restFactor = math.Min(1, spare/restCores)
	}
	for i := range in.Apps {
		a := &in.Apps[i]
		f := restFactor
		if _, r := Desired(a, &in.Obs.Apps[i], in.Headroom, in.TargetUtil, in.SLO); r {
			f = riskyFactor
		}
		out[i] = a.Min + int32(math.Floor(float64(desired[i]-a.Min)*f))
	}
	return fmt.Sprintf("demand %.1f cores over budget %.1f: %d at-risk apps first, the rest at %.0f%%", demand, in.BudgetCores, risky, 100*restFactor)
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
