package report

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/stats"
	"github.com/regimentd/regiment/internal/offline/episodes"
)

// App is one app's recommend-mode series, one entry per recorded step of its
// domain; NaN where a value was not recorded (a blind app's request rate, or
// a step before the app was discovered).
type App struct {
	Name string // "domain/app": the app's identity in the store
	// Kind, Namespace and Workload name the app's workload on Kubernetes,
	// as its Soldier's episode described it (recording.AppMeta); empty when
	// it did not (a simulation, or a store of an older Regiment).
	Kind, Namespace, Workload string
	Discovered                bool // found by its domain's discover block
	// Attributes says where CPU, ServiceTime, Concurrency and MaxReplicas
	// come from: AttributesStore, AttributesConfig or AttributesDiscover.
	Attributes  string
	CPU         float64 // cores per replica; 0 when unknown (no core-hours)
	ServiceTime float64 // seconds per request
	Concurrency int     // requests one replica serves at once
	RPS         []float64
	Live        []float64 // the workload's replicas on the cluster
	Recommended []float64 // the Soldier's recommended replicas
	Baseline    []float64 // its baseline's replicas, without a budget
	// HPAMin and HPAMax are the app's live HPA bounds at the last step read
	// that observed them; 0 when never observed.
	HPAMin, HPAMax float64
	MaxReplicas    int // the app's max_replicas
	// AtMaxSteps counts the steps at which the app breached its SLO with
	// its ceiling's replicas ready (recording.AppAtMax): measured, live.
	AtMaxSteps int
	// LimitedSteps counts the steps at which the Soldier's sizing wanted
	// more replicas than the app's ceiling (recording.AppLimited), and
	// MostWanted is the most it wanted at any of them (0: never).
	LimitedSteps int
	MostWanted   float64
	// LearnedServiceTime is the service time, seconds, its Soldier last
	// learned of an app whose config sets none (recording.AppServiceTime);
	// 0 when none was recorded. The estimates use it over ServiceTime.
	LearnedServiceTime float64
	learnedAt          time.Time
}

// Where an app's attributes (App.Attributes) come from.
const (
	// AttributesStore: the Soldier's episode described the app (its
	// discovered pods' CPU request, or the config it ran).
	AttributesStore = "store"
	// AttributesConfig: the config given to Read lists the app.
	AttributesConfig = "config"
	// AttributesDiscover: neither; the domain's discover block's defaults
	// (CPU 0, so no core-hours, unless it sets cpu_per_replica).
	AttributesDiscover = "discover defaults"
)

// Domain is one domain's recommend-mode steps, in time order.
type Domain struct {
	Name   string
	SLO    float64     // latency objective, p99 seconds
	At     []time.Time // each step's time
	SLOMet []float64   // recorded: 1 when the domain met its SLO, 0 when not
	// Apps are every app with a recorded target in the domain's steps, by
	// name.
	Apps []App

	index     map[string]int               // app name -> position in Apps
	described map[string]recording.AppMeta // by the episodes read, the last one's winning
}

// Recorded is what Read found.
type Recorded struct {
	Paths   []string      // the stores read, as given (a file, or a daemon's URL)
	Tick    time.Duration // the config's Soldier tick: what each step stands for
	Steps   int           // Soldier steps read
	Domains []*Domain     // domains with recommend-mode steps, in config order
}

// Read reads the recommend-mode steps of cfg's cluster and domains from the
// stores srcs (episodes.Sources). Its apps are the store's: every app with
// a recorded target in a step, listed in the config or found by label
// (discover), with the workload and attributes its episode describes
// (recording.AppMeta), else the config's. It fails when a store cannot be
// opened, when no Soldier step of the cluster is there, and when none was
// recorded in recommend mode.
func Read(ctx context.Context, cfg *domains.Config, srcs []episodes.Source) (*Recorded, error) {
	rec := &Recorded{Tick: cfg.Soldier.Tick}
	byDomain := make([]*Domain, len(cfg.Domains))
	for di, d := range cfg.Domains {
		byDomain[di] = &Domain{Name: d.Name, SLO: d.SLO.LatencyP99Seconds(), index: map[string]int{}, described: map[string]recording.AppMeta{}}
	}
	for _, src := range srcs {
		rec.Paths = append(rec.Paths, src.Name)
		if err := readStore(ctx, cfg, src, byDomain, rec); err != nil {
			return nil, err
		}
	}
	where := strings.Join(rec.Paths, ", ")
	if rec.Steps == 0 {
		return nil, fmt.Errorf("no Soldier steps of cluster %q in %s: point --episodes at the stores the Soldiers of this config wrote", cfg.Cluster.Name, where)
	}
	for di, d := range byDomain {
		if len(d.At) > 0 {
			d.sort()
			d.resolve(cfg, di)
			rec.Domains = append(rec.Domains, d)
		}
	}
	if len(rec.Domains) == 0 {
		return nil, fmt.Errorf(`no recommend-mode steps in %s (%d Soldier steps read, none in mode "recommend"): run the domains to review with mode = "recommend" first`, where, rec.Steps)
	}
	apps := 0
	for _, d := range rec.Domains {
		apps += len(d.Apps)
	}
	if apps == 0 {
		return nil, fmt.Errorf("no app in the recommend-mode steps of %s: the Soldiers recorded no app's replicas (did their discover blocks find none?)", where)
	}
	return rec, nil
}

