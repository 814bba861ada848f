package deploy

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/promqltest"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/daemon"
)

// alertRule is one rule of the chart's PrometheusRule.
type alertRule struct {
	expr string
	for_ time.Duration
}

// chartAlerts renders the PrometheusRule of the case with
// prometheusRule.enabled, by alert name, and its release namespace.
func chartAlerts(t *testing.T) (map[string]alertRule, string) {
	t.Helper()
	c := chartCases[1]
	objs, _ := renderChart(t, c)
	pr := find(objs, "PrometheusRule", "regiment")
	if pr == nil {
		t.Fatalf("%s renders no PrometheusRule", c.name)
	}
	out := map[string]alertRule{}
	groups, _ := field(pr.Object, "spec", "groups").([]any)
	for _, g := range groups {
		rules, _ := g.(map[string]any)["rules"].([]any)
		for _, r := range rules {
			m := r.(map[string]any)
			var d model.Duration
			if f, ok := m["for"].(string); ok {
				var err error
				if d, err = model.ParseDuration(f); err != nil {
					t.Fatalf("%s: for %q: %v", m["alert"], f, err)
				}
			}
			out[m["alert"].(string)] = alertRule{expr: m["expr"].(string), for_: time.Duration(d)}
		}
	}
	return out, c.namespace
}

// alertCase is a history of 41 one-minute scrapes (promqltest load lines;
// NS is the release namespace) and the series the alert fires for at its
// end, each written as its labels other than namespace.
type alertCase struct {
	name  string
	load  string
	fires []string
}

// onCallAlerts are the alerts an on-call needs, each with a case where it
// fires and series beside it where it must not: a condition held for less
// than the alert's for, another domain, pod or app, a flat counter.
var onCallAlerts = map[string][]alertCase{
	"RegimentFallbackEngaged": {{
		name: "the baseline acts for payment (no valid directive) and the automatic fallback holds fraud",
		load: `
regiment_soldier_fallback{namespace="NS", pod="payment-0", component="soldier", domain="payment"} 0x10 1x30
regiment_soldier_fallback_active{namespace="NS", pod="payment-0", component="soldier", domain="payment"} 0x40
regiment_soldier_fallback{namespace="NS", pod="fraud-0", component="soldier", domain="fraud"} 0x40
regiment_soldier_fallback_active{namespace="NS", pod="fraud-0", component="soldier", domain="fraud"} 1x40
regiment_soldier_fallback{namespace="NS", pod="search-0", component="soldier", domain="search"} 0x35 1x5
regiment_soldier_fallback{namespace="NS", pod="merchant-0", component="soldier", domain="merchant"} 1x10 0x30
regiment_soldier_fallback{namespace="other", pod="payment-0", component="soldier", domain="payment"} 1x40`,
		fires: []string{`{domain="fraud"}`, `{domain="payment"}`},
	}},
	"RegimentDirectivesStale": {{
		name: "payment's acting Soldier accepts no directive; fraud's does; payment's standby waits",
		load: `
regiment_soldier_received_messages_total{namespace="NS", pod="payment-0", component="soldier", domain="payment"} 0+1x20 20x20
regiment_soldier_leader{namespace="NS", pod="payment-0", component="soldier", domain="payment"} 1x40
regiment_soldier_received_messages_total{namespace="NS", pod="payment-1", component="soldier", domain="payment"} 0x40
regiment_soldier_leader{namespace="NS", pod="payment-1", component="soldier", domain="payment"} 0x40
regiment_soldier_received_messages_total{namespace="NS", pod="fraud-0", component="soldier", domain="fraud"} 0+1x40
regiment_soldier_leader{namespace="NS", pod="fraud-0", component="soldier", domain="fraud"} 1x40`,
		fires: []string{`{domain="payment", pod="payment-0"}`},
	}},
	"RegimentWritesFailing": {{
		name: "checkout's writes are refused; ledger's failed for three minutes; cart's succeed",
		load: `
regiment_soldier_app_failing{namespace="NS", pod="payment-0", component="soldier", domain="payment", app="checkout", reason="forbidden"} 0x20 1x20
regiment_soldier_app_failing{namespace="NS", pod="payment-0", component="soldier", domain="payment", app="ledger", reason="conflict"} 0x37 1x3
regiment_soldier_app_failing{namespace="NS", pod="payment-0", component="soldier", domain="payment", app="cart", reason="forbidden"} 0x40`,
		fires: []string{`{app="checkout", domain="payment", reason="forbidden"}`},
	}},
	"RegimentAppAtCeiling": {{
		name: "checkout wants more than its max_replicas for twenty minutes, ledger for five",
		load: `
regiment_soldier_app_limited_by_max{namespace="NS", pod="payment-0", component="soldier", domain="payment", app="checkout"} _x20 72x20
regiment_soldier_app_limited_by_max{namespace="NS", pod="payment-0", component="soldier", domain="payment", app="ledger"} _x35 45x5`,
		fires: []string{`{app="checkout", domain="payment"}`},
	}},
	"RegimentLeaderLost": {{
		name: "no Commander has led for ten minutes (another release's does)",
		load: `
regiment_commander_pool_capacity_cores{namespace="NS", pod="commander-0", component="commander"} 640x25 _x15
regiment_commander_pool_capacity_cores{namespace="other", pod="commander-0", component="commander"} 640x40`,
		fires: []string{`{}`},
	}, {
		name: "a failover: the leader's figures pause two minutes",
		load: `
regiment_commander_pool_capacity_cores{namespace="NS", pod="commander-0", component="commander"} 640x30 _x10
regiment_commander_pool_capacity_cores{namespace="NS", pod="commander-1", component="commander"} _x32 640x8`,
	}},
	"RegimentSoldierLeaderLost": {{
		name: "both of payment's Soldiers wait; one of fraud's acts",
		load: `
regiment_soldier_leader{namespace="NS", pod="payment-0", component="soldier", domain="payment"} 1x20 0x20
regiment_soldier_leader{namespace="NS", pod="payment-1", component="soldier", domain="payment"} 0x40
regiment_soldier_leader{namespace="NS", pod="fraud-0", component="soldier", domain="fraud"} 0x40
regiment_soldier_leader{namespace="NS", pod="fraud-1", component="soldier", domain="fraud"} 1x40`,
		fires: []string{`{domain="payment"}`},
	}},
	"RegimentRecordFailing": {{
		name: "payment's Soldier loses steps",
		load: `
regiment_soldier_record_failures_total{namespace="NS", pod="soldier-payment-0", component="soldier", domain="payment"} 0x10 0+5x30
regiment_soldier_record_failures_total{namespace="NS", pod="soldier-search-0", component="soldier", domain="search"} 0x40
regiment_commander_record_failures_total{namespace="NS", pod="commander-0", component="commander"} 0x40`,
		fires: []string{`{component="soldier", domain="payment", pod="soldier-payment-0"}`},
	}},
	"RegimentStateNotRestored": {{
		name: "payment's Soldier started fresh",
		load: `
regiment_soldier_state_restore_failed{namespace="NS", pod="soldier-payment-0", component="soldier", domain="payment"} 1x40
regiment_soldier_state_restore_failed{namespace="NS", pod="soldier-search-0", component="soldier", domain="search"} 0x40`,
		fires: []string{`{domain="payment", pod="soldier-payment-0"}`},
	}},
}

