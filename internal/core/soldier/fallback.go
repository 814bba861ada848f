package soldier

import (
	"fmt"
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// FallbackConfig is the automatic fallback of one domain: a rolling
// comparison of the live policy against the baseline, computed in shadow
// every tick, that hands the domain to the baseline when the policy is
// consistently worse. Lengths are in Soldier ticks, so the comparator needs no
// clock. Window 0 turns the automatic fallback off.
type FallbackConfig struct {
	// Window is the rolling comparison's length in ticks (30 minutes of
	// ticks by default). >= 0; 0: off.
	Window int
	// BreachFraction is the share of the window's ticks with a breach caused
	// by the policy (or, in shadow, a shortfall) at which it trips, (0, 1].
	// Default 0.05 (90 s of a 30-minute window).
	BreachFraction float64
	// CostMargin is how much more the policy may allocate than the baseline,
	// over a full window, before the cost rule trips (when the policy avoids
	// no breach the baseline would have had), >= 0. Default 0.10.
	CostMargin float64
	// ShortTolerance is the share of the domain's demand cores the policy may
	// leave unallocated beyond what the baseline leaves before a tick counts
	// as short, >= 0. Default 0.10.
	ShortTolerance float64
	// Hold is how long, in ticks, the baseline keeps the domain after a trip
	// before the policy may have it back (30 minutes of ticks by default).
	Hold int
}

// DefaultFallback is the automatic fallback for a Soldier tick: a 30-minute
// window, trips at 5% of its ticks breached by the policy or on cost 10% above
// the baseline with no compliance advantage, holds 30 minutes.
func DefaultFallback(tick time.Duration) FallbackConfig {
	return FallbackFrom(domains.DefaultFallback(), tick)
}

// FallbackFrom is the automatic fallback of the config's settings for a
// Soldier tick. Zero fields of f are domains.DefaultFallback's. Window and
// Hold become whole ticks, rounded down, at least one (ticks under a second
// count as one second); f.Off gives Window 0.
func FallbackFrom(f domains.Fallback, tick time.Duration) FallbackConfig {
	f = f.OrDefault()
	ticks := func(d time.Duration) int { return max(1, int(d/max(tick, time.Second))) }
	c := FallbackConfig{Window: ticks(f.Window), BreachFraction: f.BreachFraction, CostMargin: f.CostMargin,
		ShortTolerance: f.ShortTolerance, Hold: ticks(f.Hold)}
	if f.Off {
		c.Window = 0
	}
	return c
}

// Score is one tick's comparison of the policy's targets P against the
// baseline's B (both proposals for the same observation and budget).
//
// With A the apps that breach (app p99 > SLO or app error rate > budget; all
// apps if only the merged domain figures breach), c_i cores per replica and
// D_i app i's demand cores at the target utilisation (no headroom):
//
//	Caused    = domain breaches and sum_{i in A} P_i c_i < sum_{i in A} B_i c_i
//	Short     = S(P) - S(B) > tol * sum_i D_i
//	Advantage = S(B) - S(P) > tol * sum_i D_i
//	S(x)      = sum_i max(0, D_i - x_i c_i)   // cores left below demand
//
// Caused uses the live outcome: the domain breached while the baseline would
// have given the breaching apps more cores. Short and Advantage are the
// model-based estimates for allocations that did not act: a shortfall below
// demand at the target utilisation predicts a breach.
type Score struct {
	Breach        bool    // the domain's p99 or error rate is over its SLO
	Caused        bool    // a breach the baseline's targets would have met with more cores
	Short         bool    // the policy leaves demand unallocated that the baseline covers
	Advantage     bool    // the baseline leaves demand unallocated that the policy covers
	PolicyCores   float64 // sum_i P_i c_i
	BaselineCores float64 // sum_i B_i c_i
	DemandCores   float64 // sum_i D_i
}

// Compare scores the policy's targets against the baseline's for obs. slo is
// the p99 objective in seconds, errBudget the tolerated error rate, util the
// target utilisation in (0, 1] and tol the ShortTolerance. It allocates
// nothing.
func Compare(apps []App, obs *Observation, slo, errBudget, util, tol float64, policy, baseline []int32) Score {
	return compare(apps, obs, slo, errBudget, util, tol, policy, baseline, false)
}

// compare is Compare; same says baseline holds policy's targets (a copy),
// whose sums are then the policy's, not added again.
func compare(apps []App, obs *Observation, slo, errBudget, util, tol float64, policy, baseline []int32, same bool) Score {
	var sc Score
	sc.Breach = obs.P99 > slo || obs.ErrorRate > errBudget
	var pA, bA, sp, sb float64
	breaching := 0
	if same {
		for i := range apps {
			a, o := &apps[i], &obs.Apps[i]
			p := float64(policy[i]) * a.CPU
			d := o.ReplicasAt(a, util) * a.CPU
			sc.PolicyCores += p
			sc.DemandCores += d
			sp += max(0, d-p)
			if o.P99 > slo || o.ErrorRate > errBudget {
				breaching++
				pA += p
			}
		}
		sc.BaselineCores, sb, bA = sc.PolicyCores, sp, pA
	} else {
		for i := range apps {
			a, o := &apps[i], &obs.Apps[i]
			p, b := float64(policy[i])*a.CPU, float64(baseline[i])*a.CPU
			d := o.ReplicasAt(a, util) * a.CPU
			sc.PolicyCores += p
			sc.BaselineCores += b
			sc.DemandCores += d
			sp += max(0, d-p)
			sb += max(0, d-b)
			if o.P99 > slo || o.ErrorRate > errBudget {
				breaching++
				pA, bA = pA+p, bA+b
			}
		}
	}
	if breaching == 0 {
		pA, bA = sc.PolicyCores, sc.BaselineCores // every app's: the same sums
	}
	sc.Caused = sc.Breach && pA < bA
	margin := tol * sc.DemandCores
	sc.Short = sp-sb > margin
	sc.Advantage = sb-sp > margin
	return sc
}

// Fallback is the automatic fallback's state machine. While the policy is in
// control it keeps the last Window scores and trips when
//
//	slo:  caused >= ceil(BreachFraction * Window)            (at any fill)
//	cost: the window is full, advantage <= caused and
//	      sum PolicyCores > (1 + CostMargin) * sum BaselineCores
//
// where caused counts Caused ticks and advantage Advantage ticks. The slo
// rule needs no full window: enough breaches in less than 30 minutes are
// already consistently worse. On a trip the window empties and the baseline
// acts; the policy keeps deciding in shadow, and its ticks are scored with
// Short in place of Caused (no live outcome is the policy's). After Hold ticks
// the domain goes back to the policy at the first tick the same two rules
// pass over the shadow window, so a policy still starving its domain is not
// handed back. Only ticks where the policy decides in active mode are
// observed: ticks without a valid directive (the staleness fallback acts), in
// shadow or off mode are neither scored nor counted towards the hold. It is
// deterministic and allocation-free after NewFallback.
type Fallback struct {
	cfg    FallbackConfig
	ring   []Score
	next   int // ring position of the next score
	n      int // scores held
	caused int // Caused (in control) or Short (held) scores in the ring
	adv    int // Advantage scores in the ring
	pc, bc float64
	active bool
	held   int // ticks since the trip
}

// FallbackEvent is a switch of the automatic fallback.
type FallbackEvent struct {
	// Reason is "slo" or "cost" for a switch to the baseline, "hand-back"
	// for the return to the policy, "" when nothing switched.
	Reason string
	Detail string // the rule and its figures
}

// Fallback reasons.
const (
	FallbackSLO      = "slo"
	FallbackCost     = "cost"
	FallbackHandBack = "hand-back"
)

// NewFallback returns the automatic fallback for cfg, with the policy in
// control. A cfg with Window 0 never trips.
func NewFallback(cfg FallbackConfig) *Fallback {
	return &Fallback{cfg: cfg, ring: make([]Score, max(0, cfg.Window))}
}

// Active says whether the baseline holds the domain.
func (f *Fallback) Active() bool { return f.active }

// Observe takes one tick's score and returns whether the baseline holds the
// domain from this tick on, and the switch made at this tick, if any.
func (f *Fallback) Observe(sc Score) (bool, FallbackEvent) {
	if len(f.ring) == 0 {
		return false, FallbackEvent{}
	}
	bad := sc.Caused
	if f.active {
		bad = sc.Short
		f.held++
	}
	f.push(sc, bad)
	trip := f.worse()
	switch {
	case !f.active && trip != "":
		detail := f.detail(trip)
		f.active, f.held = true, 0
		f.clear()
		return true, FallbackEvent{Reason: trip, Detail: detail}
	case f.active && f.held >= f.cfg.Hold && trip == "":
		detail := fmt.Sprintf("after %d ticks on the baseline; in shadow %s", f.held, f.detail(""))
		f.active = false
		f.clear()
		return false, FallbackEvent{Reason: FallbackHandBack, Detail: detail}
	}
	return f.active, FallbackEvent{}
}

// need is the count of caused (or, held, short) ticks at which the slo rule
// trips: ceil(BreachFraction x Window), at least 1.
func (f *Fallback) need() int {
	return max(1, int(math.Ceil(f.cfg.BreachFraction*float64(f.cfg.Window)-1e-9)))
}

// worse applies the two rules to the ring and returns the one that trips,
// "" if none.
func (f *Fallback) worse() string {
	switch {
	case f.caused >= f.need():
		return FallbackSLO
	case f.n == f.cfg.Window && f.adv <= f.caused && f.pc > (1+f.cfg.CostMargin)*f.bc:
		return FallbackCost
	}
	return ""
}

// detail explains rule ("" for none tripping) with the ring's figures.
func (f *Fallback) detail(rule string) string {
	bad := "policy-caused breaches"
	if f.active {
		bad = "policy shortfalls"
	}
	switch rule {
	case FallbackSLO:
		return fmt.Sprintf("%s %d of %d ticks >= %d (%.0f%% of the window)", bad, f.caused, f.n, f.need(), 100*f.cfg.BreachFraction)
	case FallbackCost:
		return fmt.Sprintf("policy %.1f core-ticks > %.2f x baseline %.1f with %d baseline shortfalls <= %d %s",
			f.pc, 1+f.cfg.CostMargin, f.bc, f.adv, f.caused, bad)
	}
	return fmt.Sprintf("%s %d of %d ticks < %d; cost %.1f vs baseline %.1f core-ticks", bad, f.caused, f.n, f.need(), f.pc, f.bc)
}

func (f *Fallback) push(sc Score, bad bool) {
	if f.n == len(f.ring) {
		old := &f.ring[f.next]
		if old.Caused { // Caused holds the counted flag of stored scores
			f.caused--
		}
		if old.Advantage {
			f.adv--
		}
		f.pc -= old.PolicyCores
		f.bc -= old.BaselineCores
	} else {
		f.n++
	}
	sc.Caused = bad
	f.ring[f.next] = sc
	f.next = (f.next + 1) % len(f.ring)
	if bad {
		f.caused++
	}
	if sc.Advantage {
		f.adv++
	}
	f.pc += sc.PolicyCores
	f.bc += sc.BaselineCores
}

func (f *Fallback) clear() {
	f.next, f.n, f.caused, f.adv, f.pc, f.bc = 0, 0, 0, 0, 0, 0
}