// readStore appends the recommend-mode steps of the store src to the
// domains.
func readStore(ctx context.Context, cfg *domains.Config, src episodes.Source, byDomain []*Domain, rec *Recorded) error {
	st, err := src.Open("report")
	if err != nil {
		return err
	}
	defer st.Close()
	eps, err := st.Episodes()
	if err != nil {
		return fmt.Errorf("list episodes of %s: %w", src.Name, err)
	}
	for _, e := range eps {
		di := cfg.Domain(e.Domain)
		if e.Level != "soldier" || di < 0 || (e.Cluster != "" && e.Cluster != cfg.Cluster.Name) {
			continue
		}
		d := byDomain[di]
		maps.Copy(d.described, recording.AppsOf(e.Meta))
		err := st.Steps(e.ID, time.Time{}, time.Time{}, func(s store.Step) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			rec.Steps++
			if s.Outcome[recording.OutcomeRecommend] == 1 {
				d.add(s)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read episode %q of %s: %w", e.ID, src.Name, err)
		}
	}
	return nil
}

// resolve sorts d's apps by name and gives each its workload and
// attributes: as its episode described it, else as cfg lists it, else its
// discover block's defaults.
func (d *Domain) resolve(cfg *domains.Config, di int) {
	slices.SortFunc(d.Apps, func(a, b App) int { return strings.Compare(a.Name, b.Name) })
	configured := map[string]domains.App{}
	for _, a := range cfg.Apps() {
		if a.Domain == di {
			configured[a.Name] = a
		}
	}
	for i := range d.Apps {
		a := &d.Apps[i]
		if m, ok := d.described[a.Name]; ok {
			a.Kind, a.Namespace, a.Workload, a.Discovered = m.Kind, m.Namespace, m.Workload, m.Discovered
			a.Attributes, a.CPU, a.ServiceTime, a.Concurrency, a.MaxReplicas = AttributesStore, m.CPUPerReplica, m.ServiceTimeSeconds, max(1, m.Concurrency), m.MaxReplicas
			continue
		}
		if c, ok := configured[a.Name]; ok {
			a.Attributes, a.CPU, a.ServiceTime, a.Concurrency, a.MaxReplicas = AttributesConfig, c.CPUPerReplica, c.ServiceTime.Seconds(), max(1, c.Concurrency), c.MaxReplicas
			continue
		}
		a.Attributes, a.Discovered, a.Concurrency = AttributesDiscover, true, 1
		if disc := cfg.Domains[di].Discover; disc != nil {
			s := disc.App
			a.CPU, a.ServiceTime, a.Concurrency, a.MaxReplicas = s.CPUPerReplica, s.ServiceTime.Seconds(), max(1, s.Concurrency), s.MaxReplicas
		}
	}
}

// add appends step s to d's series, with the apps it records a target for
// that d does not know yet (NaN at the earlier steps).
func (d *Domain) add(s store.Step) {
	for k := range s.Outcome {
		if metric, app, ok := recording.SplitAppKey(k); ok && metric == recording.AppTarget && strings.HasPrefix(app, d.Name+"/") {
			if _, known := d.index[app]; !known {
				d.index[app] = len(d.Apps)
				d.Apps = append(d.Apps, App{Name: app, RPS: stats.NaNs(len(d.At)), Live: stats.NaNs(len(d.At)),
					Recommended: stats.NaNs(len(d.At)), Baseline: stats.NaNs(len(d.At))})
			}
		}
	}
	d.At = append(d.At, s.At)
	met := math.NaN()
	if v, ok := s.Outcome["slo_met"]; ok {
		met = v
	}
	d.SLOMet = append(d.SLOMet, met)
	value := func(m map[string]float64, key string) float64 {
		if v, ok := m[key]; ok {
			return v
		}
		return math.NaN()
	}
	for i := range d.Apps {
		a := &d.Apps[i]
		rps := value(s.Outcome, recording.AppKey(recording.AppRPS, a.Name))
		if s.Outcome[recording.AppKey(recording.AppBlind, a.Name)] == 1 {
			rps = math.NaN() // a stand-in, not a measurement
		}
		a.RPS = append(a.RPS, rps)
		a.Live = append(a.Live, value(s.Outcome, recording.AppKey(recording.AppTarget, a.Name)))
		a.Recommended = append(a.Recommended, value(s.Action, recording.AppKey(recording.ActionPolicy, a.Name)))
		a.Baseline = append(a.Baseline, value(s.Action, recording.AppKey(recording.ActionBaseline, a.Name)))
		if s.Outcome[recording.AppKey(recording.AppAtMax, a.Name)] == 1 {
			a.AtMaxSteps++
		}
		if v, ok := s.Outcome[recording.AppKey(recording.AppLimited, a.Name)]; ok {
			a.LimitedSteps++
			a.MostWanted = max(a.MostWanted, v)
		}
		if v, ok := s.Outcome[recording.AppKey(recording.AppServiceTime, a.Name)]; ok && !s.At.Before(a.learnedAt) {
			a.LearnedServiceTime, a.learnedAt = v, s.At
		}
		if v, ok := s.Outcome[recording.AppKey(recording.AppHPAMax, a.Name)]; ok {
			a.HPAMin, a.HPAMax = s.Outcome[recording.AppKey(recording.AppHPAMin, a.Name)], v
		}
	}
}

// sort orders d's steps by time (stores and episodes are read one after the
// other).
func (d *Domain) sort() {
	order := make([]int, len(d.At))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return d.At[a].Compare(d.At[b]) })
	d.At = permute(d.At, order)
	d.SLOMet = permute(d.SLOMet, order)
	for i := range d.Apps {
		a := &d.Apps[i]
		a.RPS, a.Live, a.Recommended, a.Baseline = permute(a.RPS, order), permute(a.Live, order), permute(a.Recommended, order), permute(a.Baseline, order)
	}
}

func permute[T any](xs []T, order []int) []T {
	out := make([]T, len(xs))
	for i, j := range order {
		out[i] = xs[j]
	}
	return out
}