// TestAlertsFireInTheirCaseAndNotOtherwise renders the chart's
// PrometheusRule and runs each alert on the real PromQL engine over its
// case's history: it fires (its expression holds at every evaluation of
// its for, a minute apart, up to the end) for exactly the series the case
// names, and for none of the others beside them.
func TestAlertsFireInTheirCaseAndNotOtherwise(t *testing.T) {
	rules, ns := chartAlerts(t)
	for alert := range rules {
		if _, ok := onCallAlerts[alert]; !ok {
			t.Errorf("alert %s has no case", alert)
		}
	}
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	for alert, cases := range onCallAlerts {
		rule, ok := rules[alert]
		if !ok {
			t.Errorf("the chart has no alert %s", alert)
			continue
		}
		for _, c := range cases {
			t.Run(alert+"/"+c.name, func(t *testing.T) {
				load := strings.ReplaceAll(c.load, `"NS"`, `"`+ns+`"`)
				st := promqltest.LoadedStorage(t, "load 1m"+strings.ReplaceAll(load, "\n", "\n  ")+"\n")
				end := 40 * time.Minute
				var firing map[string]bool
				for at := end - rule.for_; at <= end; at += time.Minute {
					q, err := eng.NewInstantQuery(context.Background(), st, nil, rule.expr, time.Unix(0, 0).Add(at))
					if err != nil {
						t.Fatal(err)
					}
					res := q.Exec(context.Background())
					v, ok := res.Value.(promql.Vector)
					if res.Err != nil || !ok {
						t.Fatalf("%s at %s: %v", rule.expr, at, res.Err)
					}
					now := map[string]bool{}
					for _, s := range v {
						if s.Metric.Get("namespace") != ns {
							t.Errorf("at %s a series of namespace %q: %s", at, s.Metric.Get("namespace"), s.Metric)
						}
						now[labels.NewBuilder(s.Metric).Del(labels.MetricName, "namespace").Labels().String()] = true
					}
					if firing == nil {
						firing = now
					}
					for k := range firing {
						if !now[k] {
							delete(firing, k)
						}
					}
					q.Close()
				}
				got := make([]string, 0, len(firing))
				for k := range firing {
					got = append(got, k)
				}
				sort.Strings(got)
				want := slices.Clone(c.fires)
				sort.Strings(want)
				if !slices.Equal(got, want) {
					t.Errorf("%s (for %s) fires for %v, want %v\nexpr: %s", alert, rule.for_, got, want, rule.expr)
				}
			})
		}
	}
}

