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
	Noise float64

	// Traffic structure and warm-up (issue 31, traffic).

	// ArrivalNoise says how each app's per-tick arrivals vary around its
	// demand: NoiseMultiplicative (the default) multiplies the rate by
	// 1 + Noise x z, z standard normal, whatever the app's size;
	// NoisePoisson draws the tick's arrival count from a Poisson law of mean
	// rate x tick (its normal approximation above sim.PoissonNormalAbove
	// arrivals), so the relative noise is 1/sqrt(rate x tick) and Noise is
	// not used. Default NoiseMultiplicative.
	ArrivalNoise ArrivalNoise
	// Warmup is simulated time from the start that no metric accounts: the
	// initial state is sized for minute 0's demand, and a trace that moves
	// far in the first minutes breaches for reasons no policy chose. Ticks
	// at offsets <= Warmup are run but not accounted. In [0, Duration);
	// default 0 (every tick after the initial state counts).
	Warmup time.Duration

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
	// PeakRPS is the domain-level request rate the trace's maximum maps to,
	// in requests per second; > 0. PeakRPSOf says over which minutes.
	PeakRPS float64
	// PeakRPSOf says which maximum maps to PeakRPS: the whole trace's (the
	// default) or the replayed window's, so that a scenario on a quiet day
	// peaks as high as one on a busy day. For an azure-functions trace the
	// maximum is the picked functions' summed maxima (picked by their
	// maxima over the whole trace either way). Default PeakOfTrace.
	PeakRPSOf PeakOf
	// AppSkew is the sigma of the log-normal weights that split a timeseries
	// trace's demand between the domain's apps (each app's share is
	// exp(AppSkew x z), z standard normal from the scenario seed, normalised):
	// the larger, the more of the demand a few apps carry. In [0,
	// MaxAppSkew]; default 1. Defaults replaces 0, so EqualShares says 0
	// (app_skew = 0 in a scenario file).
	AppSkew float64
	// EqualShares gives every app of the domain the same share of a
	// timeseries trace's demand: AppSkew 0. Default false.
	EqualShares bool
	// FunctionRows says which rows of an azure-functions trace are candidates
	// for the domain's apps, by 0-based row index in file order, before they
	// are ranked: all (the default), the even rows or the odd rows. Even and
	// odd give a training and an evaluation set that share no function.
	// Default RowsAll.
	FunctionRows Rows
	// FunctionOffset and FunctionStride pick which functions of an
	// azure-functions trace feed the domain's apps, from the busiest of the
	// FunctionRows down: ranks Offset, Offset+Stride, ... Defaults 0 and 1.
	FunctionOffset int
	FunctionStride int
	// Functions says how an azure-functions trace's picked functions feed
	// the domain: one function per app (the default), or summed into one
	// domain-level shape that is split between the apps as a timeseries
	// trace is (AppSkew); summed picks every function of ranks Offset,
	// Offset+Stride, ... of the FunctionRows, however many apps there are.
	// Individual functions of the 2019 sample are mostly timer-like or
	// sparse, unlike a service's request rate; their sum is a smooth diurnal
	// day. Default FunctionsOnePerApp.
	Functions Functions

	// Traffic structure (issue 31, traffic).

	// BurstSigma is the standard deviation of the natural log of a
	// multiplicative burst shared by all of the domain's apps: a stationary
	// AR(1) process per minute, linearly interpolated between minutes, of
	// mean 1 (exp(x - BurstSigma^2/2)). 0 turns it off. In [0, MaxBurstSigma];
	// default 0. It is noise: ExpectedFuture and the initial state leave it
	// out.
	BurstSigma float64
	// BurstCorrelation is the burst's lag-1 autocorrelation from one minute
	// to the next, in [0, MaxBurstCorrelation]; default 0 (a fresh draw each
	// minute).
	BurstCorrelation float64
	// AppOwn is the exponent a of each app's own component in a timeseries
	// (or summed azure-functions) domain: app k's demand is its share x
	// shape(m)^(1-a) x shape(m + shift_k)^a, with shift_k a whole number of
	// minutes drawn uniformly in [-AppShift, AppShift] per app from the
	// seed; a scenario reads up to AppShift beyond its window. Which app
	// takes which shift and share depends on the seed, so the domain's sum
	// moves with the seed by about a percent. 0 is today's one
	// shape split by weights; 1 gives every app its own time-shifted copy.
	// In [0, 1]; default 0.
	AppOwn float64
	// AppShift bounds the time shift of an app's own component (AppOwn), a
	// whole number of minutes. In (0, MaxAppShift]; default 1h.
	AppShift time.Duration
}

// ArrivalNoise names how per-tick arrivals vary around the demand
// (Scenario.ArrivalNoise).
type ArrivalNoise string

const (
	NoiseMultiplicative ArrivalNoise = "multiplicative" // rate x (1 + Noise x z) per app and tick
	NoisePoisson        ArrivalNoise = "poisson"        // arrival count per tick ~ Poisson(rate x tick)
)

// Bounds of the traffic-structure fields of Traffic.
const (
	MaxBurstSigma       = 1.0
	MaxBurstCorrelation = 0.999
	MaxAppShift         = 6 * time.Hour
)

// MaxAppSkew is the largest Traffic.AppSkew: at 10 one app of a hundred
// carries nearly all of a domain's demand, and far above it the weights
// overflow.
const MaxAppSkew = 10

// PeakOf names the minutes of a trace whose maximum maps to Traffic.PeakRPS.
type PeakOf string

const (
	// PeakOfTrace is the maximum over the whole trace file.
	PeakOfTrace PeakOf = "trace"
	// PeakOfWindow is the maximum over the minutes the scenario replays: from
	// its start to its end, both included.
	PeakOfWindow PeakOf = "window"
)

// Rows names the rows of an azure-functions trace a domain draws from.
type Rows string

const (
	RowsAll  Rows = "all"  // every row
	RowsEven Rows = "even" // rows 0, 2, 4, ... in file order
	RowsOdd  Rows = "odd"  // rows 1, 3, 5, ... in file order
)

// Functions says how an azure-functions trace's functions map onto apps.
type Functions string

const (
	FunctionsOnePerApp Functions = "one-per-app" // app k takes the function of rank Offset + k x Stride
	FunctionsSummed    Functions = "summed"      // the picked functions' sum is the domain's shape
)

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
	// Announced is whether the operator's calendar had the event
	// (flash-sale, batch-window), and AnnouncedAt the offset from the
	// scenario start it had it at, which need not be At: the postmortem's
	// sale went live 20 minutes before the plan.
	Announced   bool
	AnnouncedAt time.Duration
}

// Planned is the operator's calendar as the scenario announced it, for the
// Regiment config's Calendar (Config.WithPlanned): each announced event at
// the scenario's start + AnnouncedAt, for its ramp and hold, at its
// multiplier; a repeating one once per repeat announced before the
// scenario's end + MaxEventLead, the latest whose lead can open within it.
// nil when none is announced.
func (s *Scenario) Planned() []Planned {
	var out []Planned
	for _, e := range s.Events {
		if !e.Announced {
			continue
		}
		for at := e.AnnouncedAt; at < s.Duration+MaxEventLead; at += e.Every {
			out = append(out, Planned{Name: string(e.Kind), Domain: e.Domain, Start: s.Start.Add(at),
				Duration: e.Ramp + e.Hold, Load: e.Multiplier})
			if e.Every <= 0 {
				break
			}
		}
	}
	return out
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
