package report

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/regimentd/regiment/internal/offline/sim"
)

// maxLoad is the share of an app's capacity beyond which the simulator's
// queue builds a backlog (sim's maxRho): an estimate at or above it is a
// breach.
const maxLoad = 0.98

// P99 estimates the p99 response time, seconds, of an app serving rps
// requests per second on replicas replicas of concurrency servers each,
// serviceTime seconds per request: the steady-state M/M/c queue of the
// simulator (sim.Queue) with c = replicas x concurrency and mu =
// 1/serviceTime. It is 0 without requests and +Inf when the load reaches
// maxLoad of the capacity c x mu.
func P99(rps, replicas, serviceTime float64, concurrency int) float64 {
	if rps <= 0 {
		return 0
	}
	c := int(replicas) * max(1, concurrency)
	mu := 1 / serviceTime
	if c <= 0 || rps >= maxLoad*float64(c)*mu {
		return math.Inf(1)
	}
	return sim.Queue{Lambda: rps, Mu: mu, C: c}.P99()
}

// Figures are one way of running an app or a domain over the recorded steps.
type Figures struct {
	CoreHours float64 // replicas x cpu_per_replica over each step's tick
	// BreachMinutes are app-minutes whose estimated p99 (P99) exceeds the
	// domain's latency objective; steps without a request rate count none.
	BreachMinutes float64
	Changes       int     // replica target changes
	MeanReplicas  float64 // over the steps
	PeakReplicas  float64
}

// AppResult compares one app both ways.
type AppResult struct {
	Name              string
	Live, Recommended Figures
	HPAMin, HPAMax    float64 // the live HPA's bounds; 0 when not observed
	// ServiceTime is the service time the estimates used, seconds: the
	// learned one (Learned) when the Soldier recorded one, else the config's.
	ServiceTime float64
	Learned     bool
}

// DomainResult compares one domain both ways; Apps are sorted by the
// absolute difference in core-hours, largest first.
type DomainResult struct {
	Name              string
	Steps             int
	From, To          time.Time
	Live, Recommended Figures // summed over the apps (Mean and Peak: of the summed replicas)
	// RecordedBreachMinutes are the minutes the domain missed its SLO as
	// recorded (measured p99 and error rate, live side only).
	RecordedBreachMinutes float64
	// AtMaxApps counts the apps that breached with their ceiling's
	// replicas ready at some step (App.AtMaxSteps > 0), measured.
	AtMaxApps int
	// LimitedApps counts the apps whose sizing wanted more replicas than
	// their ceiling at some step (App.LimitedSteps > 0).
	LimitedApps int
	Apps        []AppResult
}

// Compare estimates each domain of rec both ways, each step standing for one
// tick.
func Compare(rec *Recorded) []DomainResult {
	out := make([]DomainResult, 0, len(rec.Domains))
	tickHours, tickMinutes := rec.Tick.Hours(), rec.Tick.Minutes()
	for _, d := range rec.Domains {
		n := len(d.At)
		r := DomainResult{Name: d.Name, Steps: n, From: d.At[0], To: d.At[n-1]}
		for _, met := range d.SLOMet {
			if met == 0 {
				r.RecordedBreachMinutes += tickMinutes
			}
		}
		liveSum, recSum := make([]float64, n), make([]float64, n)
		for i := range d.Apps {
			a := &d.Apps[i]
			if a.AtMaxSteps > 0 {
				r.AtMaxApps++
			}
			if a.LimitedSteps > 0 {
				r.LimitedApps++
			}
			ar := AppResult{Name: a.Name, HPAMin: a.HPAMin, HPAMax: a.HPAMax, ServiceTime: a.serviceTime(), Learned: a.LearnedServiceTime > 0,
				Live:        figures(a, a.Live, d.SLO, tickHours, tickMinutes),
				Recommended: figures(a, a.Recommended, d.SLO, tickHours, tickMinutes)}
			r.Live.add(ar.Live)
			r.Recommended.add(ar.Recommended)
			addInto(liveSum, a.Live)
			addInto(recSum, a.Recommended)
			r.Apps = append(r.Apps, ar)
		}
		r.Live.MeanReplicas, r.Live.PeakReplicas = meanPeak(liveSum)
		r.Recommended.MeanReplicas, r.Recommended.PeakReplicas = meanPeak(recSum)
		slices.SortStableFunc(r.Apps, func(a, b AppResult) int {
			return cmp.Compare(math.Abs(b.Recommended.CoreHours-b.Live.CoreHours), math.Abs(a.Recommended.CoreHours-a.Live.CoreHours))
		})
		out = append(out, r)
	}
	return out
}

// figures are app a's figures with replicas per step; NaN replicas (not
// recorded) count nothing.
func figures(a *App, replicas []float64, slo, tickHours, tickMinutes float64) Figures {
	var f Figures
	last := math.NaN()
	for k, n := range replicas {
		if math.IsNaN(n) {
			continue
		}
		f.CoreHours += n * a.CPU * tickHours
		if rps := a.RPS[k]; !math.IsNaN(rps) && P99(rps, n, a.serviceTime(), a.Concurrency) > slo {
			f.BreachMinutes += tickMinutes
		}
		if !math.IsNaN(last) && n != last {
			f.Changes++
		}
		last = n
	}
	f.MeanReplicas, f.PeakReplicas = meanPeak(replicas)
	return f
}

// serviceTime is a's learned service time when recorded, else its
// config's, seconds.
func (a *App) serviceTime() float64 {
	if a.LearnedServiceTime > 0 {
		return a.LearnedServiceTime
	}
	return a.ServiceTime
}

// add sums g's totals into f (not its mean and peak).
func (f *Figures) add(g Figures) {
	f.CoreHours += g.CoreHours
	f.BreachMinutes += g.BreachMinutes
	f.Changes += g.Changes
}

func addInto(sum, xs []float64) {
	for k, x := range xs {
		if !math.IsNaN(x) {
			sum[k] += x
		}
	}
}

// meanPeak is the mean and the largest of xs' recorded values.
func meanPeak(xs []float64) (mean, peak float64) {
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			mean += x
			peak = max(peak, x)
			n++
		}
	}
	if n > 0 {
		mean /= float64(n)
	}
	return mean, peak
}
