package soldier

import (
	"math"
	"slices"
	"time"
)

// Guard names, as recorded with each decision.
const (
	GuardBounds    = "bounds"     // clamped to [min, max] replicas
	GuardCooldown  = "cooldown"   // scale-down held: too soon after a scale-up
	GuardErrorVeto = "error_veto" // scale-down held: error rate elevated
	GuardBudget    = "budget"     // scale-up trimmed to budget x (1 + overage cap)
	GuardRateLimit = "rate_limit" // write deferred to a later tick
	GuardBlind     = "blind"      // target held: the app's metrics are missing
	GuardOverride  = "override"   // target set by an operator's pin (within [min, max])
	GuardNotFound  = "not_found"  // target held: the app's workload or HPA is not in the cluster
	GuardBackoff   = "backoff"    // write deferred: the app's last write failed, retried with backoff
	// GuardForeignOwner: another controller sets the app's replicas; its
	// target follows the observation and nothing is written. Recorded every
	// tick it holds, changed or not.
	GuardForeignOwner = "foreign_owner"
)

// Guard records one executor rule changing one app's proposed target.
type Guard struct {
	Name   string
	App    int // index in the domain
	Before int32
	After  int32
}

// ExecutorConfig is the executor's rules.
type ExecutorConfig struct {
	OverageCap        float64       // spend may reach budget x (1 + OverageCap) by scaling up
	ScaleDownCooldown time.Duration // per app, after its last scale-up
	ErrorRateVeto     float64       // no scale-down above this error rate
	MaxWritesPerTick  int           // 0: unlimited
	// RetryLimit caps the backoff after failed writes, in ticks (RetryDelay);
	// 0 is 1.
	RetryLimit int
}

// Change is one replica write.
type Change struct {
	App      int // index in the domain
	Replicas int32
}

// Executor enforces the safety rules between a policy and the cluster. It
// remembers each app's current target and last scale-up; it is deterministic
// and does no I/O.
//
// An operator's pin (Pin) ranks above every rule but the replica bounds: a
// pinned app's target is its pin clamped to [min, max], whatever the policy,
// the fallback or the ladder proposed, through blindness, cooldown, error veto
// and budget (its cores still count against the budget, so other apps'
// scale-ups are trimmed first), and its write goes first within the rate
// limit. Its scale-ups start the cooldown like any other, so a lapsed pin
// does not drop at once.
//
// The target in force is level-triggered: it is the one last written while
// the cluster holds it, and the observation (AppObservation.Replicas) when
// the cluster moved away from it (another writer, a Reverter) by the tick
// after the write, which gives the observation a tick to catch up with the
// write; so the next proposal that differs from what the cluster has is
// written. An app whose write failed (Failed) or whose workload is missing
// (AppObservation.Missing) has no target in force: the observation stands
// for it. A failed app is written again after a
// backoff (RetryDelay: 1 tick, 2, 4, ... up to RetryLimit), held at the
// observation (GuardBackoff) meanwhile; a missing app is held (GuardNotFound)
// and never written. Neither ranks below a pin: nothing can be written.
// An app another controller scales (AppObservation.ForeignOwner) ranks
// above even a pin: it is not written, and its target in force is what the
// other owner set, so Regiment starts from there when it leaves.
type Executor struct {
	cfg     ExecutorConfig
	current []int32     // target in force per app; -1: unknown, take the observation
	lastUp  []time.Time // last scale-up per app
	prevUp  []time.Time // lastUp before this Apply's write, per app written: restored by Failed
	pinned  []int32     // operator pin per app; -1: none
	npinned int         // apps with a pin (pinned >= 0)
	retry   []appRetry  // failed writes per app
	wrote   []bool      // per app, written at the last Apply: its observation may lag the write
	held    []bool      // scratch: not to be written this Apply
	order   []int       // scratch
}

// appRetry is one app's run of failed writes.
type appRetry struct {
	failures int    // consecutive failed writes; 0: none
	wait     int    // ticks to hold before the next attempt
	target   int32  // the target last not written
	reason   string // of the last failure, a Fail* reason
	detail   string
}

// NewExecutor returns an executor for n apps.
func NewExecutor(cfg ExecutorConfig, n int) *Executor {
	e := &Executor{cfg: cfg, current: make([]int32, n), lastUp: make([]time.Time, n), prevUp: make([]time.Time, n), pinned: make([]int32, n),
		retry: make([]appRetry, n), wrote: make([]bool, n), held: make([]bool, n), order: make([]int, 0, n)}
	for i := range e.current {
		e.current[i], e.pinned[i] = -1, -1
	}
	return e
}

