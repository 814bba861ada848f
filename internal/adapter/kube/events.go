package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/regimentd/regiment/internal/core/soldier"
)

// Reasons of the Events a Soldier records on its apps' workloads.
const (
	// EventWriteFailed (Warning): the Soldier could not write the app's
	// target: its write failed, or its workload or HPA is not found.
	EventWriteFailed = "RegimentWriteFailed"
	// EventWriteRecovered (Normal): the app is written again.
	EventWriteRecovered = "RegimentWriteRecovered"
	// EventScalingLimited (Warning): the app breaches its SLO with its
	// max_replicas ready, so only a higher max_replicas serves it (the
	// HPA's ScalingLimited condition, with the SLO breach).
	EventScalingLimited = "RegimentScalingLimited"
	// EventWantsMoreThanMax (Warning): the app's sizing wants more replicas
	// than its max_replicas, breaching or not yet: raise it before the
	// breach (the HPA's ScalingLimited condition itself).
	EventWantsMoreThanMax = "RegimentWantsMoreThanMax"
)

// DefaultEventRepeat is how often a Warning is recorded again for an app
// that keeps failing for the same reason.
const DefaultEventRepeat = 10 * time.Minute

// Events records Kubernetes Events (core/v1) on the workloads of the apps a
// Soldier could not write (soldier.TickResult.Failing): a Warning
// EventWriteFailed when an app starts failing, when its reason changes and
// every Repeat while it goes on, and a Normal EventWriteRecovered when it
// is written again. So a failing app costs one Event per Repeat, whatever
// the tick; client-go's correlator aggregates and rate-limits on top.
//
// New starts nothing; Run sends the Events until its context ends. Report
// records nothing before Run (nor after it): what it would have recorded
// is recorded at the first Report while Run runs. Report is safe for
// concurrent use.
//
// ReportAtMax records a Warning EventScalingLimited on the workload of an
// app that breaches its SLO with its max_replicas ready, when it starts and
// every Repeat while it lasts; no Normal follows when it ends, since such an
// app comes and goes with its peaks. ReportLimited does the same with a
// Warning EventWantsMoreThanMax for an app whose sizing wants more than its
// max_replicas, breaching or not yet.
type Events struct {
	client    kubernetes.Interface
	component string
	repeat    time.Duration

	mu       sync.Mutex
	recorder record.EventRecorder // nil unless Run runs
	targets  []Target
	last     map[string]eventState // by app name, the apps failing at the last Report
	atMax    soldier.Reminder      // of the apps at their ceiling, by name
	limited  soldier.Reminder      // of the apps whose sizing wants more than their ceiling, by name
}

type eventState struct {
	reason string
	at     time.Time // of the last Warning
}

// NewEvents returns the Events of a Soldier writing targets through client;
// component names the source (say "regiment-soldier-<domain>"); repeat 0
// is DefaultEventRepeat.
func NewEvents(client kubernetes.Interface, component string, targets []Target, repeat time.Duration) *Events {
	if repeat <= 0 {
		repeat = DefaultEventRepeat
	}
	return &Events{client: client, component: component, repeat: repeat, targets: targets, last: map[string]eventState{},
		atMax: soldier.Reminder{Every: repeat}, limited: soldier.Reminder{Every: repeat}}
}

// Run sends the Events to the API server until ctx ends.
func (e *Events) Run(ctx context.Context) {
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: e.client.CoreV1().Events("")})
	e.mu.Lock()
	e.recorder = b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: e.component})
	e.mu.Unlock()
	<-ctx.Done()
	e.mu.Lock()
	e.recorder = nil
	e.mu.Unlock()
	b.Shutdown()
}

// SetTargets replaces the apps reported on, indexed like the Soldier's.
func (e *Events) SetTargets(ts []Target) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.targets = ts
}

