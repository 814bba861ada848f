// Package recording turns Commander and Soldier records into episode steps of
// the store, so the cores stay free of bbolt and the store free of the cores.
//
// Action keys name what they act on: "share/<domain>", "cores/<domain>",
// "urgency/<domain>", "headroom/<domain>", "reserve" for the Commander;
// "replicas/<app>" for a Soldier's writes and "budget_cores" for its budget.
// Reward terms are stored as "reward.<term>" keys of Step.Reward, with "total".
//
// A Soldier step's Outcome also holds each app's telemetry as
// "<metric>/<app>" keys (AppKey), with app the "domain/app" name: rps
// (arrivals including dependency calls, 1/s), cpu_util (busy share of ready
// capacity, [0, 1]), ready, starting and pending replicas, and target (the
// replica target after the tick's writes); starting and pending are left out
// when 0, and blind is 1 for an app whose metrics could not be read and absent
// otherwise (about 125 bytes per app and step in the store). A step of a
// recommend-mode Soldier (mode recommend or shadow) has the outcome
// "recommend" = 1, its policy's and baseline's targets as the action keys
// "policy/<app>" and "baseline/<app>", target the live replicas (nothing was
// written), and hpa_min and hpa_max the app's live HPA bounds when observed. These six numbers per app and tick
// are what "regiment calibrate" fits the simulator to; they are outcomes, not
// policy inputs, so the observation layout (soldier.Layout) is unchanged.
//
// An app a Soldier could not write at a step (its write failed, or its
// workload or HPA is not found: soldier.Record.Failing) has the outcome
// "write_failing/<app>" = 1 and a GuardWriteFailed guard saying why; the
// ledger gets a LedgerWriteFailed entry when it starts failing (or its
// reason changes) and a LedgerWriteRecovered one when it is written again,
// which "regiment episodes why" shows.
//
// A Soldier episode's Meta describes each app it decided for under
// "app/<domain>/<app>" (MetaApp, AppMeta): its workload on Kubernetes, whether
// it was found by label, and its CPU request and service time, so that
// "regiment report" needs no config listing discovered apps.
//
// An app that breached its SLO with its max_replicas ready at a step
// (soldier.Record.BreachingAtMax) has the outcome "breaching_at_max/<app>" =
// 1: its ceiling, not the autoscaler, held it. An app whose sizing wanted
// more replicas than its ceiling (soldier.Record.LimitedByMax), breaching
// or not yet, has "limited_by_max/<app>" = the replicas it wanted.
//
// An app whose config sets no service time (a discovered app) has the
// outcomes "service_time/<app>" and "startup_time/<app>", in seconds, once
// its Soldier learned them (soldier.Record.Learned).
package recording

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/reward"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// Appender is where steps go: a store appender.
type Appender interface {
	Append(step store.Step) error
}

// Ledger takes decision ledger entries: a store's AppendLedger.
type Ledger func(e store.LedgerEntry) error

// Commander records Commander ticks into episode id, and each directive into
// the ledger.
type Commander struct {
	Episode string
	Domains []string
	Out     Appender
	Ledger  Ledger      // may be nil
	Err     func(error) // called when a step cannot be appended; may be nil
}

// Record implements commander.Recorder.
func (c *Commander) Record(r commander.Record) {
	step := store.Step{Episode: c.Episode, Seq: r.Seq, At: r.At, Obs: r.Features,
		Action:  map[string]float64{"reserve": r.Final.Reserve},
		Outcome: map[string]float64{"stale_domains": float64(len(r.Stale))},
	}
	for i, d := range c.Domains {
		step.Action["share/"+d] = r.Final.Shares[i]
		step.Action["urgency/"+d] = r.Final.Urgency[i]
		step.Action["headroom/"+d] = r.Final.Headroom[i]
	}
	if r.CapacityTarget > 0 {
		step.Action["capacity_target_cores"] = r.CapacityTarget // the capacity plan
	}
	for _, g := range r.Guards {
		step.Guards = append(step.Guards, store.Guard{Name: g.Name, Target: "share/" + c.Domains[g.Domain], Before: g.Before, After: g.After})
	}
	step.Reward = terms(r.Reward.AppendTerms(nil), r.Reward.Total)
	if err := c.Out.Append(step); err != nil && c.Err != nil {
		c.Err(fmt.Errorf("record commander step %d: %w", r.Seq, err))
	}
	if c.Ledger == nil {
		return
	}
	for i, d := range c.Domains {
		e := store.LedgerEntry{At: r.At, Domain: d, Kind: "directive", Detail: fmt.Sprintf("seq %d by %s: %s", r.Seq, r.Policy, r.Reason),
			Values: map[string]float64{"share": r.Final.Shares[i], "proposed_share": r.Proposed.Shares[i], "urgency": r.Final.Urgency[i], "headroom": r.Final.Headroom[i]}}
		if err := c.Ledger(e); err != nil && c.Err != nil {
			c.Err(fmt.Errorf("record directive %d for %s: %w", r.Seq, d, err))
		}
	}
}