// Pin sets app i's operator pin to replicas from the next Apply on; a
// negative replicas lifts it.
func (e *Executor) Pin(i int, replicas int32) {
	e.npinned -= b2i(e.pinned[i] >= 0)
	e.pinned[i] = max(replicas, -1)
	e.npinned += b2i(e.pinned[i] >= 0)
}

// Pinned is app i's operator pin, or -1 when it has none.
func (e *Executor) Pinned(i int) int32 { return e.pinned[i] }

// Forget makes every app's target in force unknown, to be taken from the
// next observation: after ticks that wrote nothing (recommend or off mode),
// what the executor last decided is not what the cluster runs.
func (e *Executor) Forget() {
	for i := range e.current {
		e.current[i] = -1
	}
}

// Current is the target in force for app i, or -1 before the first tick.
func (e *Executor) Current(i int) int32 { return e.current[i] }

// Apply turns proposed targets (modified in place into the final targets) into
// the writes to make, appending the guards that changed anything to guards.
// budget is the domain's budget in cores (+Inf: none).
func (e *Executor) Apply(now time.Time, apps []App, obs *Observation, budget float64, proposed []int32, guards []Guard, writes []Change) ([]Guard, []Change) {
	// The per-app slices cut to the apps' count, so that their indexing
	// needs no bounds check of its own.
	n := len(apps)
	current, wrote, held, retry, pinned, lastUp := e.current[:n], e.wrote[:n], e.held[:n], e.retry[:n], e.pinned[:n], e.lastUp[:n]
	oa, prop := obs.Apps[:n], proposed[:n]
	missing := false // some app is missing or in a backoff: the last pass may have work
	for i := range apps {
		if o := oa[i].Replicas; current[i] < 0 || !wrote[i] && o != current[i] {
			current[i] = o // level-triggered: the cluster moved away from the target (see Executor)
		}
		wrote[i] = false
		if r := &retry[i]; oa[i].Missing || r.failures > 0 && r.wait > 0 { // hold's cases, tested here so the call is made only when it holds
			missing = true
			if guards, held[i] = e.hold(i, obs, proposed, guards); held[i] {
				continue
			}
		} else {
			held[i] = false
		}
		a, cur, p := &apps[i], current[i], prop[i]
		if oa[i].ForeignOwner != "" {
			current[i] = oa[i].Replicas
			guards = append(guards, Guard{GuardForeignOwner, i, p, current[i]})
			prop[i] = current[i]
			continue
		}
		if pin := pinned[i]; pin >= 0 {
			if q := min(max(pin, a.Min), a.Max); q != p {
				guards = append(guards, Guard{GuardOverride, i, p, q})
				prop[i] = q
			}
			continue
		}
		if oa[i].Blind && p != cur {
			guards = append(guards, Guard{GuardBlind, i, p, cur})
			p = cur
		}
		if q := min(max(p, a.Min), a.Max); q != p {
			guards = append(guards, Guard{GuardBounds, i, p, q})
			p = q
		}
		if p < cur {
			switch {
			case now.Sub(lastUp[i]) < e.cfg.ScaleDownCooldown:
				guards = append(guards, Guard{GuardCooldown, i, p, cur})
				p = cur
			case oa[i].ErrorRate > e.cfg.ErrorRateVeto:
				guards = append(guards, Guard{GuardErrorVeto, i, p, cur})
				p = cur
			}
		}
		prop[i] = p
	}
	guards = e.capBudget(apps, budget, proposed, guards)
	return e.write(now, apps, obs, proposed, missing, guards, writes)
}

// write is Apply's last pass over the guarded proposals: no-op
// suppression, then pinned apps and the largest moves first within the
// write cap (guard rate_limit); each write becomes the target in force.
// When some app is missing, it has no target in force afterwards.
func (e *Executor) write(now time.Time, apps []App, obs *Observation, proposed []int32, missing bool, guards []Guard, writes []Change) ([]Guard, []Change) {
	n := len(apps)
	current, held, prop := e.current[:n], e.held[:n], proposed[:n]
	e.order = e.order[:0]
	for i := range apps {
		if prop[i] != current[i] && !held[i] {
			e.order = append(e.order, i)
		}
	}
	slices.SortStableFunc(e.order, func(a, b int) int {
		if pa, pb := e.pinned[a] >= 0, e.pinned[b] >= 0; pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return int(abs32(proposed[b]-e.current[b])) - int(abs32(proposed[a]-e.current[a]))
	})
	for k, i := range e.order {
		if e.cfg.MaxWritesPerTick > 0 && k >= e.cfg.MaxWritesPerTick {
			guards = append(guards, Guard{GuardRateLimit, i, proposed[i], e.current[i]})
			proposed[i] = e.current[i]
			continue
		}
		e.prevUp[i] = e.lastUp[i]
		if proposed[i] > e.current[i] {
			e.lastUp[i] = now
		}
		e.current[i], e.wrote[i] = proposed[i], true
		writes = append(writes, Change{App: i, Replicas: proposed[i]})
	}
	for i := range apps {
		if !missing {
			break
		}
		if obs.Apps[i].Missing {
			e.current[i] = -1 // nothing in force: the observation stands when it is back
		}
	}
	return guards, writes
}

