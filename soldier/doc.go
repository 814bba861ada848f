// Package soldier turns one domain's budget into replica targets for the
// domain's apps, every Soldier tick (default 10 s).
//
// The core is pure: Decide maps (observation, directive, now) to proposed
// targets with a reason, and the Executor, a deterministic state machine,
// enforces the safety rules no policy can bypass: replica bounds, spend within
// budget x (1 + overage cap) for scale-ups, a scale-down cooldown after each
// scale-up, no scale-down while the error rate is elevated, no-op suppression
// and a cap on writes per tick. Soldier.Tick is the shell that observes,
// decides, executes, actuates, reports and records.
//
// Units: cores are CPU cores, rates are per second, latencies are seconds.
// Apps are indexed by their position in the domain (App.Index), in config order.
//
// Concurrency: a Soldier's Tick and Run must not be called concurrently with
// each other; directives may arrive from any goroutine (OnDirective).
//
// Package soldier declares the Actuator, Observer, Publisher and Recorder
// roles it needs; it never imports NATS, bbolt, client-go or HCL.
package soldier
