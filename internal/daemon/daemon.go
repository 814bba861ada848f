// Package daemon assembles the Commander and Soldier processes: a
// Commander (NewCommanderProcess) or a Soldier (NewSoldierProcess) is built from a config,
// its settings and its dependencies (bus connection, store, clock, cluster
// adapter, logger; Deps), each opened with Open, run with Run(ctx) and shut
// down with an idempotent Close. cmd/commander and cmd/soldier are their
// flags, signals and exit codes (Serve); `regiment run` is an embedded NATS
// server plus the same processes over a simulated cluster (System), so the
// three run the same code paths. The operator's side of overrides
// (BuildOverride, ConnectOperator) serves `regiment override`.
//
// Shutdown order, owned here: the Soldiers stop actuating (their tick loop
// has returned), NATS drains (then an embedded server stops), the probes
// stop, the steps flush, the episode ends, the store closes last. Reload
// validates first: a file with problems, or one the running process cannot
// take without a restart, is refused and the running config kept, with each
// diagnostic logged (file:line:col). The file must be a regular file: a
// FIFO put in its place is refused at once and never blocks the reload
// (config.ReadFile). A reload never holds shutdown up: Serve waits at most
// ReloadWait for one still running, then closes without it.
//
// Lost data shows: every step or ledger entry the store did not take is
// counted (regiment_<component>_record_failures_total), a failure streak is
// logged once at its start, once when it makes /readyz 503 "degraded"
// (RecordFailuresDegraded failed writes in a row) and once at its end, and
// a Soldier whose saved decision state could not be read says so (Warn,
// regiment_soldier_state_restore_failed). Operator text is cleaned
// (wire.CleanText) before it is sent or stored. The probe server closes
// idle connections (ProbeIdleTimeout) and bounds reads and writes.
//
// The HTTP server also serves the process's store as a consistent snapshot
// (StorePath, store.Store.Snapshot), one at a time and within
// SnapshotTimeout, so that its history can be read while it runs; with a
// token (HTTPOptions.Token, --http-token-file) /metrics and the snapshot
// require it, the probes never. A discovering Soldier describes every app
// it decides for in its episode's Meta (recording.AppsMeta), as they are
// found, for `regiment report`.
//
// It imports the cores, bus, store, recording, kube, live, prometheus and
// go-hclog; it holds no global state (metrics go to each process's own
// registry) and never exits the process or handles signals.
package daemon

