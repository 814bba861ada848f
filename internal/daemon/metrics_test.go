package daemon

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// gathered is every sample of reg as "name{label=value,...}" -> value.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName() + "{"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			key += "}"
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestSoldierTickExportsTheAutomaticFallback pins the automatic fallback's
// metrics: the active gauge follows each tick, and each switch counts once
// under its domain and reason.
func TestSoldierTickExportsTheAutomaticFallback(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, "soldier")
	tick := func(active bool, reason string) {
		m.SoldierTick(soldier.TickResult{AutoFallback: active, Fallback: active, Switch: soldier.FallbackEvent{Reason: reason},
			Report: wire.DomainReport{Domain: "payment"}}, nil, 0)
	}
	const (
		active   = "regiment_soldier_fallback_active{domain=payment}"
		slo      = "regiment_soldier_fallback_switches_total{domain=payment,reason=slo}"
		handBack = "regiment_soldier_fallback_switches_total{domain=payment,reason=hand-back}"
	)
	steps := []struct {
		active                bool
		reason                string
		gauge, slos, handBack float64
	}{
		{false, "", 0, 0, 0},
		{true, soldier.FallbackSLO, 1, 1, 0},
		{true, "", 1, 1, 0},
		{false, soldier.FallbackHandBack, 0, 1, 1},
		{false, "", 0, 1, 1},
	}
	for i, s := range steps {
		tick(s.active, s.reason)
		got := gathered(t, reg)
		if got[active] != s.gauge || got[slo] != s.slos || got[handBack] != s.handBack {
			t.Fatalf("after tick %d: active %g, slo switches %g, hand-backs %g; want %g, %g, %g",
				i, got[active], got[slo], got[handBack], s.gauge, s.slos, s.handBack)
		}
	}
}

// TestSoldierTickExportsTheRecommendation pins the recommend-mode gauges: a
// recommend tick sets the five per app (label app without its domain), an
// app whose HPA was not observed has no HPA gauge, and a tick in another
// mode removes them all.
func TestSoldierTickExportsTheRecommendation(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, "soldier")
	rec := &soldier.Recommendation{
		Apps:        []soldier.App{{Name: "payment/checkout-0"}, {Name: "payment/ledger"}},
		Recommended: []int32{7, 3}, Baseline: []int32{9, 3},
		Live: []soldier.AppObservation{{Replicas: 5, HPAMin: 2, HPAMax: 60}, {Replicas: 4}},
	}
	m.SoldierTick(soldier.TickResult{Recommendation: rec, Report: wire.DomainReport{Domain: "payment"}}, nil, 0)
	got := gathered(t, reg)
	for key, want := range map[string]float64{
		"regiment_soldier_recommended_replicas{app=checkout-0,domain=payment}":  7,
		"regiment_soldier_baseline_replicas{app=checkout-0,domain=payment}":     9,
		"regiment_soldier_live_replicas{app=checkout-0,domain=payment}":         5,
		"regiment_soldier_live_hpa_min_replicas{app=checkout-0,domain=payment}": 2,
		"regiment_soldier_live_hpa_max_replicas{app=checkout-0,domain=payment}": 60,
		"regiment_soldier_live_replicas{app=ledger,domain=payment}":             4,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %g (exported %v), want %g", key, v, ok, want)
		}
	}
	if _, ok := got["regiment_soldier_live_hpa_max_replicas{app=ledger,domain=payment}"]; ok {
		t.Errorf("an HPA gauge for an app without an observed HPA")
	}
	m.SoldierTick(soldier.TickResult{Report: wire.DomainReport{Domain: "payment"}}, nil, 0)
	for key := range gathered(t, reg) {
		if strings.Contains(key, "app=") {
			t.Errorf("after an active tick %s is still exported", key)
		}
	}
}

