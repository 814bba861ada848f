package deploy

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
)

// TestAlertsFireOnLostStepsAndNotOtherwise renders the chart's
// PrometheusRule and runs each alert's expression on the real PromQL
// engine: over a Soldier whose record failures counter rises it returns a
// series (the alert fires), over one whose counter stays flat none.
func TestAlertsFireOnLostStepsAndNotOtherwise(t *testing.T) {
	c := chartCases[1] // the case with prometheusRule.enabled
	objs, _ := renderChart(t, c)
	pr := find(objs, "PrometheusRule", "regiment")
	if pr == nil {
		t.Fatalf("%s renders no PrometheusRule", c.name)
	}
	exprs := map[string]string{}
	groups, _ := field(pr.Object, "spec", "groups").([]any)
	for _, g := range groups {
		rules, _ := g.(map[string]any)["rules"].([]any)
		for _, r := range rules {
			m := r.(map[string]any)
			exprs[m["alert"].(string)] = m["expr"].(string)
		}
	}
	ns := `namespace="` + c.namespace + `", pod="soldier-payment-0", component="soldier", domain="payment"`
	other := `namespace="` + c.namespace + `", pod="soldier-search-0", component="soldier", domain="search"`
	st := promqltest.LoadedStorage(t, "load 1m\n"+
		"  regiment_soldier_record_failures_total{"+ns+"} 0 0 0 0 5 10 15 20 25 30 35\n"+
		"  regiment_soldier_record_failures_total{"+other+"} 0 0 0 0 0 0 0 0 0 0 0\n"+
		"  regiment_commander_record_failures_total{namespace=\""+c.namespace+"\", pod=\"commander-0\", component=\"commander\"} 0 0 0 0 0 0 0 0 0 0 0\n"+
		"  regiment_soldier_state_restore_failed{"+ns+"} 1 1 1 1 1 1 1 1 1 1 1\n"+
		"  regiment_soldier_state_restore_failed{"+other+"} 0 0 0 0 0 0 0 0 0 0 0\n")
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	for _, alert := range []string{"RegimentRecordFailing", "RegimentStateNotRestored"} {
		expr, ok := exprs[alert]
		if !ok {
			t.Errorf("no alert %s", alert)
			continue
		}
		q, err := eng.NewInstantQuery(context.Background(), st, nil, expr, time.Unix(600, 0))
		if err != nil {
			t.Fatalf("%s: %v", alert, err)
		}
		res := q.Exec(context.Background())
		v, ok := res.Value.(promql.Vector)
		if res.Err != nil || !ok {
			t.Fatalf("%s: %v", alert, res.Err)
		}
		if len(v) != 1 || v[0].Metric.Get("domain") != "payment" {
			t.Errorf("%s fires for %v, want the payment Soldier only", alert, v)
		}
		q.Close()
	}
}