// TestAlertsUseExportedMetrics: every metric an alert selects is one a
// Commander or a Soldier exports, each name of a regex matcher's
// alternatives included: no alert stays silent by a typo or a renamed
// metric. The names are the daemon package's metrics and what a real
// Soldier and Commander serve on /metrics after a tick.
func TestAlertsUseExportedMetrics(t *testing.T) {
	rules, _ := chartAlerts(t)
	exported := daemonMetrics(t)
	for name := range servedMetrics(t) {
		exported[name] = true
	}
	for _, must := range []string{"regiment_soldier_leader", "regiment_soldier_state_restore_failed",
		"regiment_soldier_record_failures_total", "regiment_commander_pool_capacity_cores"} {
		if !exported[must] {
			t.Fatalf("the daemons' metrics lack %s: the scrape found %d names", must, len(exported))
		}
	}
	for alert, r := range rules {
		expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.expr)
		if err != nil {
			t.Errorf("%s: %v", alert, err)
			continue
		}
		parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			for _, m := range vs.LabelMatchers {
				if m.Name != labels.MetricName {
					continue
				}
				for _, name := range alternatives(m) {
					if !exported[name] {
						t.Errorf("%s selects %s, which no daemon exports", alert, name)
					}
				}
			}
			return nil
		})
	}
}

// alternatives are the metric names a name matcher selects: its value, or
// each name its regex's alternatives spell out (one group of alternatives
// at most, as in regiment_(soldier|commander)_x).
func alternatives(m *labels.Matcher) []string {
	if m.Type == labels.MatchEqual {
		return []string{m.Value}
	}
	g := regexp.MustCompile(`^([a-z_]*)\(([a-z_|]+)\)([a-z_]*)$`).FindStringSubmatch(m.Value)
	if g == nil {
		return strings.Split(m.Value, "|")
	}
	var out []string
	for _, alt := range strings.Split(g[2], "|") {
		out = append(out, g[1]+alt+g[3])
	}
	return out
}

// servedMetrics are the metric names a real Soldier and Commander serve on
// /metrics after one tick on the small example over an embedded NATS.
func servedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	cfgPath := "../examples/small.hcl"
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names := map[string]bool{}
	cmdAddr := freeAddr(t)
	c := daemon.NewCommanderProcess(cfg, daemon.CommanderOptions{ConfigPath: cfgPath, NATSURL: srv.ClientURL(), DataDir: t.TempDir(), Listen: cmdAddr},
		daemon.Deps{}, hclog.NewNullLogger())
	defer c.Close()
	if err := c.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tick(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	scrapeNames(t, cmdAddr, names)
	solAddr := freeAddr(t)
	s := daemon.NewSoldierProcess(cfg, daemon.SoldierOptions{ConfigPath: cfgPath, Domain: "payment", NATSURL: srv.ClientURL(),
		ScenarioPath: "../cmd/regiment/testdata/small-sample.hcl", DataDir: t.TempDir(), Listen: solAddr}, daemon.Deps{}, nil, hclog.NewNullLogger())
	defer s.Close()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Tick(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	scrapeNames(t, solAddr, names)
	return names
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

var typeLine = regexp.MustCompile(`(?m)^# TYPE (\S+) (\S+)`)

// scrapeNames adds the metric names served at addr's /metrics to names
// (a histogram's with _bucket, _sum and _count).
func scrapeNames(t *testing.T, addr string, names map[string]bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/metrics: %d %v", addr, resp.StatusCode, err)
	}
	for _, m := range typeLine.FindAllStringSubmatch(string(b), -1) {
		names[m[1]] = true
		if m[2] == "histogram" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[m[1]+s] = true
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s/metrics served no metric", addr)
	}
}
