package domains

import "time"

// Scenario drives a simulation: traffic per domain replayed from traces, and
// events layered on top.
type Scenario struct {
	Name     string
	Start    time.Time     // wall-clock time of the first tick; selects the trace window
	Duration time.Duration // simulated time; required, > 0
	Seed     uint64        // randomness seed; default 1
	// Noise is the standard deviation of the multiplicative per-app, per-tick
	// demand noise. Default 0.05.
	Noise   float64
	Traffic []Traffic
	Events  []Event
}

// TraceFormat names a trace file layout.
type TraceFormat string

const (
	// FormatTimeseries is a header line, then "time,count" rows, one per minute;
	// minutes without a row are zero.
	FormatTimeseries TraceFormat = "timeseries"
	// FormatAzureFunctions is one row per function with minute_1..minute_N count
	// columns and hash columns read by name.
	FormatAzureFunctions TraceFormat = "azure-functions"
)

// Traffic maps a trace onto one domain's apps.
type Traffic struct {
	Domain string
	Trace  string // path, resolved against the scenario file's directory
	Format TraceFormat
	// PeakRPS is the domain-level request rate the trace's maximum maps to.
	PeakRPS float64
	// FunctionOffset and FunctionStride pick which functions of an
	// azure-functions trace feed the domain's apps, from the busiest down:
	// ranks Offset, Offset+Stride, ... Defaults 0 and 1.
	FunctionOffset int
	FunctionStride int
}

// EventKind names what an event does.
type EventKind string

const (
	// EventFlashSale multiplies a domain's demand, ramping up and down.
	EventFlashSale EventKind = "flash-sale"
	// EventBatchWindow multiplies a domain's demand for a scheduled window,
	// optionally repeating.
	EventBatchWindow EventKind = "batch-window"
	// EventSlowDependency multiplies one app set's service time.
	EventSlowDependency EventKind = "slow-dependency"
)

// Event is a disturbance at a scenario offset.
type Event struct {
	Kind   EventKind
	Domain string        // flash-sale, batch-window
	App    string        // slow-dependency: "domain/set"
	At     time.Duration // offset from the scenario start
	Ramp   time.Duration // linear ramp up and down; default 0
	Hold   time.Duration // time at full effect; required
	Every  time.Duration // repeat period; 0: once
	// Multiplier scales the domain's demand at full effect (flash-sale, batch-window); > 0.
	Multiplier float64
	// ServiceTimeFactor scales the app set's service time at full effect (slow-dependency); > 0.
	ServiceTimeFactor float64
}

// Factor is the event's effect strength in [0, 1] at offset t from the scenario start.
func (e *Event) Factor(t time.Duration) float64 {
	rel := t - e.At
	if rel < 0 {
		return 0
	}
	if e.Every > 0 {
		rel %= e.Every
	}
	switch {
	case rel < e.Ramp:
		return float64(rel) / float64(e.Ramp)
	case rel < e.Ramp+e.Hold:
		return 1
	case rel < 2*e.Ramp+e.Hold:
		return 1 - float64(rel-e.Ramp-e.Hold)/float64(e.Ramp)
	}
	return 0
}
