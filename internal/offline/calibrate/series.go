package calibrate

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Run is one recorded stretch of a cluster on a common tick grid: a run of
// "regiment run", or the overlapping Soldier episodes of the daemons. Every
// series of a Run has Len ticks; NaN marks a tick without a recorded step.
type Run struct {
	Name  string        // where it came from, for reports (e.g. an episode id)
	Start time.Time     // time of tick 0
	Tick  time.Duration // the Soldier tick the steps were recorded at
	Len   int           // ticks
	// Domains is indexed like the config's Domains. A domain without a
	// recorded episode keeps its NaN series.
	Domains []Domain
}

// Domain is one domain's recorded series.
type Domain struct {
	P99       []float64 // merged p99 of the domain, seconds
	ErrorRate []float64 // failed share of the domain's requests, [0, 1]
	Apps      []App     // in the domain's config order (domains.Config.Apps)
}

// App is one app's recorded series, as the Soldier observed it: telemetry is
// the cluster's TelemetryLag old, Target is the replica target set at the tick.
type App struct {
	RPS      []float64 // arrivals, external plus dependency calls, 1/s
	CPUUtil  []float64 // busy share of ready capacity, [0, 1]
	Ready    []float64 // replicas serving
	Starting []float64 // replicas scheduled, not yet ready
	Pending  []float64 // replicas waiting for node capacity
	Target   []float64 // replica target after the tick's writes
}

// NewRun makes a Run of n ticks for cfg with every sample NaN.
func NewRun(cfg *domains.Config, name string, start time.Time, tick time.Duration, n int) *Run {
	r := &Run{Name: name, Start: start, Tick: tick, Len: n, Domains: make([]Domain, len(cfg.Domains))}
	nan := func() []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = math.NaN()
		}
		return s
	}
	for _, a := range cfg.Apps() {
		d := &r.Domains[a.Domain]
		d.Apps = append(d.Apps, App{RPS: nan(), CPUUtil: nan(), Ready: nan(), Starting: nan(), Pending: nan(), Target: nan()})
	}
	for i := range r.Domains {
		r.Domains[i].P99, r.Domains[i].ErrorRate = nan(), nan()
	}
	return r
}

// Index is the tick of t on r's grid, rounded to the nearest tick; ok is
// false outside [0, Len).
func (r *Run) Index(t time.Time) (int, bool) {
	d := t.Sub(r.Start)
	k := int((d + r.Tick/2) / r.Tick)
	if d < -r.Tick/2 {
		return 0, false
	}
	return k, k < r.Len
}

// layout maps config app ids to a Run's per-domain app series.
type layout struct {
	apps  []domains.App
	first []int // config id of each domain's first app
}

func newLayout(cfg *domains.Config) layout {
	l := layout{apps: cfg.Apps(), first: make([]int, len(cfg.Domains))}
	for i := len(l.apps) - 1; i >= 0; i-- {
		l.first[l.apps[i].Domain] = i
	}
	return l
}

// app returns the series of the app with config id id.
func (r *Run) app(l layout, id int) *App {
	d := l.apps[id].Domain
	return &r.Domains[d].Apps[id-l.first[d]]
}

// check reports whether r matches cfg's domains and apps.
func (r *Run) check(cfg *domains.Config, apps []domains.App) error {
	if len(r.Domains) != len(cfg.Domains) {
		return errf("run %q has %d domains, config has %d", r.Name, len(r.Domains), len(cfg.Domains))
	}
	count := make([]int, len(cfg.Domains))
	for _, a := range apps {
		count[a.Domain]++
	}
	for i := range r.Domains {
		d := &r.Domains[i]
		if len(d.Apps) != count[i] {
			return errf("run %q domain %s has %d apps, config has %d", r.Name, cfg.Domains[i].Name, len(d.Apps), count[i])
		}
		if len(d.P99) != r.Len || len(d.ErrorRate) != r.Len {
			return errf("run %q domain %s: series length differs from %d ticks", r.Name, cfg.Domains[i].Name, r.Len)
		}
		for j := range d.Apps {
			a := &d.Apps[j]
			for _, s := range [][]float64{a.RPS, a.CPUUtil, a.Ready, a.Starting, a.Pending, a.Target} {
				if len(s) != r.Len {
					return errf("run %q app %d of %s: series length differs from %d ticks", r.Name, j, cfg.Domains[i].Name, r.Len)
				}
			}
		}
	}
	return nil
}
