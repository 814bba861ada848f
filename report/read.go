package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/episodes"
	"github.com/regimentd/regiment/recording"
	"github.com/regimentd/regiment/store"
)

// App is one app's recommend-mode series, one entry per recorded step of its
// domain; NaN where a value was not recorded (a blind app's request rate).
type App struct {
	Name        string  // "domain/app"
	CPU         float64 // cores per replica
	ServiceTime float64 // seconds per request
	Concurrency int     // requests one replica serves at once
	RPS         []float64
	Live        []float64 // the workload's replicas on the cluster
	Recommended []float64 // the Soldier's recommended replicas
	Baseline    []float64 // its baseline's replicas, without a budget
	// HPAMin and HPAMax are the app's live HPA bounds at the last step read
	// that observed them; 0 when never observed.
	HPAMin, HPAMax float64
	MaxReplicas    int // the config's max_replicas
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

// Domain is one domain's recommend-mode steps, in time order.
type Domain struct {
	Name   string
	SLO    float64     // latency objective, p99 seconds
	At     []time.Time // each step's time
	SLOMet []float64   // recorded: 1 when the domain met its SLO, 0 when not
	Apps   []App       // in config order
}

// Recorded is what Read found.
type Recorded struct {
	Paths   []string
	Tick    time.Duration // the config's Soldier tick: what each step stands for
	Steps   int           // Soldier steps read
	Domains []*Domain     // domains with recommend-mode steps, in config order
}

// Read reads the recommend-mode steps of cfg's cluster and domains from the
// stores in spec (a directory whose *.db stores are read, a bbolt file, or a
// comma-separated list of both). It fails when a store is missing or
// locked, when no Soldier step of the cluster is there, and when none was
// recorded in recommend mode.
func Read(ctx context.Context, cfg *domains.Config, spec string) (*Recorded, error) {
	paths, err := episodes.StoreFiles(spec)
	if err != nil {
		return nil, err
	}
	rec := &Recorded{Paths: paths, Tick: cfg.Soldier.Tick}
	byDomain := make([]*Domain, len(cfg.Domains))
	for di, d := range cfg.Domains {
		byDomain[di] = &Domain{Name: d.Name, SLO: d.SLO.LatencyP99Seconds()}
	}
	for _, a := range cfg.Apps() {
		byDomain[a.Domain].Apps = append(byDomain[a.Domain].Apps, App{Name: a.Name, CPU: a.CPUPerReplica,
			ServiceTime: a.ServiceTime.Seconds(), Concurrency: max(1, a.Concurrency), MaxReplicas: a.MaxReplicas})
	}
	for _, path := range paths {
		if err := readStore(ctx, cfg, path, byDomain, rec); err != nil {
			return nil, err
		}
	}
	where := strings.Join(paths, ", ")
	if rec.Steps == 0 {
		return nil, fmt.Errorf("no Soldier steps of cluster %q in %s: point --episodes at the stores the Soldiers of this config wrote", cfg.Cluster.Name, where)
	}
	for _, d := range byDomain {
		if len(d.At) > 0 {
			d.sort()
			rec.Domains = append(rec.Domains, d)
		}
	}
	if len(rec.Domains) == 0 {
		return nil, fmt.Errorf(`no recommend-mode steps in %s (%d Soldier steps read, none in mode "recommend"): run the domains to review with mode = "recommend" first`, where, rec.Steps)
	}
	return rec, nil
}

// readStore appends the recommend-mode steps of the store at path to the
// domains.
func readStore(ctx context.Context, cfg *domains.Config, path string, byDomain []*Domain, rec *Recorded) error {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("open episodes: %s is locked by another process (a running daemon or \"regiment run\"); report on a copy", path)
	}
	if err != nil {
		return fmt.Errorf("open episodes %q: %w", path, err)
	}
	defer st.Close()
	eps, err := st.Episodes()
	if err != nil {
		return fmt.Errorf("list episodes of %s: %w", path, err)
	}
	for _, e := range eps {
		di := cfg.Domain(e.Domain)
		if e.Level != "soldier" || di < 0 || (e.Cluster != "" && e.Cluster != cfg.Cluster.Name) {
			continue
		}
		d := byDomain[di]
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
			return fmt.Errorf("read episode %q of %s: %w", e.ID, path, err)
		}
	}
	return nil
}

// add appends step s to d's series.
func (d *Domain) add(s store.Step) {
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
