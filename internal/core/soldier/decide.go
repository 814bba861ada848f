package soldier

import (
	"fmt"
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// State is what a Soldier's decision carries from one tick to the next: the
// config in force, the policy and the baseline, the executor (targets in
// force, cooldowns, operator pins), the stabiliser's window, the rollback
// ladder's rung and the automatic fallback's window, and per-app buffers.
// Only Decide changes it during a tick; Reload and the operator's pins change
// it between ticks.
type State struct {
	cfg      Config
	policy   Policy
	fallback Policy
	exec     *Executor
	stab     Stabiliser // holds small and short-lived changes before the executor
	need     []float64  // per app, the replicas its load needs (Need), for the stabiliser
	want     []int32    // per app, Desired
	risky    []bool     // per app, at risk (Desired)
	recip    []float64  // per app, 1/Concurrency where exact, else 0 (recipConcurrency)
	ladder   *Ladder
	auto     *Fallback
	// noReason says nobody reads the reasons (the Soldier records nothing).
	noReason bool
	// last is the mode of the last Decide ("" before the first).
	last domains.Mode

	proposed []int32
	baseline []int32
	shadow   []int32 // the baseline's targets on the policy's input, every tick the policy decides
	decided  []int32 // the policy's own targets, before the ladder or the fallback replace them
	unheld   []int32 // the targets before the stabiliser, to tell which it held
	guards   []Guard
	writes   []Change
	apps     []AppDecision
	// counter is the observation with each app's Replicas the target the
	// Soldier would have in force had it written its recommendations
	// (recommend mode), built on the first recommend tick.
	counter Observation
}

// state is State under a name Soldier can embed without exporting it.
type state = State

// NewState is the decision state of a Soldier for cfg deciding with policy,
// with SqrtStaffing as its baseline. noReason says nobody reads the reasons.
func NewState(cfg Config, policy Policy, noReason bool) *State {
	n := len(cfg.Apps)
	return &State{
		cfg: cfg, policy: policy, fallback: &SqrtStaffing{},
		exec: NewExecutor(ExecutorConfig{
			OverageCap: cfg.Soldier.OverageCap, ScaleDownCooldown: cfg.Soldier.ScaleDownCooldown,
			ErrorRateVeto: cfg.Soldier.ErrorRateVeto, MaxWritesPerTick: cfg.Soldier.MaxWritesPerTick,
			RetryLimit: retryLimit(cfg.Soldier.Tick),
		}, n),
		ladder:   NewLadder(cfg.Ladder),
		noReason: noReason,
		proposed: make([]int32, n), baseline: make([]int32, n), shadow: make([]int32, n), decided: make([]int32, n),
		unheld: make([]int32, n), apps: make([]AppDecision, n),
		need: make([]float64, n), want: make([]int32, n), risky: make([]bool, n), recip: recipConcurrency(cfg.Apps),
		auto: NewFallback(cfg.Fallback),
	}
}

// Source is what set an app's proposed target, before the stabiliser, the
// operator's pin and the executor's guards.
type Source string

// Sources of a target.
const (
	SourceOff          Source = "off"           // mode off: nothing decided
	SourcePolicy       Source = "policy"        // the domain's policy, within its budget
	SourceFallback     Source = "fallback"      // no valid directive: the baseline sizes for demand
	SourceLadderFreeze Source = "ladder-freeze" // the ladder froze the policy: held, the baseline may scale up
	SourceLadderRevert Source = "ladder-revert" // the ladder reverted: the baseline acts
	SourceAutoFallback Source = "auto-fallback" // the automatic fallback holds the domain on the baseline
	// SourceRecommend: recommend (or shadow) mode: the policy's targets are
	// recorded with the baseline's, and nothing is written.
	SourceRecommend Source = "recommend"
)

// AppDecision is one app's target and why.
type AppDecision struct {
	Target int32  // proposed target after the stabiliser and the pin, before the guards
	Source Source // what proposed it
	Held   bool   // the stabiliser changed the proposal
	Pinned bool   // an operator's pin set the target
	Guard  string // the last executor guard that changed it ("" if none)
}

// Decision is one tick's decision: the replica writes the executor let
// through, and why. Its slices belong to the State and hold until the next
// Decide.
type Decision struct {
	Mode domains.Mode
	// Valid says a directive was in force; Fallback says the baseline acts
	// (no valid directive, the ladder at revert, the automatic fallback); in
	// recommend mode nothing acts, and Fallback says the recommendation is
	// the baseline's for want of a directive.
	Valid, Fallback bool
	DemandCores     float64 // the domain's demand, cores
	Rung            Rung    // the rollback ladder's rung
	// AutoFallback is true while the automatic fallback holds the domain on
	// the baseline; Switch is its switch at this tick, if any.
	AutoFallback bool
	Switch       FallbackEvent
	Reason       string
	Apps         []AppDecision // per app, in config order
	Guards       []Guard
	Writes       []Change
	// PolicyTargets and BaselineTargets are recorded beside the actuated
	// targets when both decided: in recommend (and shadow) mode, where the
	// policy's are its recommendation after the stabiliser and the guards and
	// nothing is actuated, while the automatic fallback holds the domain, and
	// at its hand-back; nil otherwise.
	PolicyTargets, BaselineTargets []int32
}

// Decide decides one tick at now from the observation obs and the directive
// in force d (nil: none, or it expired): the targets every app should have,
// through the policy or the baseline, the rollback ladder, the automatic
// fallback, the mode, the stabiliser, the operator's pins and the executor's
// guards. It does no I/O; it advances st (ladder, fallback window,
// stabiliser, executor) and returns slices st owns.
func Decide(st *State, obs *Observation, d *wire.Directive, now time.Time) Decision {
	dec := Decision{Mode: st.cfg.Soldier.Mode, Valid: d != nil}
	mode := dec.Mode
	st.enter(mode)
	var in Input
	in, dec.DemandCores = st.input(obs, d, now)

	var reason string
	fallback := !dec.Valid
	budget := math.Inf(1)
	if dec.Valid {
		budget = d.Cores
	}
	source := SourcePolicy
	st.guards, st.writes = st.guards[:0], st.writes[:0]
	switch {
	case mode == domains.ModeOff:
		reason, source = "mode off: nothing decided", SourceOff
	case fallback:
		reason, source = "no valid directive: fallback sizes for demand; "+st.fallback.Decide(in, st.proposed), SourceFallback
	default:
		reason = st.policy.Decide(in, st.proposed)
	}
	auto, switched := false, FallbackEvent{}
	if mode == domains.ModeActive && !fallback && st.cfg.Fallback.Window > 0 {
		auto, switched = st.shadowCompare(in, obs)
	}
	rung := RungNone
	if mode == domains.ModeActive && st.cfg.SLO > 0 && st.cfg.Ladder.Alert > 0 {
		rung, _ = st.ladder.Observe(now, obs.P99/st.cfg.SLO)
	}
	if mode == domains.ModeActive && !fallback && rung >= RungFreeze {
		// Neither the frozen policy nor the baseline is held to the budget.
		budget = math.Inf(1)
		fallback, source, reason = st.ladderAt(rung, in, obs, reason)
	}
	if auto && !fallback {
		// The automatic fallback holds the domain: the baseline acts alone,
		// as at the ladder's revert, while the policy decides in shadow.
		base := in
		base.BudgetCores = math.Inf(1)
		fallback, budget, source = true, math.Inf(1), SourceAutoFallback
		reason = "automatic fallback: baseline acts; " + st.fallback.Decide(base, st.proposed)
	}
	guarded := obs // what the stabiliser and the executor hold targets against
	if mode.Recommends() {
		guarded, source = st.recommend(in, obs), SourceRecommend
		reason = "recommend: nothing written; policy: " + reason
	}
	copy(st.unheld, st.proposed)
	if mode != domains.ModeOff {
		held, raised := st.stab.Apply(st.proposed, guarded, st.need, st.cfg.Soldier.Tolerance)
		if raised > 0 && !in.NoReason {
			reason += fmt.Sprintf("; %d raised with the domain's rise", raised)
		}
		if held > 0 && !in.NoReason {
			reason += fmt.Sprintf("; %d changes held by the stabiliser", held)
		}
		st.guards, st.writes = st.exec.Apply(now, st.cfg.Apps, guarded, budget, st.proposed, st.guards, st.writes)
	}
	if mode.Recommends() {
		st.writes = st.writes[:0] // the executor keeps them as the targets in force; none is made
	}
	st.explain(source, mode)
	dec.Fallback, dec.Rung, dec.AutoFallback, dec.Switch, dec.Reason = fallback, rung, auto, switched, reason
	dec.Apps, dec.Guards, dec.Writes = st.apps, st.guards, st.writes
	switch {
	case mode.Recommends():
		dec.PolicyTargets, dec.BaselineTargets = st.proposed, st.baseline
	case auto: // the baseline's actuated targets
		dec.PolicyTargets, dec.BaselineTargets = st.decided, st.proposed
	case switched.Reason != "": // the hand-back: the baseline's shadow targets
		dec.PolicyTargets, dec.BaselineTargets = st.decided, st.shadow
	}
	return dec
}

// shadowCompare is the automatic fallback's step in active mode with a
// valid directive: the baseline decides in shadow on the policy's own
// input (into st.shadow), every tick, the policy's targets are kept in
// st.decided, and the fallback observes the comparison.
func (st *State) shadowCompare(in Input, obs *Observation) (auto bool, switched FallbackEvent) {
	_, same := st.policy.(*SqrtStaffing)
	if same {
		// The policy is the baseline, which is pure: it decided the
		// same targets on the same input.
		copy(st.shadow, st.proposed)
	} else {
		st.fallback.Decide(in, st.shadow)
	}
	copy(st.decided, st.proposed)
	sc := compare(st.cfg.Apps, obs, st.cfg.SLO, st.cfg.ErrorBudget, in.TargetUtil, st.cfg.Fallback.ShortTolerance, st.decided, st.shadow, same)
	return st.auto.Observe(sc)
}

// ladderAt is the rollback ladder's step at rung (freeze or revert) after
// the policy gave reason: the baseline decides without a budget (into
// st.baseline); at revert it acts alone, at freeze the policy's targets
// hold (the targets in force, else the observed replicas) and only the
// baseline may scale up. It returns whether the baseline acts, the source
// and the reason.
func (st *State) ladderAt(rung Rung, in Input, obs *Observation, reason string) (fallback bool, source Source, why string) {
	base := in
	base.BudgetCores = math.Inf(1)
	baseReason := st.fallback.Decide(base, st.baseline)
	if rung == RungRevert {
		copy(st.proposed, st.baseline)
		return true, SourceLadderRevert, "ladder at revert: baseline acts; " + baseReason
	}
	for i := range st.proposed {
		cur := st.exec.Current(i)
		if cur < 0 {
			cur = obs.Apps[i].Replicas
		}
		st.proposed[i] = max(cur, st.baseline[i])
	}
	return false, SourceLadderFreeze, "ladder at freeze: policy held, baseline may scale up; policy: " + reason
}

// input is the policy's input at now for obs and the directive in force d
// (nil: none, and no budget): d's budget and headroom, with every app's
// need worked out once for the policy, the baseline and the stabiliser
// (needs). It returns the domain's demand too, without the headroom: what
// the Soldier reports.
func (st *State) input(obs *Observation, d *wire.Directive, now time.Time) (Input, float64) {
	in := InputFor(st.cfg.Soldier)
	in.Apps, in.Obs, in.BudgetCores, in.SLO, in.Now = st.cfg.Apps, obs, math.Inf(1), st.cfg.SLO, now
	in.NoReason = st.noReason
	if d != nil {
		in.BudgetCores, in.Headroom = d.Cores, d.Headroom
	}
	in.need, in.want, in.risky, in.recip = st.need, st.want, st.risky, st.recip
	return in, needs(&in)
}

// enter notes the mode of this tick: entering active mode from one that
// wrote nothing, the executor forgets the targets it kept (what it would
// have written, or what it wrote before): the cluster runs what it observes.
func (st *State) enter(mode domains.Mode) {
	if mode.Writes() && st.last != "" && !st.last.Writes() {
		st.exec.Forget()
	}
	st.last = mode
}

// recommend is recommend mode's step after the policy: the baseline decides
// without a budget beside it (into st.baseline), and the policy's targets
// are to go through the stabiliser and the guards against the observation
// it returns (counterfactual). Nothing is written.
func (st *State) recommend(in Input, obs *Observation) *Observation {
	in.BudgetCores = math.Inf(1)
	st.fallback.Decide(in, st.baseline)
	return st.counterfactual(obs)
}

// counterfactual is obs with each app's Replicas the target the executor
// would have in force had the Soldier written its recommendations (the live
// replicas before its first tick): what recommend mode's stabiliser and
// guards hold against, in st.counter.
func (st *State) counterfactual(obs *Observation) *Observation {
	c := &st.counter
	c.Apps = append(c.Apps[:0], obs.Apps...)
	c.P99, c.ErrorRate = obs.P99, obs.ErrorRate
	for i := range c.Apps {
		if cur := st.exec.Current(i); cur >= 0 {
			c.Apps[i].Replicas = cur
		}
	}
	return c
}

// explain fills st.apps: per app, the target proposed, its source and what
// changed it afterwards.
func (st *State) explain(source Source, mode domains.Mode) {
	pins := st.exec.npinned > 0 && mode != domains.ModeOff
	for i := range st.apps {
		st.apps[i] = AppDecision{Target: st.proposed[i], Source: source, Held: mode != domains.ModeOff && st.proposed[i] != st.unheld[i]}
		if p := st.exec.Pinned(i); pins && p >= 0 {
			st.apps[i].Target, st.apps[i].Pinned = p, true
		}
	}
	for _, g := range st.guards {
		st.apps[g.App].Guard = g.Name
	}
}