// Soldier records one domain's Soldier ticks into episode id, and each switch
// into or out of fallback into the ledger.
type Soldier struct {
	Episode  string
	Out      Appender
	Ledger   Ledger // may be nil
	Err      func(error)
	fallback bool
	rung     soldier.Rung
	started  bool
	keys     map[string]*appKeys // per app name, built once
	failing  map[string]string   // per app name, the reason it was not written at the last step
}

// GuardWriteFailed names the guard recorded for each app a Soldier step
// could not write (soldier.Record.Failing): Target "replicas/<app>", Before
// the target not written, After the app's replicas, Reason "<reason>:
// <detail>" with a soldier.Fail* reason.
const GuardWriteFailed = "write_failed"

// Ledger kinds of an app's write failures: an app starts failing (or its
// reason changes), and it is written again.
const (
	LedgerWriteFailed    = "write_failed"
	LedgerWriteRecovered = "write_recovered"
)

// Per-app metrics of a Soldier step's Outcome, keyed AppKey(metric, app).
const (
	AppRPS      = "rps"           // arrivals, external plus dependency calls, 1/s
	AppCPUUtil  = "cpu_util"      // busy share of ready capacity, [0, 1]
	AppReady    = "ready"         // replicas serving
	AppStarting = "starting"      // replicas scheduled, not yet ready; absent when 0
	AppPending  = "pending"       // replicas waiting for node capacity; absent when 0
	AppTarget   = "target"        // replica target after the tick's writes
	AppBlind    = "blind"         // 1 when the app's metrics could not be read; absent otherwise
	AppHPAMin   = "hpa_min"       // the app's live HPA minReplicas (recommend mode); absent when not observed
	AppHPAMax   = "hpa_max"       // the app's live HPA maxReplicas (recommend mode); absent when not observed
	AppFailing  = "write_failing" // 1 when the app could not be written (GuardWriteFailed says why); absent otherwise
	// AppAtMax is 1 when the app breached its SLO with its max_replicas
	// ready (soldier.Record.BreachingAtMax); absent otherwise.
	AppAtMax = "breaching_at_max"
	// AppLimited is the replicas the app's sizing wanted when that was more
	// than its ceiling (soldier.Record.LimitedByMax); absent otherwise.
	AppLimited = "limited_by_max"
	// AppServiceTime and AppStartupTime are the service time and startup
	// time, in seconds, the Soldier learned of an app whose config sets no
	// service time (soldier.Record.Learned); absent for other apps and
	// before a value is learned.
	AppServiceTime = "service_time"
	AppStartupTime = "startup_time"
)

// OutcomeRecommend is the Outcome key set to 1 on the steps of a Soldier in
// recommend mode (or shadow, its alias), which wrote nothing.
const OutcomeRecommend = "recommend"

// AppKey is the Outcome key of metric for app ("domain/app").
func AppKey(metric, app string) string { return metric + "/" + app }

// SplitAppKey splits an Outcome key made by AppKey into metric and app; ok is
// false for a key without an app.
func SplitAppKey(key string) (metric, app string, ok bool) {
	metric, app, ok = strings.Cut(key, "/")
	return metric, app, ok && app != ""
}

type appKeys struct{ rps, cpu, ready, starting, pending, target, blind, hpaMin, hpaMax string }

