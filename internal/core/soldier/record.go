package soldier

import (
	"time"

	"github.com/regimentd/regiment/internal/core/reward"
	"github.com/regimentd/regiment/wire"
)

// ObsVersion is the version of Layout; bump it when features change.
const ObsVersion = 1

// Layout names the features of Record.Features, in order.
var Layout = []string{
	"rps", "rps_p95", "p99_over_slo", "error_rate_over_budget", "cpu_util_p75",
	"live_pods", "starting_pods", "pending_pods",
	"budget_cores", "demand_cores", "cores_used", "budget_utilisation",
	"share", "urgency", "headroom",
}

// Record is one Soldier tick as kept for inspection and retraining.
type Record struct {
	At        time.Time
	Seq       uint64
	Domain    string
	Mode      string
	Fallback  bool
	Rung      Rung // the rollback ladder's rung
	Policy    string
	Reason    string
	Directive wire.Directive // zero when none was valid
	Features  []float64      // Layout order
	Changes   []NamedChange  // writes made this tick
	Guards    []NamedGuard
	Outcome   Outcome
	Reward    reward.SoldierBreakdown // of the outcome at this tick
	// Apps is each app's observation this tick, in the domain's config order,
	// with Replicas the target after this tick's writes: the per-app series
	// that calibrate the simulator (regiment calibrate).
	Apps []NamedObservation
	// Failing is the apps not written at this tick and why (TickResult.Failing).
	Failing []NamedFailing
	// BreachingAtMax names the apps that breached with their max_replicas
	// ready at this tick (TickResult.BreachingAtMax), in domain order.
	BreachingAtMax []string
	// LimitedByMax is the apps whose sizing wanted more replicas than their
	// ceiling at this tick (TickResult.LimitedByMax), in domain order.
	LimitedByMax []NamedLimited
	// Learned is what the Soldier learned of each app whose service time
	// it learns (App.Learn), in domain order; nil when none does.
	Learned []LearnedApp

	// AutoFallback is true while the automatic fallback holds the domain on
	// the baseline; Switch is its switch at this tick (Reason "" if none).
	AutoFallback bool
	Switch       FallbackEvent
	// PolicyTargets and BaselineTargets are both decisions, replicas per app
	// in domain order, when they differ in who acts: in shadow mode, while
	// the automatic fallback holds the domain, and at its switches. Nil
	// otherwise.
	PolicyTargets, BaselineTargets []int32
}

// NamedLimited is an app its ceiling limits (Limited), by name.
type NamedLimited struct {
	App         string // "domain/app"
	Max, Wanted int32  // replicas
}

// NamedObservation is one app's observation with the app's name.
type NamedObservation struct {
	App string // "domain/app"
	AppObservation
}

// NamedChange is a write with the app's name.
type NamedChange struct {
	App              string
	Before, Replicas int32
}

// NamedFailing is an app not written, with the app's name.
type NamedFailing struct {
	App string // "domain/app"
	Failing
}

// NamedGuard is a guard with the app's name.
type NamedGuard struct {
	Name, App     string
	Before, After int32
	Reason        string // foreign_owner: "owned by <owner>"; else ""
}

// Outcome is the domain's state at the tick, the result of earlier actions.
type Outcome struct {
	P99         float64 // seconds
	ErrorRate   float64
	SLOMet      bool
	CoresUsed   float64
	BudgetCores float64
	Ready       int
	Replicas    int
}

func (s *Soldier) record(now time.Time, d wire.Directive, valid bool, r wire.DomainReport, reason string, fallback bool) Record {
	if !valid {
		d = wire.Directive{}
	}
	rec := Record{
		At: now, Seq: s.seq, Domain: s.cfg.Domain, Mode: string(s.cfg.Soldier.Mode), Fallback: fallback,
		Policy: s.cfg.Policy, Reason: reason, Directive: d,
		Features: []float64{
			r.RPS, r.RPSP95, r.P99Seconds / s.cfg.SLO, r.ErrorRate / s.cfg.ErrorBudget, r.CPUUtilP75,
			float64(r.LivePods), float64(r.StartingPods), float64(r.PendingPods),
			r.BudgetCores, r.DemandCores, r.CoresUsed, r.BudgetUtilisation,
			d.Share, d.Urgency, d.Headroom,
		},
		Outcome: Outcome{
			P99: r.P99Seconds, ErrorRate: r.ErrorRate, CoresUsed: r.CoresUsed, BudgetCores: r.BudgetCores,
			SLOMet: r.P99Seconds <= s.cfg.SLO && r.ErrorRate <= s.cfg.ErrorBudget,
			Ready:  r.LivePods, Replicas: r.LivePods + r.StartingPods + r.PendingPods,
		},
	}
	oscillations := 0
	for _, w := range s.writes {
		before := s.obs.Apps[w.App].Replicas
		rec.Changes = append(rec.Changes, NamedChange{App: s.cfg.Apps[w.App].Name, Before: before, Replicas: w.Replicas})
		if w.Replicas < before && now.Sub(s.exec.lastUp[w.App]) < reward.OscillationWindow {
			oscillations++
		}
	}
	in := reward.SoldierInput{
		P99: r.P99Seconds, SLO: s.cfg.SLO, ErrorRate: r.ErrorRate, ErrorBudget: s.cfg.ErrorBudget,
		BudgetCores: r.BudgetCores, UsedCores: r.CoresUsed,
		Oscillations: oscillations, Apps: len(s.cfg.Apps), Ready: r.LivePods, Replicas: rec.Outcome.Replicas,
	}
	if valid {
		in.Intended, in.Actual = s.one[:1], s.two[:1]
		in.Intended[0], in.Actual[0] = r.BudgetCores, r.CoresUsed
	}
	rec.Reward = reward.Soldier(in, s.weights)
	rec.Apps = make([]NamedObservation, len(s.obs.Apps))
	for i := range s.obs.Apps {
		rec.Apps[i] = NamedObservation{App: s.cfg.Apps[i].Name, AppObservation: s.obs.Apps[i]}
	}
	for _, w := range s.writes {
		rec.Apps[w.App].Replicas = w.Replicas
	}
	for _, g := range s.guards {
		ng := NamedGuard{Name: g.Name, App: s.cfg.Apps[g.App].Name, Before: g.Before, After: g.After}
		if g.Name == GuardForeignOwner {
			ng.Reason = "owned by " + s.obs.Apps[g.App].ForeignOwner
		}
		rec.Guards = append(rec.Guards, ng)
	}
	for _, f := range s.failing {
		rec.Failing = append(rec.Failing, NamedFailing{App: s.cfg.Apps[f.App].Name, Failing: f})
	}
	for _, a := range s.atMax {
		rec.BreachingAtMax = append(rec.BreachingAtMax, s.cfg.Apps[a.App].Name)
	}
	for _, l := range s.limited {
		rec.LimitedByMax = append(rec.LimitedByMax, NamedLimited{App: s.cfg.Apps[l.App].Name, Max: l.Max, Wanted: l.Wanted})
	}
	return rec
}