// hold holds app i at the observation when it cannot be written this tick:
// its workload is missing, or it waits out the backoff of a failed write.
// It appends the guard and reports whether it held.
func (e *Executor) hold(i int, obs *Observation, proposed []int32, guards []Guard) ([]Guard, bool) {
	o, r := &obs.Apps[i], &e.retry[i]
	name := ""
	switch {
	case o.Missing:
		name = GuardNotFound
	case r.failures > 0 && r.wait > 0:
		r.wait--
		name = GuardBackoff
	default:
		return guards, false
	}
	r.target = proposed[i]
	e.current[i] = o.Replicas // level-triggered: the cluster's value, not a target that was never written
	if proposed[i] != o.Replicas {
		guards = append(guards, Guard{name, i, proposed[i], o.Replicas})
	}
	proposed[i] = o.Replicas
	return guards, true
}

// Failed notes that the write of target to app i, made by the last Apply,
// failed for reason (a Fail* reason): nothing is in force for it, a
// scale-up that was not made starts no cooldown, and it is tried again
// after RetryDelay ticks.
func (e *Executor) Failed(i int, target int32, reason, detail string) {
	e.lastUp[i] = e.prevUp[i]
	r := &e.retry[i]
	r.failures++
	r.wait = RetryDelay(r.failures, e.cfg.RetryLimit) - 1
	r.target, r.reason, r.detail = target, reason, detail
	e.current[i] = -1
}

// Written notes that app i's write succeeded: its run of failures ends.
func (e *Executor) Written(i int) { e.retry[i] = appRetry{} }

// AppendFailing appends the apps that cannot be written, in domain order:
// missing in obs, or in a run of failed writes.
func (e *Executor) AppendFailing(obs *Observation, out []Failing) []Failing {
	for i := range e.retry {
		r := &e.retry[i]
		switch {
		case obs.Apps[i].Missing:
			out = append(out, Failing{App: i, Reason: FailNotFound, Detail: "the workload or its HPA is not in the cluster",
				Target: r.target})
		case r.failures > 0:
			out = append(out, Failing{App: i, Reason: r.reason, Detail: r.detail, Target: r.target, Failures: r.failures, RetryIn: r.wait})
		}
	}
	return out
}

// capBudget trims scale-ups, the largest first, until the spend fits
// budget x (1 + overage cap). Scale-downs, replicas already running and pinned
// apps are never cut by it: a lowered budget is met by the policy over the next ticks,
// within the cooldown and veto rules.
func (e *Executor) capBudget(apps []App, budget float64, proposed []int32, guards []Guard) []Guard {
	if math.IsInf(budget, 1) {
		return guards
	}
	limit := budget * (1 + e.cfg.OverageCap)
	over := cores(apps, proposed) - limit
	if over <= 1e-9 {
		return guards
	}
	e.order = e.order[:0]
	for i := range apps {
		if proposed[i] > e.current[i] && e.pinned[i] < 0 {
			e.order = append(e.order, i)
		}
	}
	slices.SortStableFunc(e.order, func(a, b int) int {
		return int(proposed[b]-e.current[b]) - int(proposed[a]-e.current[a])
	})
	for _, i := range e.order {
		if over <= 1e-9 {
			break
		}
		up := proposed[i] - max(e.current[i], apps[i].Min)
		cut := min(up, int32(math.Ceil(over/apps[i].CPU-1e-9)))
		if cut <= 0 {
			continue
		}
		before := proposed[i]
		proposed[i] -= cut
		over -= float64(cut) * apps[i].CPU
		guards = append(guards, Guard{GuardBudget, i, before, proposed[i]})
	}
	return guards
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// b2i is 1 for true, 0 for false: the compiler makes it a flag, no branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