import (
	"context"
	"errors"
	"maps"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// Metrics are the counters and histograms a daemon exports.
type Metrics struct {
	Ticks      prometheus.Counter
	TickErrors prometheus.Counter
	Decisions  prometheus.Counter
	Rejected   *prometheus.CounterVec // by reason
	Received   prometheus.Counter
	Actuations prometheus.Counter
	Guards     prometheus.Counter
	Fallback   prometheus.Gauge
	TickTime   prometheus.Histogram // seconds per tick
	// FallbackActive is 1 while a domain's automatic fallback holds it on
	// the baseline; FallbackSwitches counts its switches by domain and
	// reason ("slo", "cost", "hand-back"). Soldier only.
	FallbackActive   *prometheus.GaugeVec
	FallbackSwitches *prometheus.CounterVec
	// Recommend-mode gauges per domain and app (the app's name within its
	// domain), set every recommend tick and removed in other modes: the
	// replicas the Soldier recommends (its policy after the stabiliser and
	// the guards), its baseline's, the workload's live replicas and its live
	// HPA's bounds (absent when not observed). Soldier only.
	Recommended, BaselineReplicas, LiveReplicas, LiveHPAMin, LiveHPAMax *prometheus.GaugeVec
	// Commander holds the leading Commander's per-domain and pool gauges
	// (Commander only); Soldier the domain's SLO and ladder gauges (Soldier
	// only).
	Commander *CommanderGauges
	Soldier   *SoldierGauges
	// AppFailing is 1 for each app (by domain, app and reason, a
	// soldier.Fail* reason) the Soldier could not write at its last tick,
	// and absent for the others; AppWriteFailures counts the apps' failed
	// write attempts. Soldier only.
	AppFailing       *prometheus.GaugeVec
	AppWriteFailures *prometheus.CounterVec
	failures         map[string]int // per "domain/app", the failures in a row last counted
	// AppAtMax is 1 for each app (by domain and app) that breached its SLO
	// with its max_replicas ready at the Soldier's last tick, and absent
	// for the others. Soldier only.
	AppAtMax *prometheus.GaugeVec
	// AppLimited is, for each app (by domain and app) whose sizing wanted
	// more replicas than its ceiling at the Soldier's last tick, the
	// replicas it wanted; absent for the others. Soldier only.
	AppLimited *prometheus.GaugeVec
}

// NewMetrics registers a component's metrics ("commander" or "soldier") on reg.
func NewMetrics(reg prometheus.Registerer, component string) *Metrics {
	ns := "regiment_" + component + "_"
	m := &Metrics{
		Ticks:      prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "ticks_total", Help: "Control ticks run."}),
		TickErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "tick_errors_total", Help: "Ticks that failed."}),
		Decisions:  prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "decisions_total", Help: "Decisions published or actuated."}),
		Rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "rejected_messages_total",
			Help: "Messages rejected (malformed, stale, replayed, out of range, unknown domain), by reason."}, []string{"reason"}),
		Received:   prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "received_messages_total", Help: "Messages accepted."}),
		Actuations: prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "actuations_total", Help: "Replica writes made."}),
		Guards:     prometheus.NewCounter(prometheus.CounterOpts{Name: ns + "guards_applied_total", Help: "Guard interventions."}),
		Fallback:   prometheus.NewGauge(prometheus.GaugeOpts{Name: ns + "fallback", Help: "1 while the fallback policy acts."}),
		TickTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: ns + "tick_duration_seconds", Help: "Time to run one tick.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		FallbackActive: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + "fallback_active",
			Help: "1 while the automatic fallback holds the domain on the baseline."}, []string{"domain"}),
		FallbackSwitches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "fallback_switches_total",
			Help: "Automatic fallback switches, by domain and reason (slo, cost: to the baseline; hand-back)."}, []string{"domain", "reason"}),
	}
	perApp := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + name, Help: help}, []string{"domain", "app"})
	}
	m.Recommended = perApp("recommended_replicas", "Recommend mode: the replicas the Soldier would set, per app.")
	m.BaselineReplicas = perApp("baseline_replicas", "Recommend mode: the replicas the Soldier's baseline would set (no budget), per app.")
	m.LiveReplicas = perApp("live_replicas", "Recommend mode: the workload's replicas on the cluster, per app.")
	m.LiveHPAMin = perApp("live_hpa_min_replicas", "Recommend mode: the app's own HPA minReplicas, when observed.")
	m.LiveHPAMax = perApp("live_hpa_max_replicas", "Recommend mode: the app's own HPA maxReplicas, when observed.")
	m.AppFailing = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: ns + "app_failing",
		Help: "1 while the Soldier cannot write an app (its write failed, or its workload or HPA is not found), by reason."},
		[]string{"domain", "app", "reason"})
	m.AppWriteFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Name: ns + "app_write_failures_total",
		Help: "Failed replica writes, by domain, app and reason."}, []string{"domain", "app", "reason"})
	m.AppAtMax = perApp("app_breaching_at_max",
		"1 while the app breaches its SLO with its max_replicas ready: its ceiling, not the autoscaler, holds it (raise max_replicas).")
	m.AppLimited = perApp("app_limited_by_max",
		"The replicas the app's sizing wants while that is more than its max_replicas (in recommend mode its live HPA's maxReplicas): "+
			"raise the ceiling before it breaches; absent otherwise.")
	reg.MustRegister(m.Ticks, m.TickErrors, m.Decisions, m.Rejected, m.Received, m.Actuations, m.Guards, m.Fallback, m.TickTime)
	m.Commander, m.Soldier = newCommanderGauges(), newSoldierGauges()
	switch component {
	case "soldier":
		reg.MustRegister(m.FallbackActive, m.FallbackSwitches,
			m.Recommended, m.BaselineReplicas, m.LiveReplicas, m.LiveHPAMin, m.LiveHPAMax, m.AppFailing, m.AppWriteFailures, m.AppAtMax, m.AppLimited)
		reg.MustRegister(m.Soldier.collectors()...)
	case "commander":
		reg.MustRegister(m.Commander.collectors()...)
	}
	return m
}

// recommendation sets domain's recommend-mode gauges from r, or removes them
// when r is nil (a mode that writes, or off).
func (m *Metrics) recommendation(domain string, r *soldier.Recommendation) {
	all := []*prometheus.GaugeVec{m.Recommended, m.BaselineReplicas, m.LiveReplicas, m.LiveHPAMin, m.LiveHPAMax}
	if r == nil {
		for _, g := range all {
			g.DeletePartialMatch(prometheus.Labels{"domain": domain})
		}
		return
	}
	for i, a := range r.Apps {
		app := strings.TrimPrefix(a.Name, domain+"/")
		m.Recommended.WithLabelValues(domain, app).Set(float64(r.Recommended[i]))
		m.BaselineReplicas.WithLabelValues(domain, app).Set(float64(r.Baseline[i]))
		m.LiveReplicas.WithLabelValues(domain, app).Set(float64(r.Live[i].Replicas))
		if r.Live[i].HPAMax > 0 {
			m.LiveHPAMin.WithLabelValues(domain, app).Set(float64(r.Live[i].HPAMin))
			m.LiveHPAMax.WithLabelValues(domain, app).Set(float64(r.Live[i].HPAMax))
		} else {
			m.LiveHPAMin.DeleteLabelValues(domain, app)
			m.LiveHPAMax.DeleteLabelValues(domain, app)
		}
	}
}