func (s *Soldier) appKeys(app string) *appKeys {
	if k, ok := s.keys[app]; ok {
		return k
	}
	if s.keys == nil {
		s.keys = map[string]*appKeys{}
	}
	k := &appKeys{AppKey(AppRPS, app), AppKey(AppCPUUtil, app), AppKey(AppReady, app), AppKey(AppStarting, app),
		AppKey(AppPending, app), AppKey(AppTarget, app), AppKey(AppBlind, app), AppKey(AppHPAMin, app), AppKey(AppHPAMax, app)}
	s.keys[app] = k
	return k
}

// Record implements soldier.Recorder.
func (s *Soldier) Record(r soldier.Record) {
	step := store.Step{Episode: s.Episode, Seq: r.Seq, At: r.At, Obs: r.Features,
		Action:  map[string]float64{"budget_cores": r.Directive.Cores, "changes": float64(len(r.Changes))},
		Outcome: make(map[string]float64, 8+4*len(r.Apps)), // sized for the per-app keys
	}
	step.Outcome["p99_seconds"], step.Outcome["error_rate"], step.Outcome["cores_used"] = r.Outcome.P99, r.Outcome.ErrorRate, r.Outcome.CoresUsed
	step.Outcome["ready"], step.Outcome["replicas"], step.Outcome["slo_met"] = float64(r.Outcome.Ready), float64(r.Outcome.Replicas), b2f(r.Outcome.SLOMet)
	step.Outcome["fallback"], step.Outcome["ladder_rung"] = b2f(r.Fallback), float64(r.Rung)
	for _, c := range r.Changes {
		step.Action["replicas/"+c.App] = float64(c.Replicas)
	}
	for _, a := range r.Apps {
		k := s.appKeys(a.App)
		step.Outcome[k.rps], step.Outcome[k.cpu] = a.RPS, a.CPUUtil
		step.Outcome[k.ready], step.Outcome[k.target] = float64(a.Ready), float64(a.Replicas)
		if a.Starting != 0 {
			step.Outcome[k.starting] = float64(a.Starting)
		}
		if a.Pending != 0 {
			step.Outcome[k.pending] = float64(a.Pending)
		}
		if a.Blind {
			step.Outcome[k.blind] = 1
		}
		if a.HPAMin > 0 || a.HPAMax > 0 {
			step.Outcome[k.hpaMin], step.Outcome[k.hpaMax] = float64(a.HPAMin), float64(a.HPAMax)
		}
	}
	if domains.Mode(r.Mode).Recommends() {
		step.Outcome[OutcomeRecommend] = 1
	}
	for _, g := range r.Guards {
		step.Guards = append(step.Guards, store.Guard{Name: g.Name, Target: "replicas/" + g.App, Before: float64(g.Before), After: float64(g.After), Reason: g.Reason})
	}
	s.notWritten(&r, &step)
	for _, app := range r.BreachingAtMax {
		step.Outcome[AppKey(AppAtMax, app)] = 1
	}
	for _, l := range r.LimitedByMax {
		step.Outcome[AppKey(AppLimited, l.App)] = float64(l.Wanted)
	}
	for _, l := range r.Learned {
		if l.ServiceTime > 0 {
			step.Outcome[AppKey(AppServiceTime, l.App)] = l.ServiceTime
		}
		if l.Startup > 0 {
			step.Outcome[AppKey(AppStartupTime, l.App)] = l.Startup
		}
	}
	step.Reward = terms(r.Reward.AppendTerms(nil), r.Reward.Total)
	s.autoFallback(&r, &step) // before Append: it adds keys to the step
	if err := s.Out.Append(step); err != nil && s.Err != nil {
		s.Err(fmt.Errorf("record %s step %d: %w", r.Domain, r.Seq, err))
	}
	if s.Ledger != nil && (!s.started || r.Fallback != s.fallback) {
		detail := "policy acts: " + r.Reason
		if r.Fallback {
			detail = "fallback acts: " + r.Reason
		}
		e := store.LedgerEntry{At: r.At, Domain: r.Domain, Kind: "fallback", Detail: detail,
			Values: map[string]float64{"fallback": b2f(r.Fallback)}}
		if err := s.Ledger(e); err != nil && s.Err != nil {
			s.Err(fmt.Errorf("record %s fallback switch: %w", r.Domain, err))
		}
	}
	if s.Ledger != nil && s.started && r.Rung != s.rung {
		e := store.LedgerEntry{At: r.At, Domain: r.Domain, Kind: "ladder",
			Detail: fmt.Sprintf("rollback ladder %s -> %s at p99 %.3fs", s.rung, r.Rung, r.Outcome.P99),
			Values: map[string]float64{"rung": float64(r.Rung), "p99_seconds": r.Outcome.P99}}
		if err := s.Ledger(e); err != nil && s.Err != nil {
			s.Err(fmt.Errorf("record %s ladder change: %w", r.Domain, err))
		}
	}
	s.failedWrites(&r)
	s.started, s.fallback, s.rung = true, r.Fallback, r.Rung
}

