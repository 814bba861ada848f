package baseline

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// HPASettings configure the HPA policy: one HorizontalPodAutoscaler per app,
// all alike, on CPU utilisation.
type HPASettings struct {
	// Target is the target average CPU utilisation, (0, 1]. Default: the
	// config's soldier target_utilisation (0.7 unless set).
	Target float64
	// Tolerance is the controller's usage-ratio dead band (a direction's
	// Behaviour tolerance overrides it). Default DefaultTolerance.
	Tolerance float64
	// SyncPeriod is how often the controller reconciles. Default DefaultSyncPeriod.
	SyncPeriod time.Duration
	// NoBehaviour says the HPAs have no spec.behavior: the controller's legacy
	// path (scale-up to at most max(2x, 4) per reconcile, the highest
	// recommendation of the last DownscaleWindow either way) and Behaviour is
	// unused. Default false: spec.behavior set, with Behaviour's policies.
	// (An HPA created without spec.behavior keeps none: the API server
	// fills in only a behaviour that is given.)
	NoBehaviour bool
	// DownscaleWindow is the legacy path's stabilisation window
	// (--horizontal-pod-autoscaler-downscale-stabilization). Default
	// DefaultDownscaleWindow.
	DownscaleWindow time.Duration
	// Behaviour is spec.behavior. Default DefaultBehaviour().
	Behaviour Behaviour
}

// DefaultHPASettings are the Kubernetes defaults with the config's target
// utilisation and spec.behavior set to DefaultBehaviour().
func DefaultHPASettings(cfg *domains.Config) HPASettings {
	return HPASettings{
		Target:          cfg.Soldier.TargetUtilisation,
		Tolerance:       DefaultTolerance,
		SyncPeriod:      DefaultSyncPeriod,
		DownscaleWindow: DefaultDownscaleWindow,
		Behaviour:       DefaultBehaviour(),
	}
}

// LegacyHPASettings are DefaultHPASettings for HPAs without spec.behavior,
// which the controller scales by its legacy path: what an HPA created
// without a behaviour runs.
func LegacyHPASettings(cfg *domains.Config) HPASettings {
	set := DefaultHPASettings(cfg)
	set.NoBehaviour = true
	return set
}

// HPA runs one HPA per app against the simulator.
//
// Mapping onto the simulator's telemetry, which is the metrics pipeline's view
// (Cluster.TelemetryLag old): the HPA's currentReplicas is the app's replica
// target (spec.replicas); its ready pods with a metric are the telemetry's
// Ready replicas and their utilisation its CPURequestUtil (CPU used over CPU
// requested, above 1 up to the app set's cpu_limit_ratio as metrics-server
// reports burstable pods); its not-yet-ready pods are
// the telemetry's Starting and Pending replicas plus the replicas created
// since the telemetry was taken (the pod list is live, the metrics are not:
// new pods are Pending). Replicas removed since are ignored, taken from
// pending, then starting, then ready as the simulator removes them. Every
// ready replica reports a metric, so no pod is missing one.
//
// The controller reconciles on the first tick and then on the first tick at
// or after each SyncPeriod mark (with a 10 s tick and a 15 s period: ticks 0,
// 20, 30, 50, 60 s, ..., four reconciles a minute), and its clock is the
// mark, so windows and rate periods see the controller's cadence rather
// than the tick's. The recommendation history starts with one entry per app at
// its initial replicas, as for an HPA that has been holding that count.
//
// History and scale events live in rings preallocated per app: Decide does
// not allocate. Each app's window bounds are kept between reconciles
// (extreme) and its history rescanned only when the entry holding one leaves
// its window.
type HPA struct {
	set      HPASettings
	min, max []int32

	// Recommendation history, per app histLen entries: nominal reconcile
	// time in Unix nanoseconds (math.MinInt64: unused) and replicas.
	histAt  []int64
	histRep []int32
	histLen int
	// Per app, the history's lowest entry in the scale-up window, its
	// highest in the scale-down window (spec.behavior) and its highest in
	// the downscale window (legacy path); only those the settings use.
	up, down, peak []extreme
	fullScan       bool         // rescan every reconcile, as a test's reference
	events         []ScaleEvent // per app, evLen entries
	evLen          int
	syncs          int // reconciles done; selects the ring slot
	reasons        []string

	started bool
	next    time.Time // next sync mark
}

// NewHPA builds the HPA policy for cfg's apps.
func NewHPA(cfg *domains.Config, set HPASettings) *HPA {
	apps := cfg.Apps()
	h := &HPA{set: set, min: make([]int32, len(apps)), max: make([]int32, len(apps)), reasons: make([]string, len(apps))}
	for i, a := range apps {
		h.min[i], h.max[i] = int32(a.MinReplicas), int32(a.MaxReplicas)
	}
	b := &set.Behaviour
	// A ring holds every entry younger than the longest window or period: one
	// per reconcile, plus the current one.
	window := max(b.ScaleUp.StabilizationWindow, b.ScaleDown.StabilizationWindow)
	if set.NoBehaviour {
		window = set.DownscaleWindow
	}
	period := max(b.ScaleUp.longest(), b.ScaleDown.longest())
	h.histLen = int(window/set.SyncPeriod) + 2
	h.evLen = int(period/set.SyncPeriod) + 2
	h.histAt = make([]int64, len(apps)*h.histLen)
	for i := range h.histAt {
		h.histAt[i] = math.MinInt64
	}
	h.histRep = make([]int32, len(apps)*h.histLen)
	h.up, h.down, h.peak = make([]extreme, len(apps)), make([]extreme, len(apps)), make([]extreme, len(apps))
	h.events = make([]ScaleEvent, len(apps)*h.evLen)
	return h
}