// Report records the Events of one tick at now (the Soldier's clock) from
// the apps it could not write, in domain order; it returns how many it
// recorded.
func (e *Events) Report(now time.Time, failing []soldier.Failing) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.recorder == nil {
		return 0
	}
	n := 0
	seen := make(map[string]bool, len(failing))
	for _, f := range failing {
		if f.App < 0 || f.App >= len(e.targets) {
			continue
		}
		t := &e.targets[f.App]
		seen[t.App.Name] = true
		st, ok := e.last[t.App.Name]
		if ok && st.reason == f.Reason && now.Sub(st.at) < e.repeat {
			continue
		}
		e.recorder.Eventf(workloadRef(t), corev1.EventTypeWarning, EventWriteFailed, "%s", failedMessage(t, f))
		e.last[t.App.Name] = eventState{reason: f.Reason, at: now}
		n++
	}
	for _, t := range e.targets {
		if _, ok := e.last[t.App.Name]; ok && !seen[t.App.Name] {
			e.recorder.Eventf(workloadRef(&t), corev1.EventTypeNormal, EventWriteRecovered, "regiment writes app %s again", t.App.Name)
			delete(e.last, t.App.Name)
			n++
		}
	}
	for name := range e.last { // apps no longer in the domain
		if !seen[name] {
			delete(e.last, name)
		}
	}
	return n
}

// ReportAtMax records a Warning EventScalingLimited on the workload of each
// app of atMax (soldier.TickResult.BreachingAtMax, in domain order) when it
// starts breaching with its max_replicas ready and again every Repeat while
// it goes on; an app clear for a whole Repeat starts afresh. slo is the
// domain's p99 objective, seconds (0: none). It returns how many it
// recorded; like Report, nothing before Run.
func (e *Events) ReportAtMax(now time.Time, atMax []soldier.AtMax, slo float64) int {
	return e.warnEvery(&e.atMax, now, len(atMax), EventScalingLimited, func(i int) int { return atMax[i].App }, func(i int) string {
		a := atMax[i]
		return fmt.Sprintf("breaches its SLO with its max_replicas (%d) ready: p99 %.3g s (objective %.3g s), errors %.2g%%; "+
			"raise max_replicas: no autoscaler serves more", a.Max, a.P99, slo, 100*a.ErrorRate)
	})
}

// ReportLimited records a Warning EventWantsMoreThanMax on the workload of
// each app of limited (soldier.TickResult.LimitedByMax, in domain order)
// when its sizing starts wanting more replicas than its max_replicas and
// again every Repeat while it goes on; an app clear for a whole Repeat
// starts afresh. It returns how many it recorded; like Report, nothing
// before Run.
func (e *Events) ReportLimited(now time.Time, limited []soldier.Limited) int {
	return e.warnEvery(&e.limited, now, len(limited), EventWantsMoreThanMax, func(i int) int { return limited[i].App }, func(i int) string {
		l := limited[i]
		return fmt.Sprintf("wants %d replicas, more than its max_replicas (%d): raise it before the app breaches its SLO", l.Wanted, l.Max)
	})
}

// warnEvery records a Warning of reason on the workload of each of n apps
// that r says is due at now: the i-th is app(i) (an index into the
// targets; one outside them is skipped), the Event's message "app <name> "
// then what(i). It returns how many it recorded; nothing before Run.
func (e *Events) warnEvery(r *soldier.Reminder, now time.Time, n int, reason string, app func(i int) int, what func(i int) string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.recorder == nil {
		return 0
	}
	due := r.Tell(now, n, func(i int) string {
		if a := app(i); a >= 0 && a < len(e.targets) {
			return e.targets[a].App.Name
		}
		return ""
	})
	for _, i := range due {
		t := &e.targets[app(i)]
		e.recorder.Eventf(workloadRef(t), corev1.EventTypeWarning, reason, "app %s %s", t.App.Name, what(i))
	}
	return len(due)
}

// failedMessage says what was not written and why, on one line.
func failedMessage(t *Target, f soldier.Failing) string {
	what := fmt.Sprintf("%d replicas", f.Target)
	if t.HPA != "" {
		what += fmt.Sprintf(" (HPA %s)", t.HPA)
	}
	switch f.Reason {
	case soldier.FailNotFound:
		return fmt.Sprintf("regiment did not set app %s to %s: %s", t.App.Name, what, f.Detail)
	default:
		return fmt.Sprintf("regiment could not set app %s to %s (%s, %d failures in a row; next attempt in %d ticks): %s",
			t.App.Name, what, f.Reason, f.Failures, f.RetryIn+1, f.Detail)
	}
}

// workloadRef refers to t's workload, whether or not it exists.
func workloadRef(t *Target) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: string(t.Kind), APIVersion: "apps/v1", Namespace: t.Namespace, Name: t.Name}
}