// RegisterConn exports conn's NATS permission denials (publishes and
// subscriptions the server refused: a sign of a misconfigured role or of a
// forged message) as regiment_<component>_nats_denied_total on reg, and a
// Soldier's reports dropped while reconnecting as
// regiment_soldier_reports_dropped_total.
func RegisterConn(reg prometheus.Registerer, component string, conn *bus.Conn) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "regiment_" + component + "_nats_denied_total",
		Help: "NATS publishes and subscriptions refused by the server's permissions."}, func() float64 { return float64(conn.Denied()) }))
	if component == "soldier" {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "regiment_soldier_reports_dropped_total",
			Help: "Reports not sent because NATS was reconnecting (reports are not buffered: they would arrive stale)."},
			func() float64 { return float64(conn.DroppedReports()) }))
	}
}

// AttachSoldier feeds s the directives for its domain: first the last one
// held in the bus's key-value store (so a restarted Soldier resumes at once),
// then every live one. Rejected directives are counted by reason and logged
// with it: at Debug when replayed or stale (a duplicate or late delivery), at
// Warn otherwise (what no real Commander sends: forged, unsigned, out of
// bounds), at most once a minute per reason. The last good one stays in
// force.
func AttachSoldier(ctx context.Context, conn *bus.Conn, s *soldier.Soldier, domain string, clock func() time.Time, m *Metrics, log hclog.Logger) (*bus.Subscription, error) {
	warn := newRejectLog(log, time.Minute)
	// A rejection is logged before it is counted, so that whoever sees the
	// count (an alert, a test) finds the log line already written.
	offer := func(d wire.Directive, err error) bool {
		if err != nil {
			reason := rejectReason(err)
			warn.log(reason, "error", err)
			m.Rejected.WithLabelValues(reason).Inc()
			return false
		}
		if ok, reason := s.OnDirective(d, clock()); !ok {
			warn.log(reason, "seq", d.Seq, "term", d.Term, "issued_at", d.IssuedAt, "ttl", d.TTL, "cores", d.Cores)
			m.Rejected.WithLabelValues(reason).Inc()
			return false
		}
		m.Received.Inc()
		return true
	}
	sub, err := conn.SubscribeDirectives(domain, func(d wire.Directive, err error) { offer(d, err) })
	if err != nil {
		return nil, err
	}
	if d, ok, err := conn.LastDirective(ctx, domain); err != nil {
		if reason := rejectReason(err); reason != "other" {
			m.Rejected.WithLabelValues(reason).Inc()
			log.Warn("the last directive held by the bus is rejected; waiting for the next", "reason", reason, "error", err)
		} else {
			log.Warn("cannot read the last directive", "error", err)
		}
	} else if ok {
		if offer(d, nil) {
			log.Info("resumed from the last directive", "seq", d.Seq, "term", d.Term, "cores", d.Cores)
		} else {
			log.Info("the last directive held by the bus is not usable; waiting for the next", "seq", d.Seq, "term", d.Term)
		}
	}
	return sub, nil
}

// AttachCommander feeds c every domain's reports.
func AttachCommander(conn *bus.Conn, c *commander.Commander, m *Metrics, log hclog.Logger, onReport func(wire.DomainReport)) (*bus.Subscription, error) {
	return conn.SubscribeReports(func(r wire.DomainReport, err error) {
		if err != nil {
			m.Rejected.WithLabelValues(rejectReason(err)).Inc()
			log.Debug("report rejected", "error", err)
			return
		}
		if !c.OnReport(r) {
			m.Rejected.WithLabelValues(wire.RejectWrongDomain).Inc()
			return
		}
		m.Received.Inc()
		if onReport != nil {
			onReport(r)
		}
	})
}

// SoldierTick updates the metrics for one Soldier tick.
func (m *Metrics) SoldierTick(res soldier.TickResult, err error, took time.Duration) {
	if !m.tick(err, took, res.Guards) {
		return
	}
	m.Actuations.Add(float64(res.Writes))
	if res.Fallback {
		m.Fallback.Set(1)
	} else {
		m.Fallback.Set(0)
	}
	if d := res.Report.Domain; d != "" {
		active := 0.0
		if res.AutoFallback {
			active = 1
		}
		m.FallbackActive.WithLabelValues(d).Set(active)
		if res.Switch.Reason != "" {
			m.FallbackSwitches.WithLabelValues(d, res.Switch.Reason).Inc()
		}
		m.recommendation(d, res.Recommendation)
		m.Soldier.set(d, res)
	}
}