// Reason is why the last reconcile set app id's replicas.
func (h *HPA) Reason(id int) string { return h.reasons[id] }

// Decide reconciles every app's HPA when a sync is due and leaves the targets
// untouched otherwise.
func (h *HPA) Decide(now time.Time, t *sim.Telemetry, targets []int32) {
	if !h.started {
		h.started = true
		h.next = now
		for i := range targets {
			h.histAt[i*h.histLen], h.histRep[i*h.histLen] = now.UnixNano(), targets[i]
			e := extreme{rep: targets[i], at: now.UnixNano()}
			h.up[i], h.down[i], h.peak[i] = e, e, e
		}
		h.syncs = 1
	}
	if now.Before(h.next) {
		return
	}
	at := h.next
	for !h.next.After(now) {
		at = h.next
		h.next = h.next.Add(h.set.SyncPeriod)
	}
	hs, es := h.syncs%h.histLen, h.syncs%h.evLen
	h.syncs++
	upCut := at.Add(-h.set.Behaviour.ScaleUp.StabilizationWindow).UnixNano()
	downCut := at.Add(-h.set.Behaviour.ScaleDown.StabilizationWindow).UnixNano()
	peakCut := at.Add(-h.set.DownscaleWindow).UnixNano() - 1 // entries at the cut count
	// Entries are recorded at earlier marks: a zero scale-up window holds none.
	upUsed := !h.set.NoBehaviour && h.set.Behaviour.ScaleUp.StabilizationWindow > 0
	// One input for every app, its per-app fields set in turn.
	in := HPAInput{
		Now: at, Target: h.set.Target, Tolerance: h.set.Tolerance,
		NoBehaviour: h.set.NoBehaviour, DownscaleWindow: h.set.DownscaleWindow, Behaviour: h.set.Behaviour,
	}
	for i := range targets {
		a := &t.Apps[i]
		cur := targets[i]
		ready, notReady := a.Ready, a.Starting+a.Pending
		if total := a.Ready + a.Starting + a.Pending; cur > total {
			notReady += cur - total // created since the telemetry: pending
		} else if cut := total - cur; cut > 0 {
			if cut > notReady {
				ready -= cut - notReady
			}
			notReady = max(0, notReady-cut)
		}
		histAt := h.histAt[i*h.histLen : (i+1)*h.histLen]
		histRep := h.histRep[i*h.histLen : (i+1)*h.histLen]
		b := noBounds
		switch {
		case h.set.NoBehaviour:
			b.peak = h.peak[i].highest(histAt, histRep, peakCut, h.fullScan)
		default:
			if upUsed {
				b.up = h.up[i].lowest(histAt, histRep, upCut, h.fullScan)
			}
			b.down = h.down[i].highest(histAt, histRep, downCut, h.fullScan)
		}
		evs := h.events[i*h.evLen : (i+1)*h.evLen]
		in.Current, in.Ready, in.NotReady, in.Utilisation = cur, ready, notReady, a.CPURequestUtil
		in.Min, in.Max, in.Events = h.min[i], h.max[i], evs
		n, desired, record, reason := recommendWithin(&in, b)
		if record {
			ns := at.UnixNano()
			histAt[hs], histRep[hs] = ns, desired
			h.up[i].lower(desired, ns)
			h.down[i].raise(desired, ns)
			h.peak[i].raise(desired, ns)
		} else {
			histAt[hs] = math.MinInt64
		}
		if n != cur {
			evs[es] = ScaleEvent{At: at, Change: n - cur}
		} else {
			evs[es] = ScaleEvent{}
		}
		h.reasons[i] = reason
		targets[i] = n
	}
}

// extreme is an app's highest (or lowest) recommendation in a window and
// the time of the newest history entry holding it, Unix nanoseconds
// (math.MinInt64: none). While that entry stays in the window, the window's
// extreme is that value or an entry recorded since (raise, lower): the
// history needs a scan only when it leaves. The ring overwrites only entries
// older than every window it serves (NewHPA sizes it so), so a kept entry is
// never one the ring has lost.
type extreme struct {
	rep int32
	at  int64
}

// highest is the highest entry of the history (at, rep) recorded after
// cut, math.MinInt32 for none; rescanning when its kept entry is not (or
// always, with full).
func (e *extreme) highest(at []int64, rep []int32, cut int64, full bool) int32 {
	if e.at <= cut || full {
		*e = extreme{rep: math.MinInt32, at: math.MinInt64}
		for k, ns := range at {
			if ns > cut && (rep[k] > e.rep || rep[k] == e.rep && ns > e.at) {
				e.rep, e.at = rep[k], ns
			}
		}
	}
	return e.rep
}

// lowest is highest for the lowest entry, math.MaxInt32 for none.
func (e *extreme) lowest(at []int64, rep []int32, cut int64, full bool) int32 {
	if e.at <= cut || full {
		*e = extreme{rep: math.MaxInt32, at: math.MinInt64}
		for k, ns := range at {
			if ns > cut && (rep[k] < e.rep || rep[k] == e.rep && ns > e.at) {
				e.rep, e.at = rep[k], ns
			}
		}
	}
	return e.rep
}

// raise notes an entry of r recorded at ns for a highest.
func (e *extreme) raise(r int32, ns int64) {
	if r >= e.rep || e.at == math.MinInt64 {
		e.rep, e.at = r, ns
	}
}

// lower notes an entry of r recorded at ns for a lowest.
func (e *extreme) lower(r int32, ns int64) {
	if r <= e.rep || e.at == math.MinInt64 {
		e.rep, e.at = r, ns
	}
}
