package soldier

import (
	"fmt"
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Input is what a policy decides from.
type Input struct {
	Apps []App
	Obs  *Observation
	// BudgetCores is the domain's budget; +Inf when no budget binds (fallback).
	BudgetCores float64
	Headroom    float64 // spare capacity to keep above demand, fraction [0, 1]
	// TargetUtil is the utilisation an app is sized for at most: no app is
	// given more replicas than its load needs at TargetUtil, (0, 1].
	TargetUtil float64
	// MaxUtil is the highest utilisation a large app is sized for,
	// [TargetUtil, 1]; 0 is TargetUtil.
	MaxUtil float64
	// Safety is the beta of square-root staffing, >= 0 (see Desired); 0
	// sizes every app at MaxUtil.
	Safety float64
	// Tolerance is the proportional policy's hysteresis, [0, 0.5]: no change
	// of target within this fraction of the current one (0: none).
	Tolerance float64
	SLO       float64 // the domain's p99 objective, seconds
	// Now is the tick's time (the learned policy reads the time of day);
	// zero when unknown.
	Now time.Time
	// NoReason says nobody reads the reason (the Soldier records nothing):
	// a policy may return "" rather than format one.
	NoReason bool

	// need, want and risky, when not nil, are every app's Need and Desired
	// for this input, worked out once by Decide (needs) for the policy, the
	// baseline and the stabiliser.
	need  []float64
	want  []int32
	risky []bool
	// recip, when not nil, is per app 1/Concurrency where that is exact
	// (recipConcurrency), else 0.
	recip []float64
}

// InputFor is the part of a tick's Input that the soldier block sets: the
// sizing and hysteresis settings.
func InputFor(s domains.Soldier) Input {
	return Input{TargetUtil: s.TargetUtilisation, MaxUtil: s.MaxUtilisation, Safety: s.StaffingSafety, Tolerance: s.Tolerance}
}

// Policy proposes a replica target per app. It writes into out (one per app)
// and returns a short reason.
type Policy interface {
	Decide(in Input, out []int32) string
}

// SqrtStaffing is the hand-written Soldier policy, named "proportional" in
// the config (ProportionalPolicy): it sizes every app for its load by
// square-root staffing (Desired) and, when the
// domain's demand exceeds its budget, gives at-risk apps their size first and
// shares what is left between the others in proportion to their demand above
// their minimum. It is stateless; the Soldier's Stabiliser holds its small
// changes.
//
// It never stampedes: an app at risk is not sized above its load (capacity
// that is starting or waiting for a node is already on its way, and asking
// again only queues more pods behind the provisioner); it only keeps the
// replicas it has.
type SqrtStaffing struct {
	desired []int32 // scratch
	risky   []bool  // scratch
}

// Desired is app a's replicas for its observed load, by square-root
// staffing on the app's queue: with load the larger of the arrival rate and
// ready x CPU utilisation x capacity (which sees a service slowed beyond the
// configured service time), x = load x service time is the busy servers
// (replicas x concurrency), and the app gets
//
//	servers = max(min(x + Safety sqrt(x), x / TargetUtil), x / MaxUtil)
//
// that is, as many as a target-utilisation rule gives (the HPA's sizing),
// or fewer where the pooling of many servers leaves Safety standard
// deviations of spare anyway, but never above MaxUtil. Small apps are thus
// sized as the HPA sizes them and large ones run hotter. An app is at risk
// when its p99 is over 80% of the SLO or it errors; it then keeps its ready
// replicas. The result is within the app's bounds.
func Desired(a *App, o *AppObservation, in *Input) (n int32, risky bool) {
	return desired(Need(a, o, in), a, o, in)
}

// desired is Desired of an app whose Need is need.
func desired(need float64, a *App, o *AppObservation, in *Input) (n int32, risky bool) {
	risky = atRisk(o, in.SLO)
	return bound(need, a, o, risky), risky
}

// Risk thresholds of Desired: an app is at risk when its p99 is over
// riskP99 x the SLO or its error rate over riskErrorRate.
const (
	riskP99       = 0.8
	riskErrorRate = 0.01
)

func atRisk(o *AppObservation, slo float64) bool {
	return o.P99 > riskP99*slo || o.ErrorRate > riskErrorRate
}

// AtMax is an app that breaches its SLO with its max_replicas ready:
// demand its ceiling cannot serve, which no autoscaler fixes (raise the
// app's max_replicas). It is the live side of the simulator's
// breach_app_minutes_at_max.
type AtMax struct {
	App       int     // index in the domain
	Max       int32   // the ceiling in force: the app's max_replicas, or its live HPA's when observed
	Ready     int32   // replicas serving, >= Max
	P99       float64 // seconds
	ErrorRate float64 // [0, 1]
}

// AppendSLOStatus counts obs's apps at risk (Desired's rule: p99 over 80%
// of slo or an error rate over 1%; those breaching included) and breaching
// (p99 over slo or an error rate over errBudget, Compare's rule), and
// appends to atMax, in domain order, those breaching with their ceiling's
// replicas ready. slo is in seconds; 0 counts no p99 against it. The
// ceiling is the app's Max (apps, indexed like obs.Apps; an app past its end
// has none), or in recommend mode, where the cluster's own HPA scales it,
// that HPA's maxReplicas (AppObservation.HPAMax) when observed. Blind apps
// (stand-in figures) count nowhere. One pass, no allocation into a slice
// with room.
func AppendSLOStatus(atMax []AtMax, apps []App, obs *Observation, slo, errBudget float64) (atRisk, breaching int, _ []AtMax) {
	for i := range obs.Apps {
		o := &obs.Apps[i]
		if o.Blind {
			continue
		}
		b := (slo > 0 && o.P99 > slo) || o.ErrorRate > errBudget
		if b || (slo > 0 && o.P99 > riskP99*slo) || o.ErrorRate > riskErrorRate {
			atRisk++
		}
		if !b {
			continue
		}
		breaching++
		if i >= len(apps) {
			continue
		}
		ceiling := ceilingOf(&apps[i], o)
		if ceiling > 0 && o.Ready >= ceiling {
			atMax = append(atMax, AtMax{App: i, Max: ceiling, Ready: o.Ready, P99: o.P99, ErrorRate: o.ErrorRate})
		}
	}
	return atRisk, breaching, atMax
}

// Limited is an app whose sizing wants more replicas than its ceiling
// allows: the Kubernetes HPA's ScalingLimited (TooManyReplicas), the
// leading side of AtMax. It names the app before it breaches, while its
// ceiling can still be raised in time.
type Limited struct {
	App    int   // index in the domain
	Max    int32 // the ceiling in force: the app's max_replicas, or its live HPA's when observed
	Wanted int32 // replicas its load needs (Need, with the directive's headroom), rounded up; > Max
}

// AppendLimited appends to limited, in domain order, the apps whose need
// (replicas, per app, as Decide works it out: State's need) rounds up to
// more than their ceiling: the app's Max (apps, indexed like obs.Apps), or
// in recommend mode its live HPA's maxReplicas (AppObservation.HPAMax) when
// observed. Apps without a ceiling, blind apps and apps past need's end
// count nowhere. No allocation into a slice with room.
func AppendLimited(limited []Limited, apps []App, obs *Observation, need []float64) []Limited {
	for i := range min(len(apps), len(obs.Apps), len(need)) {
		o := &obs.Apps[i]
		ceiling := ceilingOf(&apps[i], o)
		if o.Blind || ceiling <= 0 || !(need[i] > float64(ceiling)) {
			continue
		}
		wanted := math.Ceil(need[i] - 1e-9) // as bound rounds
		if !(wanted > float64(ceiling)) {
			continue
		}
		limited = append(limited, Limited{App: i, Max: ceiling, Wanted: int32(min(wanted, math.MaxInt32))})
	}
	return limited
}

// ceilingOf is app a's ceiling: its Max, or in recommend mode its live
// HPA's maxReplicas (o.HPAMax) when observed.
func ceilingOf(a *App, o *AppObservation) int32 {
	if o.HPAMax > 0 {
		return o.HPAMax
	}
	return a.Max
}

// Need is the replicas app a's load needs by Desired's staffing rule, before
// rounding up, bounds and risk: the size the Stabiliser compares the target
// in force with.
func Need(a *App, o *AppObservation, in *Input) float64 {
	load := o.Load(a) * (1 + in.Headroom)
	conc := max(a.Concurrency, 1)
	x := load / a.Capacity * conc
	maxUtil := max(in.MaxUtil, in.TargetUtil)
	return max(min(x+in.Safety*math.Sqrt(x), x/in.TargetUtil), x/maxUtil) / conc
}

// Decide implements Policy.
func (p *SqrtStaffing) Decide(in Input, out []int32) string {
	if cap(p.desired) < len(in.Apps) {
		p.desired = make([]int32, len(in.Apps))
		p.risky = make([]bool, len(in.Apps))
	}
	want, risky := in.want, in.risky
	if want == nil {
		want, risky = p.desired[:len(in.Apps)], p.risky[:len(in.Apps)]
		for i := range in.Apps {
			want[i], risky[i] = Desired(&in.Apps[i], &in.Obs.Apps[i], &in)
		}
	}
	s := Distribute(in.Apps, want, risky, in.BudgetCores, out)
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

// DemandCores is the cores the domain's apps want for their load (Desired,
// without hysteresis), with no budget: what the Soldier reports so the
// Commander can size shares.
func DemandCores(in Input) float64 {
	c := 0.0
	for i := range in.Apps {
		n, _ := Desired(&in.Apps[i], &in.Obs.Apps[i], &in)
		c += float64(n) * in.Apps[i].CPU
	}
	return c
}

// needs writes Need and Desired of every app for in into in.need,
// in.want and in.risky and returns DemandCores of in without its headroom
// (what a Soldier reports), in one pass. The demand reuses Desired when in
// has no headroom, or when Desired is already the app's smallest size: Need
// grows with the headroom and Desired with the need (both in floating point:
// every step rounds monotonically), so Desired without the headroom is that
// size too.
func needs(in *Input) (demandCores float64) {
	apps, obs := in.Apps, in.Obs.Apps[:len(in.Apps)]
	need, want, risky := in.need[:len(apps)], in.want[:len(apps)], in.risky[:len(apps)]
	grow := 1 + in.Headroom
	st := staffing{safety: in.Safety, targetUtil: in.TargetUtil, maxUtil: max(in.MaxUtil, in.TargetUtil)}
	st.ordered = st.targetUtil > 0 && st.targetUtil <= st.maxUtil
	for i := range apps {
		a, o := &apps[i], &obs[i]
		// Need's load, without the headroom and with it: x (1 + 0) is x.
		load := o.Load(a)
		conc, recip := max(a.Concurrency, 1), 0.0
		if in.recip != nil {
			recip = in.recip[i]
		}
		nd := st.need(load*grow, a.Capacity, conc, recip)
		r := atRisk(o, in.SLO)
		n := bound(nd, a, o, r)
		need[i], want[i], risky[i] = nd, n, r
		switch {
		case in.Headroom == 0:
		case in.Headroom > 0 && nd < 1<<30 && n <= min(a.Min, a.Max): // the conversion to int32 is exact
		default:
			n = bound(st.need(load, a.Capacity, conc, recip), a, o, r)
		}
		demandCores += float64(n) * a.CPU
	}
	return demandCores
}

// staffing is Need's rule for one input, for apps' loads (needs).
type staffing struct {
	safety, targetUtil, maxUtil float64 // the input's Safety, TargetUtil and max(MaxUtil, TargetUtil)
	// ordered says 0 < targetUtil <= maxUtil, so that x/maxUtil <= x/targetUtil
	// for x >= 0 (division rounds monotonically).
	ordered bool
}

// need is Need for an app of capacity and concurrency conc (at least 1)
// whose load, with the headroom, is load: the same operations on the same
// values. Where x + Safety sqrt(x) >= x/TargetUtil, Need's
// max(x/TargetUtil, x/maxUtil) is x/TargetUtil when ordered, and the
// division by maxUtil is left out. recip is 1/conc when that is exact (a
// power of two), and the last division is a multiplication: both round the
// same real number; 0 divides.
func (st *staffing) need(load, capacity, conc, recip float64) float64 {
	x := load / capacity * conc
	sq, tu := x+st.safety*math.Sqrt(x), x/st.targetUtil
	v := 0.0
	if st.ordered && sq >= tu {
		v = tu
	} else {
		v = max(min(sq, tu), x/st.maxUtil)
	}
	if recip != 0 {
		return v * recip
	}
	return v / conc
}

// recipConcurrency is, per app, 1/max(Concurrency, 1) where the concurrency
// is a power of two, so that its reciprocal is exact and v * (1/conc) is
// v / conc, rounded once from the same real number; 0 for the others.
func recipConcurrency(apps []App) []float64 {
	recip := make([]float64, len(apps))
	for i, a := range apps {
		conc := max(a.Concurrency, 1)
		if frac, _ := math.Frexp(conc); frac == 0.5 && !math.IsInf(conc, 0) {
			recip[i] = 1 / conc
		}
	}
	return recip
}

// bound is desired of an app whose Need is need and whose risk is risky.
func bound(need float64, a *App, o *AppObservation, risky bool) int32 {
	n := int32(math.Ceil(need - 1e-9))
	if risky {
		n = max(n, o.Ready)
	}
	return min(max(n, a.Min), a.Max)
}