// TestCommanderTickExportsTheDomainFigures pins the leader's gauges: a tick
// sets each domain's budget, demand, cores used, share, urgency, staleness
// and forecast quantiles and the pool's capacity and plan to the tick's
// figures (a failed publish too: its decision was made); an unknown
// forecast or no plan exports no series; StoppedLeading removes them all.
func TestCommanderTickExportsTheDomainFigures(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, "commander")
	d := commander.Decision{CapacityCores: 800, CapacityTargetCores: 450, Domains: []commander.DomainFigures{
		{Name: "payment", Share: 0.4, Budget: 320, Demand: 300, Used: 280, Urgency: 0.25, ForecastP50: 330, ForecastP80: 360},
		{Name: "search", Share: 0.1, Budget: 80, Stale: true, ForecastP50: math.NaN(), ForecastP80: math.NaN()},
	}}
	m.CommanderTick(d, errors.New("publish allocation: timeout"), 0)
	got := gathered(t, reg)
	for key, want := range map[string]float64{
		"regiment_commander_domain_budget_cores{domain=payment}":                320,
		"regiment_commander_domain_demand_cores{domain=payment}":                300,
		"regiment_commander_domain_used_cores{domain=payment}":                  280,
		"regiment_commander_domain_share{domain=payment}":                       0.4,
		"regiment_commander_domain_urgency{domain=payment}":                     0.25,
		"regiment_commander_domain_stale{domain=payment}":                       0,
		"regiment_commander_domain_forecast_cores{domain=payment,quantile=0.5}": 330,
		"regiment_commander_domain_forecast_cores{domain=payment,quantile=0.8}": 360,
		"regiment_commander_domain_budget_cores{domain=search}":                 80,
		"regiment_commander_domain_demand_cores{domain=search}":                 0,
		"regiment_commander_domain_stale{domain=search}":                        1,
		"regiment_commander_pool_capacity_cores{}":                              800,
		"regiment_commander_capacity_target_cores{}":                            450,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %g (exported %v), want %g", key, v, ok, want)
		}
	}
	for key := range got {
		if strings.HasPrefix(key, "regiment_commander_domain_forecast_cores{domain=search") {
			t.Errorf("an unknown forecast is exported: %s", key)
		}
	}
	d.CapacityTargetCores, d.Domains[0].ForecastP50 = 0, math.NaN()
	m.CommanderTick(d, nil, 0)
	got = gathered(t, reg)
	if _, ok := got["regiment_commander_capacity_target_cores{}"]; ok {
		t.Errorf("a tick without a plan still exports the last one")
	}
	if _, ok := got["regiment_commander_domain_forecast_cores{domain=payment,quantile=0.5}"]; ok {
		t.Errorf("a forecast no longer known is still exported")
	}
	m.StoppedLeading()
	for key := range gathered(t, reg) {
		if strings.Contains(key, "domain=") || strings.Contains(key, "_cores") {
			t.Errorf("after leadership was lost %s is still exported", key)
		}
	}
}

// TestSoldierTickExportsTheSLOHeadroom pins the Soldier's SLO and ladder
// gauges: a tick sets the domain's reported p99, its SLO, its apps at risk
// and breaching and the ladder's rung; a domain without an SLO exports no
// SLO series.
func TestSoldierTickExportsTheSLOHeadroom(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, "soldier")
	m.SoldierTick(soldier.TickResult{Report: wire.DomainReport{Domain: "payment", P99Seconds: 0.31}, SLOSeconds: 0.25,
		AppsAtRisk: 3, AppsBreaching: 2, BreachingAtMax: []soldier.AtMax{{App: 1}}, LimitedByMax: []soldier.Limited{{App: 1}, {App: 2}},
		Rung: soldier.RungFreeze}, nil, 0)
	got := gathered(t, reg)
	for key, want := range map[string]float64{
		"regiment_soldier_apps_breaching_at_max{domain=payment}": 1,
		"regiment_soldier_apps_limited_by_max{domain=payment}":   2,
		"regiment_soldier_p99_seconds{domain=payment}":           0.31,
		"regiment_soldier_slo_p99_seconds{domain=payment}":       0.25,
		"regiment_soldier_apps_at_risk{domain=payment}":          3,
		"regiment_soldier_apps_breaching{domain=payment}":        2,
		"regiment_soldier_ladder_rung{domain=payment}":           2,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s = %g (exported %v), want %g", key, v, ok, want)
		}
	}
	m.SoldierTick(soldier.TickResult{Report: wire.DomainReport{Domain: "payment", P99Seconds: 0.1}}, nil, 0)
	got = gathered(t, reg)
	if _, ok := got["regiment_soldier_slo_p99_seconds{domain=payment}"]; ok {
		t.Errorf("a domain without an SLO exports one")
	}
	if got["regiment_soldier_ladder_rung{domain=payment}"] != 0 || got["regiment_soldier_apps_at_risk{domain=payment}"] != 0 {
		t.Errorf("rung %g, at risk %g after a calm tick; want 0, 0",
			got["regiment_soldier_ladder_rung{domain=payment}"], got["regiment_soldier_apps_at_risk{domain=payment}"])
	}
}