// AppsAtMax sets domain's per-app gauge of the apps breaching with their
// max_replicas ready (soldier.TickResult.BreachingAtMax), apps being the
// domain's apps in the Soldier's order.
func (m *Metrics) AppsAtMax(domain string, apps []soldier.App, atMax []soldier.AtMax) {
	setAppGauge(m.AppAtMax, domain, apps, len(atMax), func(i int) (int, float64) { return atMax[i].App, 1 })
}

// AppsLimited sets domain's per-app gauge of the apps whose sizing wanted
// more replicas than their ceiling (soldier.TickResult.LimitedByMax), apps
// being the domain's apps in the Soldier's order.
func (m *Metrics) AppsLimited(domain string, apps []soldier.App, limited []soldier.Limited) {
	setAppGauge(m.AppLimited, domain, apps, len(limited), func(i int) (int, float64) { return limited[i].App, float64(limited[i].Wanted) })
}

// setAppGauge replaces domain's series of the per-app gauge g by n: the
// i-th is app's (an index into apps, the domain's apps in the Soldier's
// order; one outside them is skipped) at value.
func setAppGauge(g *prometheus.GaugeVec, domain string, apps []soldier.App, n int, at func(i int) (app int, value float64)) {
	g.DeletePartialMatch(prometheus.Labels{"domain": domain})
	for i := range n {
		if app, v := at(i); app >= 0 && app < len(apps) {
			g.WithLabelValues(domain, strings.TrimPrefix(apps[app].Name, domain+"/")).Set(v)
		}
	}
}

// AppFailures sets domain's per-app failure metrics from one tick's apps
// not written (soldier.TickResult.Failing), apps being the domain's apps
// in the Soldier's order. Not safe for concurrent use.
func (m *Metrics) AppFailures(domain string, apps []soldier.App, failing []soldier.Failing) {
	m.AppFailing.DeletePartialMatch(prometheus.Labels{"domain": domain})
	if m.failures == nil {
		m.failures = map[string]int{}
	}
	now := make(map[string]int, len(failing))
	for _, f := range failing {
		if f.App < 0 || f.App >= len(apps) {
			continue
		}
		app := strings.TrimPrefix(apps[f.App].Name, domain+"/")
		m.AppFailing.WithLabelValues(domain, app, f.Reason).Set(1)
		key := domain + "/" + app
		if prev := m.failures[key]; f.Failures > prev { // an attempt failed this tick
			m.AppWriteFailures.WithLabelValues(domain, app, f.Reason).Add(float64(f.Failures - prev))
		}
		now[key] = f.Failures
	}
	for key := range m.failures {
		if strings.HasPrefix(key, domain+"/") {
			delete(m.failures, key)
		}
	}
	maps.Copy(m.failures, now)
}

// CommanderTick updates the metrics for one Commander tick.
// A failed tick still sets the per-domain gauges: its Decision is the one
// made (only a publish failed).
func (m *Metrics) CommanderTick(d commander.Decision, err error, took time.Duration) {
	m.tick(err, took, d.Guards)
	if len(d.Domains) > 0 {
		m.Commander.set(d)
	}
}

// StoppedLeading removes the leader's gauges (Metrics.Commander): a
// follower exports none, so a dashboard never mixes an old leader's figures
// with the new one's.
func (m *Metrics) StoppedLeading() { m.Commander.reset() }

// tick counts a tick that took took and failed with err, or decided with
// guards interventions; it reports whether the tick succeeded.
func (m *Metrics) tick(err error, took time.Duration, guards int) bool {
	m.Ticks.Inc()
	m.TickTime.Observe(took.Seconds())
	if err != nil {
		m.TickErrors.Inc()
		return false
	}
	m.Decisions.Inc()
	m.Guards.Add(float64(guards))
	return true
}

func rejectReason(err error) string {
	switch {
	case errors.Is(err, wire.ErrUnsigned):
		return wire.RejectUnsigned
	case errors.Is(err, wire.ErrBadSignature):
		return wire.RejectBadSignature
	case errors.Is(err, bus.ErrWrongDomain):
		return wire.RejectWrongDomain
	case errors.Is(err, bus.ErrMisrouted):
		return "misrouted"
	case errors.Is(err, wire.ErrTooLarge):
		return "oversized"
	case errors.Is(err, wire.ErrMalformed):
		return "malformed"
	case wire.IsVersion(err):
		return wire.RejectVersion
	case errors.Is(err, wire.ErrInvalid):
		return wire.RejectInvalid
	}
	return "other"
}

// counterValue is the sum of v's counters.
func counterValue(v *prometheus.CounterVec) float64 {
	ch := make(chan prometheus.Metric, 16)
	go func() { v.Collect(ch); close(ch) }()
	total := 0.0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err == nil && pb.Counter != nil {
			total += pb.Counter.GetValue()
		}
	}
	return total
}