// notWritten adds to step the apps r could not write: a GuardWriteFailed
// guard and the AppFailing outcome each.
func (s *Soldier) notWritten(r *soldier.Record, step *store.Step) {
	for _, f := range r.Failing {
		after := float64(f.Target)
		if i := slices.IndexFunc(r.Apps, func(a soldier.NamedObservation) bool { return a.App == f.App }); i >= 0 {
			after = float64(r.Apps[i].Replicas)
		}
		step.Guards = append(step.Guards, store.Guard{Name: GuardWriteFailed, Target: "replicas/" + f.App,
			Before: float64(f.Target), After: after, Reason: f.Reason + ": " + f.Detail})
		step.Outcome[AppKey(AppFailing, f.App)] = 1
	}
}

// failedWrites enters into the ledger each app that starts failing (or
// fails for another reason) and each that is written again.
func (s *Soldier) failedWrites(r *soldier.Record) {
	now := make(map[string]string, len(r.Failing))
	for _, f := range r.Failing {
		now[f.App] = f.Reason
		if s.failing[f.App] == f.Reason {
			continue
		}
		detail := fmt.Sprintf("%s not written (%s): %s", f.App, f.Reason, f.Detail)
		if f.Failures > 0 {
			detail += fmt.Sprintf("; retried with backoff, next attempt in %d ticks", f.RetryIn+1)
		}
		s.ledger(store.LedgerEntry{At: r.At, Domain: r.Domain, Kind: LedgerWriteFailed, Detail: detail,
			Values: map[string]float64{"target": float64(f.Target), "failures": float64(f.Failures)}})
	}
	for _, app := range slices.Sorted(maps.Keys(s.failing)) {
		if _, ok := now[app]; !ok {
			s.ledger(store.LedgerEntry{At: r.At, Domain: r.Domain, Kind: LedgerWriteRecovered, Detail: app + " written again"})
		}
	}
	s.failing = now
}

// ledger appends e to the ledger, if any.
func (s *Soldier) ledger(e store.LedgerEntry) {
	if s.Ledger == nil {
		return
	}
	if err := s.Ledger(e); err != nil && s.Err != nil {
		s.Err(fmt.Errorf("record %s %s: %w", e.Domain, e.Kind, err))
	}
}

// CommanderEpisode describes a Commander episode for cfg.
func CommanderEpisode(id string, cfg *domains.Config, policy string) store.Episode {
	return store.Episode{ID: id, Level: "commander", Cluster: cfg.Cluster.Name, Policy: policy,
		ObsLayout: commander.Layout(cfg), ObsVersion: commander.ObsVersion}
}

// SoldierEpisode describes a Soldier episode for one domain.
func SoldierEpisode(id string, cfg *domains.Config, domain, policy string) store.Episode {
	return store.Episode{ID: id, Level: "soldier", Domain: domain, Cluster: cfg.Cluster.Name, Policy: policy,
		ObsLayout: soldier.Layout, ObsVersion: soldier.ObsVersion}
}

// terms is a per-term reward breakdown as stored, with the total.
func terms(ts []reward.Term, total float64) map[string]float64 {
	m := make(map[string]float64, len(ts)+1)
	for _, t := range ts {
		m[t.Name] = t.Value
	}
	m[reward.TotalName] = total
	return m
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