// TestAppsAtTheirCeilingAreExportedPerApp: each per-app gauge of the
// apps at their ceiling (breaching there: 1; wanting more: the replicas
// wanted) has a series for each app of the last tick, none for the others
// nor for an index outside the domain's apps, and drops an app once it is
// clear; another domain's stay.
func TestAppsAtTheirCeilingAreExportedPerApp(t *testing.T) {
	for _, tc := range []struct {
		gauge string
		set   func(m *Metrics, domain string, apps []soldier.App, idx ...int) // app idx[k] at value(k)
		value func(k int) float64
	}{
		{"regiment_soldier_app_breaching_at_max", func(m *Metrics, domain string, apps []soldier.App, idx ...int) {
			var at []soldier.AtMax
			for _, i := range idx {
				at = append(at, soldier.AtMax{App: i})
			}
			m.AppsAtMax(domain, apps, at)
		}, func(int) float64 { return 1 }},
		{"regiment_soldier_app_limited_by_max", func(m *Metrics, domain string, apps []soldier.App, idx ...int) {
			var lim []soldier.Limited
			for k, i := range idx {
				lim = append(lim, soldier.Limited{App: i, Max: 10, Wanted: int32(14 + k)})
			}
			m.AppsLimited(domain, apps, lim)
		}, func(k int) float64 { return float64(14 + k) }},
	} {
		t.Run(tc.gauge, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			m := NewMetrics(reg, "soldier")
			shop, data := []soldier.App{{Name: "shop/web"}, {Name: "shop/api"}}, []soldier.App{{Name: "data/loader"}}
			tc.set(m, "shop", shop, 1, 7) // 7: not an app of the domain
			tc.set(m, "data", data, 0)
			got := gathered(t, reg)
			series := func(app, domain string) string { return tc.gauge + "{app=" + app + ",domain=" + domain + "}" }
			for key, want := range map[string]float64{series("api", "shop"): tc.value(0), series("web", "shop"): 0, series("loader", "data"): tc.value(0)} {
				if v, ok := got[key]; ok != (want > 0) || v != want {
					t.Errorf("%s = %g (exported %v), want %g", key, v, ok, want)
				}
			}
			tc.set(m, "shop", shop)
			got = gathered(t, reg)
			if _, ok := got[series("api", "shop")]; ok {
				t.Error("an app clear of its ceiling is still exported")
			}
			if _, ok := got[series("loader", "data")]; !ok {
				t.Error("another domain's app was removed")
			}
		})
	}
}

// TestAppFailuresExportsFailingApps pins the per-app failure metrics: the
// gauge is 1 for each app not written at the last tick and absent once it
// is written again; the counter counts each failed attempt once.
func TestAppFailuresExportsFailingApps(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, "soldier")
	apps := []soldier.App{{Name: "shop/web"}, {Name: "shop/api"}, {Name: "shop/db"}}
	const (
		webDenied  = "regiment_soldier_app_failing{app=web,domain=shop,reason=denied}"
		dbMissing  = "regiment_soldier_app_failing{app=db,domain=shop,reason=not_found}"
		webAttempt = "regiment_soldier_app_write_failures_total{app=web,domain=shop,reason=denied}"
	)
	steps := []struct {
		name     string
		failing  []soldier.Failing
		web, db  float64 // gauges; 0: absent
		attempts float64
	}{
		{"a denied write and a missing app", []soldier.Failing{{App: 0, Reason: soldier.FailDenied, Failures: 1}, {App: 2, Reason: soldier.FailNotFound}}, 1, 1, 1},
		{"held in backoff: no new attempt", []soldier.Failing{{App: 0, Reason: soldier.FailDenied, Failures: 1, RetryIn: 1}, {App: 2, Reason: soldier.FailNotFound}}, 1, 1, 1},
		{"tried again and failed", []soldier.Failing{{App: 0, Reason: soldier.FailDenied, Failures: 2}}, 1, 0, 2},
		{"written again", nil, 0, 0, 2},
	}
	for _, st := range steps {
		m.AppFailures("shop", apps, st.failing)
		got := gathered(t, reg)
		if got[webDenied] != st.web || got[dbMissing] != st.db || got[webAttempt] != st.attempts {
			t.Errorf("%s: web %v, db %v, attempts %v; want %v, %v, %v", st.name, got[webDenied], got[dbMissing], got[webAttempt], st.web, st.db, st.attempts)
		}
		if _, ok := got[webDenied]; ok != (st.web == 1) {
			t.Errorf("%s: web's gauge present %v, want %v", st.name, ok, st.web == 1)
		}
	}
	if _, ok := gathered(t, reg)["regiment_soldier_app_failing{app=api,domain=shop,reason=denied}"]; ok {
		t.Error("a gauge for an app that never failed")
	}
}
