package soldier

import (
	"math"
	"slices"
	"time"
)

// Learning service and startup times. An app whose config sets no service
// time (domains.AppSet.Learn: a discovered app) has it learned from what
// the Soldier observes, so that nobody has to guess it:
//
//	cores used    = util x cpu x ready          (util: CPU use over request)
//	cpu seconds   = cores used / rps            (CPU-seconds per request)
//	capacity      = cpu / cpu seconds           (requests/s of one replica at full use)
//	service time  = concurrency / capacity
//	              = concurrency x util x ready / rps
//
// which is the service time under which the Soldier's own identity, ready
// x util x capacity = rps (Demand), holds for the app. A tick gives a
// sample only under non-trivial load (ServiceTimeSample); the estimate is
// the median of the last EstimateWindow samples, so a GC pause or a deploy
// moves it by at most one rank. The startup time is the median of the
// ticks' AppObservation.StartupSeconds. Both are shown in `regiment
// episodes why` and recorded in every step.

// Learning bounds.
const (
	// EstimateWindow is how many samples an Estimator keeps: 90, 15 minutes
	// of 10 s ticks.
	EstimateWindow = 90
	// EstimateMinSamples is how many samples an Estimator needs before it
	// gives an estimate: 6, a minute of 10 s ticks.
	EstimateMinSamples = 6
	// LearnMinRPS and LearnMinCPUUtil are the load below which a tick gives
	// no service-time sample: idle CPU (health checks, GC, a sidecar) would
	// then pass for the requests' own.
	LearnMinRPS     = 1.0  // requests per second
	LearnMinCPUUtil = 0.05 // CPU use over request
	// LearnMaxErrorRate is the error rate above which a tick gives no
	// service-time sample: requests that fail fast, or wait and time out,
	// are not served at the usual cost.
	LearnMaxErrorRate = 0.05
	// MinServiceTime and MaxServiceTime clip a learned service time.
	MinServiceTime = 100 * time.Microsecond
	MaxServiceTime = 30 * time.Second
)

// Estimator is a robust online estimate of one positive quantity: the
// median of its last EstimateWindow samples, once it has
// EstimateMinSamples. The zero value is empty. It does not allocate.
type Estimator struct {
	ring    [EstimateWindow]float64
	scratch [EstimateWindow]float64
	n, next int
}

// Add adds sample x; a sample that is not a positive finite number is
// dropped.
func (e *Estimator) Add(x float64) {
	if !(x > 0) || math.IsInf(x, 1) {
		return
	}
	e.ring[e.next] = x
	e.next = (e.next + 1) % EstimateWindow
	e.n = min(e.n+1, EstimateWindow)
}

// Samples is how many samples the estimate is over.
func (e *Estimator) Samples() int { return e.n }

// Value is the median of the samples kept (the mean of the two middle ones
// for an even count), and false with fewer than EstimateMinSamples.
func (e *Estimator) Value() (float64, bool) {
	if e.n < EstimateMinSamples {
		return 0, false
	}
	s := e.scratch[:e.n]
	copy(s, e.ring[:e.n])
	slices.Sort(s)
	if e.n%2 == 1 {
		return s[e.n/2], true
	}
	return (s[e.n/2-1] + s[e.n/2]) / 2, true
}

// ServiceTimeSample is the service time, in seconds, one tick's
// observation o of an app of the given concurrency implies (see above):
// concurrency x CPUUtil x Ready / RPS, at most the app's p99 when that is
// known (a request's mean service time is not longer than the latency of
// its slowest percent). False when the tick says nothing reliable: the app
// blind or missing, no replica ready, load below LearnMinRPS or
// LearnMinCPUUtil, or errors above LearnMaxErrorRate.
func ServiceTimeSample(o AppObservation, concurrency float64) (float64, bool) {
	if o.Blind || o.Missing || o.Ready < 1 || !(o.RPS >= LearnMinRPS) || !(o.CPUUtil >= LearnMinCPUUtil) ||
		o.ErrorRate > LearnMaxErrorRate {
		return 0, false
	}
	st := max(concurrency, 1) * o.CPUUtil * float64(o.Ready) / o.RPS
	if o.P99 > 0 {
		st = min(st, o.P99)
	}
	if math.IsNaN(st) || math.IsInf(st, 0) {
		return 0, false
	}
	return st, true
}

// Learning is one app's learned service and startup times.
type Learning struct {
	ServiceTime, Startup Estimator
}

// Observe adds o's samples for an app of concurrency c.
func (l *Learning) Observe(o AppObservation, c float64) {
	if st, ok := ServiceTimeSample(o, c); ok {
		l.ServiceTime.Add(st)
	}
	if !o.Blind && !o.Missing && o.StartupSeconds > 0 {
		l.Startup.Add(o.StartupSeconds)
	}
}

// ServiceTimeSeconds is the learned service time, clipped to
// [MinServiceTime, MaxServiceTime], and false before there is one.
func (l *Learning) ServiceTimeSeconds() (float64, bool) {
	v, ok := l.ServiceTime.Value()
	if !ok {
		return 0, false
	}
	return min(max(v, MinServiceTime.Seconds()), MaxServiceTime.Seconds()), true
}

// LearnedApp is what a Soldier learned of one app (App.Learn) as of a tick:
// seconds, 0 before it has a value.
type LearnedApp struct {
	App         string  // "domain/app"
	ServiceTime float64 // seconds; 0: not yet, the prior (domains.PriorServiceTime) sizes the app
	Startup     float64 // seconds; 0: no pod observed becoming ready
	Samples     int     // service-time samples the value is over
}

// learn feeds this tick's observation to the learning apps and sizes each
// from its learned service time: Capacity = concurrency / service time.
// Apps that do not learn are not touched.
func (s *Soldier) learn() {
	s.learned = s.learned[:0]
	if len(s.learning) != len(s.cfg.Apps) { // none learned so far, or a reload made one learn
		if s.learning = newLearning(s.cfg.Apps); s.learning == nil {
			return
		}
	}
	for i := range s.cfg.Apps {
		a := &s.cfg.Apps[i]
		if !a.Learn {
			continue
		}
		l := &s.learning[i]
		l.Observe(s.obs.Apps[i], a.Concurrency)
		out := LearnedApp{App: a.Name, Samples: l.ServiceTime.Samples()}
		if st, ok := l.ServiceTimeSeconds(); ok {
			a.Capacity = max(a.Concurrency, 1) / st
			out.ServiceTime = st
		}
		if v, ok := l.Startup.Value(); ok {
			out.Startup = v
		}
		s.learned = append(s.learned, out)
	}
}

// newLearning is per-app learning state for apps, nil when none learns.
func newLearning(apps []App) []Learning {
	if !slices.ContainsFunc(apps, func(a App) bool { return a.Learn }) {
		return nil
	}
	return make([]Learning, len(apps))
}
