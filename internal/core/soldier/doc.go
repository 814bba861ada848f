// Package soldier turns one domain's budget into replica targets for the
// domain's apps, every Soldier tick (default 10 s).
//
// The core is pure. A Policy maps the observation and the directive's budget
// to proposed targets with a reason: SqrtStaffing (hand-written: each app's
// load sized by square-root staffing within the target utilisation's rule,
// at-risk apps first when over budget; Desired) or Learned (a trained network
// choosing each app group's utilisation, headroom and scale-down tolerance).
// The Stabiliser first floors each app's need by its domain's coherent rise
// (RiseFloor), then holds whatever was proposed to changes beyond a
// tolerance and scale-downs to the largest proposal of a 5-minute window
// (Hold). The
// Executor, a deterministic state machine, enforces the safety rules no
// policy can bypass: replica bounds, spend within budget x (1 + overage cap)
// for scale-ups, a scale-down cooldown after each scale-up, no scale-down
// while the error rate is elevated, targets held while metrics are missing,
// no-op suppression and a cap on writes per tick. Operator pins
// (OnOverride) sit above every policy and rule except the replica bounds.
//
// Above the policy, three safety nets hand the domain to the baseline
// (SqrtStaffing without a budget): a stale or missing directive; the
// rollback Ladder of the domain's priority tier (alert, freeze, revert on
// p99 / SLO sustained, with a cool-off before handing back); and the
// automatic fallback, a rolling comparison of the policy against the
// baseline computed in shadow every tick (Compare, FallbackConfig). Modes:
// active; recommend (and shadow, its deprecated alias: the policy and the
// baseline decide and are recorded, and nothing is written: Tick calls the
// Actuator only in active mode); off. Decide is all of that as one function
// of the observation, the directive in force, the Soldier's State and the
// time: it returns the writes and, per app, what proposed its target (policy,
// baseline, ladder rung, automatic fallback, recommend), whether the stabiliser held it, an
// operator's pin set it, or which guard clipped it. Soldier.Tick is the shell
// that observes, calls Decide, actuates, reports and records (its report,
// report.go, is the one DomainReport builder). Soldier.PolicyInput is the
// input the next Decide gives the policy, for a caller that chooses the
// policy's action itself: the trainer, whose Soldiers are these.
//
// Per-app isolation: an Actuator reports the apps whose writes failed
// (WriteErrors); the tick goes on for the others and still reports and
// records. A failed app has no target in force (the observation stands for
// it) and is retried after RetryDelay ticks (1, 2, 4 ... up to
// MaxRetryDelay), held by the guard backoff meanwhile; an app observed
// Missing is held (guard not_found) and never written. TickResult.Failing
// and Record.Failing list them every tick, for metrics, Events and the
// ledger. TickResult.BreachingAtMax and Record.BreachingAtMax list the apps
// over their SLO with their ceiling's replicas ready (AppendSLOStatus),
// which no policy serves, and TickResult.LimitedByMax and
// Record.LimitedByMax the apps whose sizing wants more than that ceiling,
// breaching or not yet (AppendLimited); a Reminder paces what the shells
// tell of them.
//
// Units: cores are CPU cores, rates are per second, latencies are seconds.
// Apps are indexed by their position in the domain (App.Index), in config
// order; the ladder and fallback windows count Soldier ticks.
//
// Directives pass a wire.Intake (OnDirective): valid, for the domain, newer
// than the last accepted while that one is in force, current, and within the
// bounds a real Commander of the config keeps (IntakeBounds: terms from its
// clock, one seq a Commander tick, TTL up to twice directive_ttl, cores the
// share of the pool). A rejected directive leaves the last good one in force.
//
// Concurrency: a Soldier's Tick and Run must not be called concurrently with
// each other; directives and overrides may arrive from any goroutine
// (OnDirective, OnOverride), and Reload is safe with Tick. ReloadApps takes a
// changed set of apps (discovery) between two ticks: per-app state moves by
// app name, and its swap moves the caller's Observer and Actuator under the
// same lock, so an Observe never sees another set of apps than Decide.
//
// Learned service times (estimator.go): an app whose config sets no
// service time (App.Learn: a discovered app) is sized from the median of
// its busy ticks' service-time samples, concurrency x CPUUtil x Ready /
// RPS clipped to its p99 (ServiceTimeSample), once there are
// EstimateMinSamples; the prior's Capacity until then. Record.Learned
// carries the values, and its pods' startup, every tick. Apps that set a
// service time are never touched. The estimates are kept across ReloadApps
// by app name, not across a restart.
//
// Restarts: Snapshot and Restore (persist.go) carry the decision state a
// restart must keep (each app's last scale-up and stabilisation window by
// app name, the ladder, the automatic fallback, the last mode) through a
// versioned JSON encoding the daemon keeps in its store; a restored Soldier
// decides as one that never stopped. A state older than MaxStateAge is not
// restored.
//
// Package soldier declares the Actuator, Observer, Publisher and Recorder
// roles it needs; it never imports NATS, bbolt, client-go or HCL.
package soldier
