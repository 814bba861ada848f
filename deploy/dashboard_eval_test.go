package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/wire"
)

// TestDashboardPanelsShowATick: after one Commander tick and one Soldier
// tick exported by the daemons' own metrics and registries, and stored as
// the chart's ServiceMonitor stores them, every panel's every query (its
// Grafana variables filled in) parses, runs on the real PromQL engine and
// returns at least one series: no panel is empty by a wrong label, a wrong
// quantile or a broken expression.
func TestDashboardPanelsShowATick(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	st := promqltest.LoadedStorage(t, "load 1m\n"+
		strings.Join(scraped(t, commanderTick(t), map[string]string{"component": "commander"}), "\n")+"\n"+
		strings.Join(scraped(t, soldierTick(t), map[string]string{"component": "soldier", "domain": "payment"}), "\n"))
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	vars := strings.NewReplacer("$namespace", "regiment", "$domain", ".*", "$__rate_interval", "5m")
	check := func(where, expr string) {
		expr = vars.Replace(expr)
		q, err := eng.NewInstantQuery(context.Background(), st, nil, expr, time.Unix(600, 0))
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return
		}
		defer q.Close()
		res := q.Exec(context.Background())
		if v, ok := res.Value.(promql.Vector); !ok || len(v) == 0 {
			t.Errorf("%s returns no series after a tick (error %v): %s", where, res.Err, expr)
		}
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			check(fmt.Sprintf("panel %q query %s", p.Title, tg.RefID), tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			query, _ := q["query"].(string)
			check("variable "+v.Name, variableExpr(query))
		}
	}
}

// commanderTick is a Commander's registry after a tick that decided for
// domain payment and rejected a report.
func commanderTick(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := daemon.NewRegistry()
	m := daemon.NewMetrics(reg, "commander")
	daemon.RegisterConn(reg, "commander", &bus.Conn{})
	m.CommanderTick(commander.Decision{CapacityCores: 800, CapacityTargetCores: 450, Domains: []commander.DomainFigures{
		{Name: "payment", Share: 0.4, Budget: 320, Demand: 300, Used: 280, Urgency: 0.2, ForecastP50: 330, ForecastP80: 360},
	}}, nil, 3*time.Millisecond)
	m.Rejected.WithLabelValues(wire.RejectWrongDomain).Inc()
	m.Received.Inc()
	return reg
}

// soldierTick is the payment Soldier's registry after a recommend tick
// with its apps at risk, one breaching at its max_replicas and wanting more, on the ladder's alert rung, a fallback switch, a
// write and a rejected directive.
func soldierTick(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := daemon.NewRegistry()
	m := daemon.NewMetrics(reg, "soldier")
	daemon.RegisterConn(reg, "soldier", &bus.Conn{})
	rec := &soldier.Recommendation{Apps: []soldier.App{{Name: "payment/checkout"}}, Recommended: []int32{7}, Baseline: []int32{9},
		Live: []soldier.AppObservation{{Replicas: 5, HPAMin: 2, HPAMax: 60}}}
	m.SoldierTick(soldier.TickResult{Writes: 1, Guards: 1, AutoFallback: true, Switch: soldier.FallbackEvent{Reason: soldier.FallbackSLO},
		Report: wire.DomainReport{Domain: "payment", P99Seconds: 0.3}, SLOSeconds: 0.25, AppsAtRisk: 2, AppsBreaching: 1,
		BreachingAtMax: []soldier.AtMax{{App: 0, Ready: 60, P99: 0.4}}, LimitedByMax: []soldier.Limited{{App: 0, Max: 60, Wanted: 72}},
		Rung: soldier.RungAlert, Recommendation: rec}, nil, 2*time.Millisecond)
	m.Rejected.WithLabelValues(wire.RejectStale).Inc()
	m.Received.Inc()
	return reg
}

// scraped is reg's samples as promqltest load lines, as the chart's
// ServiceMonitor stores them: with the target's labels (namespace, and
// extra, the relabelled pod labels, where the series has no such label of
// its own: honorLabels),
// constant over eleven one-minute scrapes. Histograms become their
// _bucket, _sum and _count series.
func scraped(t *testing.T, reg *prometheus.Registry, extra map[string]string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	add := func(name string, labels map[string]string, v float64) {
		if math.IsNaN(v) {
			return
		}
		var ls []string
		for k, v := range labels {
			ls = append(ls, k+"="+strconv.Quote(v))
		}
		sort.Strings(ls)
		lines = append(lines, fmt.Sprintf("  %s{%s} %sx10", name, strings.Join(ls, ","), strconv.FormatFloat(v, 'g', -1, 64)+"+0"))
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{"namespace": "regiment"}
			for k, v := range extra {
				labels[k] = v
			}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				add(mf.GetName(), labels, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(mf.GetName(), labels, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				add(mf.GetName(), labels, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, bk := range h.GetBucket() {
					labels["le"] = strconv.FormatFloat(bk.GetUpperBound(), 'g', -1, 64)
					add(mf.GetName()+"_bucket", labels, float64(bk.GetCumulativeCount()))
				}
				labels["le"] = "+Inf"
				add(mf.GetName()+"_bucket", labels, float64(h.GetSampleCount()))
				delete(labels, "le")
				add(mf.GetName()+"_sum", labels, h.GetSampleSum())
				add(mf.GetName()+"_count", labels, float64(h.GetSampleCount()))
			}
		}
	}
	return lines
}
