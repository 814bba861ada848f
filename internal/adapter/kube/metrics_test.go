package kube

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"k8s.io/klog/v2"

	"github.com/regimentd/regiment/internal/adapter/promclient"
	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// appSeries are one pod's series as the default queries read them
// (Kubernetes service discovery's namespace and pod labels, cAdvisor,
// kube-state-metrics), constant rates over the loaded 10 minutes at a 15 s
// step: ok and failed requests per second, all latencies in the
// (0.05, 0.1] bucket, CPU cores used of 1 requested, memory bytes used of
// 1000 requested, restarts per minute. A negative value leaves its series
// out.
type appSeries struct {
	ns, pod                   string
	ok, failed, cpu, mem, rpm float64
}

func (a appSeries) String() string {
	var b strings.Builder
	l := fmt.Sprintf(`namespace=%q,pod=%q`, a.ns, a.pod)
	c := l + `,container="app"`
	line := func(format string, args ...any) { fmt.Fprintf(&b, "  "+format+"\n", args...) }
	if a.ok >= 0 {
		line(`http_requests_total{%s,code="200"} 0+%gx40`, l, a.ok*15)
		line(`http_request_duration_seconds_bucket{%s,le="0.05"} 0+0x40`, l)
		line(`http_request_duration_seconds_bucket{%s,le="0.1"} 0+%gx40`, l, (a.ok+max(a.failed, 0))*15)
		line(`http_request_duration_seconds_bucket{%s,le="+Inf"} 0+%gx40`, l, (a.ok+max(a.failed, 0))*15)
	}
	if a.failed >= 0 {
		line(`http_requests_total{%s,code="500"} 0+%gx40`, l, a.failed*15)
	}
	if a.cpu >= 0 {
		line(`container_cpu_usage_seconds_total{%s} 0+%gx40`, c, a.cpu*15)
		line(`kube_pod_container_resource_requests{%s,resource="cpu",unit="core"} 1+0x40`, c)
	}
	if a.mem >= 0 {
		line(`container_memory_working_set_bytes{%s} %g+0x40`, c, a.mem)
		line(`kube_pod_container_resource_requests{%s,resource="memory",unit="byte"} 1000+0x40`, c)
	}
	if a.rpm >= 0 {
		line(`kube_pod_container_status_restarts_total{%s} 0+%gx40`, c, a.rpm/4)
	}
	return b.String()
}

// p99InBucket is histogram_quantile(0.99) of requests all in (0.05, 0.1].
const p99InBucket = 0.05 + 0.99*0.05

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

func TestPlanRendersTemplates(t *testing.T) {
	targets := []Target{
		{WorkloadRef: domains.WorkloadRef{Kind: domains.KindDeployment, Namespace: "shop", Name: "web.v2", Selector: "app=web,app.kubernetes.io/part-of=shop"}},
		{WorkloadRef: domains.WorkloadRef{Kind: domains.KindStatefulSet, Namespace: "ledger", Name: "db", Selector: "app=db"}},
	}
	targets[0].Queries.RPS = domains.Query{Template: `sum(rate(x{namespace="{{.Namespace}}",{{.Matchers}},pod=~"{{.Pods}}"}[1m]))`}
	plan := planQueries(targets)
	if len(plan) != 2+int(numMetrics)-1 {
		t.Fatalf("%d requests, want one per app for rps and one batch per other signal", len(plan))
	}
	want := `sum(rate(x{namespace="shop",app="web",app_kubernetes_io_part_of="shop",pod=~"(web[.]v2)-[a-z0-9]+-[a-z0-9]+"}[1m]))`
	if plan[0].query != want || plan[0].err != nil {
		t.Errorf("per app: %q, %v\nwant %q", plan[0].query, plan[0].err, want)
	}
	v := batchVars(targets, []int{0, 1})
	if v.Namespaces != "ledger|shop" || v.Workloads != "web[.]v2|db" || v.Pods != "(web[.]v2|db)-(?:[a-z0-9]+-[a-z0-9]+|[0-9]+)" ||
		v.Labels["app"] != "web|db" || v.Labels["app_kubernetes_io_part_of"] != "shop" {
		t.Errorf("batch vars %+v", v)
	}
	for m := range numMetrics {
		if domains.Signals[m] != m.String() {
			t.Errorf("metric %d is %s, signal %s", m, m, domains.Signals[m])
		}
	}
}

// observerForMetrics is an Observer with targets but no informers, for the
// metric logic alone.
func observerForMetrics(t *testing.T, url string, maxAge time.Duration, targets ...Target) (*Observer, *time.Time) {
	p, err := promclient.New(domains.Prometheus{URL: url, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	o := NewObserver(nil, ObserverConfig{Prometheus: p, MaxAge: maxAge, TargetUtilisation: 0.5, Targets: targets})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o.clock = func() time.Time { return now }
	return o, &now
}

func metricTarget(i int, ns, name string, kind domains.WorkloadKind) Target {
	return Target{App: soldier.App{Index: i, Name: "d/" + name, Capacity: 10},
		WorkloadRef: domains.WorkloadRef{Kind: kind, Namespace: ns, Name: name, Selector: "app=" + name}}
}

// observe runs the metric half of Observe with every app at 4 replicas.
func observe(o *Observer) (*soldier.Observation, []AppStatus) {
	obs := &soldier.Observation{Apps: make([]soldier.AppObservation, len(o.cfg.Targets))}
	for i := range obs.Apps {
		obs.Apps[i].Replicas = 4
	}
	status := make([]AppStatus, len(obs.Apps))
	o.observeMetrics(context.Background(), obs, status)
	return obs, status
}

func TestObserverMetricFreshness(t *testing.T) {
	s := promtest.New(t, "load 15s\n")
	o, now := observerForMetrics(t, s.URL, time.Minute, metricTarget(0, "ns", "web", domains.KindDeployment))

	// Never read: stand-ins that hold the size, flagged missing.
	obs, status := observe(o)
	if a := obs.Apps[0]; a.RPS != 4*10*0.5 || a.CPUUtil != 0.5 || a.P99 != 0 || a.ErrorRate != 0 || !a.Blind {
		t.Errorf("missing stand-ins: %+v, want the size-holding values and blind", a)
	}
	for m, st := range status[0].Metrics {
		if st.Freshness != Missing || !errors.Is(st.Err, promclient.ErrNoData) {
			t.Errorf("%s: %v (%v), want missing with promclient.ErrNoData", Metric(m), st.Freshness, st.Err)
		}
	}

	web := appSeries{ns: "ns", pod: "web-6d4cf-x2k4p", ok: 114, failed: 6, cpu: 0.6, mem: 500, rpm: 4}
	s.Load(t, promtest.Script(web))
	obs, status = observe(o)
	a := obs.Apps[0]
	if !near(a.RPS, 120) || !near(a.P99, p99InBucket) || !near(a.ErrorRate, 0.05) || !near(a.CPUUtil, 0.6) || status[0].Stale() || a.Blind {
		t.Errorf("fresh: %+v %+v", a, status[0])
	}
	if !near(a.MemUtil, 0.5) || !near(a.RestartRate, 4) {
		t.Errorf("memory %g, restarts %g per minute; want 0.5 and 4", a.MemUtil, a.RestartRate)
	}

	// An outage: the last values are held, flagged stale with their age.
	s.Fail(true)
	*now = now.Add(30 * time.Second)
	obs, status = observe(o)
	if a := obs.Apps[0]; !near(a.RPS, 120) || !near(a.P99, p99InBucket) || a.Blind {
		t.Errorf("stale values not held: %+v", a)
	}
	if st := status[0].Metrics[MetricRPS]; st.Freshness != Stale || st.Age != 30*time.Second || st.Err == nil {
		t.Errorf("rps status %+v, want stale for 30s with the error", st)
	}

	// Past MaxAge: stand-ins again, never a silent zero.
	*now = now.Add(31 * time.Second)
	obs, status = observe(o)
	if a := obs.Apps[0]; a.RPS != 20 || status[0].Metrics[MetricRPS].Freshness != Missing || !a.Blind {
		t.Errorf("past max age: %+v %+v", a, status[0].Metrics[MetricRPS])
	}

	// No traffic: NaN latency and error rate are exact zeros, not stand-ins.
	s.Fail(false)
	s.Load(t, promtest.Script(appSeries{ns: "ns", pod: "web-6d4cf-x2k4p", ok: 0, failed: -1, cpu: 0.01, mem: 1, rpm: 0}))
	obs, status = observe(o)
	if a := obs.Apps[0]; a.RPS != 0 || a.P99 != 0 || a.ErrorRate != 0 || status[0].Stale() {
		t.Errorf("no traffic: %+v %+v", a, status[0])
	}
	// With traffic, a NaN latency is missing, not zero.
	s.Load(t, promtest.Script(promtest.Series(`http_requests_total{namespace="ns",pod="web-6d4cf-x2k4p",code="200"} 0+150x40`),
		promtest.Series(`http_request_duration_seconds_bucket{namespace="ns",pod="web-6d4cf-x2k4p",le="+Inf"} 0+0x40`)))
	*now = now.Add(5 * time.Minute)
	if _, status = observe(o); status[0].Metrics[MetricP99].Freshness != Missing || !errors.Is(status[0].Metrics[MetricP99].Err, promclient.ErrNotFinite) {
		t.Errorf("NaN p99 with traffic: %+v, want missing", status[0].Metrics[MetricP99])
	}
}

func TestObserverMissingSeriesMarksOnlyThatApp(t *testing.T) {
	s := promtest.New(t, promtest.Script(
		appSeries{ns: "shop", pod: "web-6d4cf-x2k4p", ok: 10, failed: 0, cpu: 0.3, mem: -1, rpm: -1},
		appSeries{ns: "shop", pod: "api-7c9bd-q8r2m", ok: 20, failed: -1, cpu: -1, mem: 800, rpm: 0},
	))
	o, _ := observerForMetrics(t, s.URL, time.Minute,
		metricTarget(0, "shop", "web", domains.KindDeployment), metricTarget(1, "shop", "api", domains.KindDeployment))
	obs, status := observe(o)
	web, api := obs.Apps[0], obs.Apps[1]
	if web.Blind || status[0].Stale() || !near(web.CPUUtil, 0.3) || web.MemUtil != 0 {
		t.Errorf("web: %+v %+v; want fresh and not blind (no memory or restart series does not blind)", web, status[0])
	}
	if st := status[0].Metrics[MetricMemory]; st.Freshness != Missing {
		t.Errorf("web memory: %+v, want missing", st)
	}
	if !api.Blind || status[1].Metrics[MetricCPU].Freshness != Missing || status[1].Metrics[MetricRPS].Freshness != Fresh || !near(api.MemUtil, 0.8) {
		t.Errorf("api: %+v %+v; want blind by its missing CPU, the rest fresh", api, status[1])
	}
	// api never failed a request: it has no 5xx series, and its error rate is a fresh 0.
	if api.ErrorRate != 0 || status[1].Metrics[MetricErrorRate].Freshness != Fresh {
		t.Errorf("api error rate %g (%+v), want a fresh 0", api.ErrorRate, status[1].Metrics[MetricErrorRate])
	}
}

func TestObserverPerAppSetQueryOverrides(t *testing.T) {
	s := promtest.New(t, promtest.Script(
		appSeries{ns: "shop", pod: "web-6d4cf-x2k4p", ok: 10, failed: 0, cpu: 0.3, mem: 100, rpm: 0},
		appSeries{ns: "shop", pod: "api-7c9bd-q8r2m", ok: 20, failed: 0, cpu: 0.2, mem: 100, rpm: 0},
		promtest.Series(`edge_latency_seconds{namespace="shop",service="web"} 0.25+0x40`),
		promtest.Series(`edge_requests_total{namespace="shop",app="api"} 0+450x40`),
	))
	web, api := metricTarget(0, "shop", "web", domains.KindDeployment), metricTarget(1, "shop", "api", domains.KindDeployment)
	// web's set reads its p99 from a gauge, per app; api's set its request
	// rate from another counter, batched by its selector's app label.
	web.Queries.P99 = domains.Query{Template: `max(edge_latency_seconds{namespace="{{.Namespace}}",service="{{.Name}}"})`}
	api.Queries.RPS = domains.Query{Template: `sum by (namespace, app) (rate(edge_requests_total{namespace=~"{{.Namespaces}}",app=~"{{.Labels.app}}"}[1m]))`,
		BatchBy: []string{"namespace", "app"}}
	o, _ := observerForMetrics(t, s.URL, time.Minute, web, api)
	obs, status := observe(o)
	if a := obs.Apps[0]; a.P99 != 0.25 || !near(a.RPS, 10) || status[0].Stale() {
		t.Errorf("web: %+v %+v, want p99 0.25 from its own query", a, status[0])
	}
	if a := obs.Apps[1]; !near(a.RPS, 30) || !near(a.P99, p99InBucket) || status[1].Stale() {
		t.Errorf("api: %+v %+v, want 30 rps from its own query", a, status[1])
	}
}

// TestObserverBatchesQueries counts the queries of one tick of a 500-app
// domain: one per signal with the default queries (the per-app templates
// sent four per app, 2,000), plus one per app of a set with a per-app
// override.
func TestObserverBatchesQueries(t *testing.T) {
	var targets []Target
	var series []fmt.Stringer
	for i := range 500 {
		ns, kind, name, pod := "shop", domains.KindDeployment, fmt.Sprintf("svc-%d", i), fmt.Sprintf("svc-%d-6d4cf-x2k4p", i)
		if i%5 == 4 {
			ns, kind, name, pod = "ledger", domains.KindStatefulSet, fmt.Sprintf("db-%d", i), fmt.Sprintf("db-%d-0", i)
		}
		targets = append(targets, metricTarget(i, ns, name, kind))
		series = append(series, appSeries{ns: ns, pod: pod, ok: float64(i), failed: 1, cpu: float64(i%10) / 10, mem: float64(i), rpm: 0})
	}
	s := promtest.New(t, promtest.Script(series...))
	o, _ := observerForMetrics(t, s.URL, time.Minute, targets...)
	start := time.Now()
	obs, status := observe(o)
	elapsed := time.Since(start)
	n, _ := s.Stats()
	if n != int(numMetrics) {
		t.Errorf("%d queries for 500 apps, want %d", n, numMetrics)
	}
	for _, i := range []int{0, 1, 9, 10, 104, 499} {
		a, rps := obs.Apps[i], float64(i)+1
		if status[i].Stale() || !near(a.RPS, rps) || !near(a.ErrorRate, 1/rps) || !near(a.CPUUtil, float64(i%10)/10) || !near(a.MemUtil, float64(i)/1000) {
			t.Errorf("app %d (%s): %+v %+v", i, targets[i].Name, a, status[i])
		}
	}
	// The same domain with every signal per app, as before batching: six
	// queries per app (four before memory and restarts).
	perApp := make([]Target, len(targets))
	for i, tg := range targets {
		for m, q := range tg.Queries.List() {
			*q = domains.Query{Template: `sum(x{namespace="{{.Namespace}}",pod=~"{{.Pods}}",signal="` + Metric(m).String() + `"})`}
		}
		perApp[i] = tg
	}
	if got := len(planQueries(perApp)); got != 500*int(numMetrics) {
		t.Errorf("per-app plan: %d queries, want %d", got, 500*numMetrics)
	}
	longest, methods := s.LongestQuery()
	if methods[http.MethodPost] != int(numMetrics) {
		t.Errorf("requests per method %v: want the long batched queries POSTed", methods)
	}
	t.Logf("500 apps: %d queries per tick batched (%v, the longest %d bytes), %d per app", n, elapsed, longest, 500*numMetrics)

	for i := range 10 {
		targets[i].Queries.RPS = domains.Query{Template: `sum(rate(http_requests_total{namespace="{{.Namespace}}",pod=~"{{.Pods}}"}[1m]))`}
	}
	o, _ = observerForMetrics(t, s.URL, time.Minute, targets...)
	before, _ := s.Stats()
	obs, status = observe(o)
	if n, _ := s.Stats(); n-before != int(numMetrics)+10 {
		t.Errorf("%d queries with ten per-app overrides, want %d", n-before, int(numMetrics)+10)
	}
	if a := obs.Apps[3]; !near(a.RPS, 4) || status[3].Stale() {
		t.Errorf("app 3 under its per-app rps query: %+v %+v", a, status[3])
	}
}

// The default sizing queries read the rate of the last scrape interval, as
// the simulator measures (a 10 s sample), not a one-minute average: an app
// at 1 request/s and 0.5 cores for ten minutes that steps to 4 requests/s and
// 0.9 cores in the last 15 s scrape is observed at 4 and 0.9 (a one-minute
// rate() reads 2 and 0.63).
func TestDefaultQueriesSizeFromTheLastScrape(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(appSeries{ns: "shop", pod: "web-6d4cf-x2k4p", ok: 1, failed: 0, cpu: 0.5, mem: 10, rpm: 0}.String(), "\n") {
		switch {
		case strings.Contains(l, `http_requests_total{`) && strings.Contains(l, `code="200"`):
			l = strings.Replace(l, "0+15x40", "0+15x39 645", 1) // +60 requests in the last 15 s
		case strings.Contains(l, "container_cpu_usage_seconds_total"):
			l = strings.Replace(l, "0+7.5x40", "0+7.5x39 306", 1) // +13.5 core-seconds in the last 15 s
		}
		lines = append(lines, l)
	}
	s := promtest.New(t, "load 15s\n"+strings.Join(lines, "\n"))
	o, _ := observerForMetrics(t, s.URL, time.Minute, metricTarget(0, "shop", "web", domains.KindDeployment))
	obs, status := observe(o)
	if a := obs.Apps[0]; status[0].Stale() || !near(a.RPS, 4) || !near(a.CPUUtil, 0.9) {
		t.Errorf("after a step in the last scrape: rps %v, cpu %v (%+v); want 4 and 0.9, the last interval's rates", a.RPS, a.CPUUtil, status[0])
	}
}

func TestRouteKlogSendsClientGoLogsToHclog(t *testing.T) {
	var buf strings.Builder
	RouteKlog(hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Debug}))
	defer klog.SetLogger(logr.Discard())
	klog.Background().WithName("leaderelection").Error(errors.New("boom"), "renew failed", "lock", "ns/l")
	klog.Background().Info("acquired", "lock", "ns/l")
	out := buf.String()
	if !strings.Contains(out, `[WARN]  renew failed: error=boom logger=leaderelection lock=ns/l`) || !strings.Contains(out, `[DEBUG] acquired: lock=ns/l`) {
		t.Errorf("got:\n%s", out)
	}
}

func TestTargetsCarryTheirSetsQueries(t *testing.T) {
	cfg, err := config.Parse([]byte(`cluster "k" {
  capacity_cores = 100
}
prometheus {
  url = "http://prometheus:9090"
}
domain "shop" {
  slo {
    latency_p99 = "200ms"
  }
  apps "web" {
    cpu_per_replica = 0.1
    service_time    = "100ms"
    queries {
      p99 = "max(edge_p99{service=\"{{.Name}}\"})"
    }
  }
  apps "api" {
    cpu_per_replica = 0.1
    service_time    = "100ms"
  }
}
`), "k.hcl")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := Targets(cfg, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if q := ts[0].Queries.P99; q.Template != `max(edge_p99{service="{{.Name}}"})` || len(q.BatchBy) != 0 {
		t.Errorf("web's p99: %+v, want its set's per-app query", q)
	}
	if q := ts[1].Queries.P99; q.Template != domains.DefaultPrometheusQueries.P99.Template {
		t.Errorf("api's p99: %+v, want the default", q)
	}
	// One batch per signal for both apps, but web's p99 on its own.
	if plan := planQueries(ts); len(plan) != int(numMetrics)+1 {
		t.Errorf("%d requests, want %d", len(plan), numMetrics+1)
	}
}

// TestCallerTargetsOfMapsTheCallingAppsToTheirWorkloads: each calling app, in any
// domain, is one target carrying its own set's queries, and each app of the
// domain lists its callers by index in those targets.
func TestCallerTargetsOfMapsTheCallingAppsToTheirWorkloads(t *testing.T) {
	cfg, err := config.Parse([]byte(`cluster "k" {
  capacity_cores = 100
}
domain "payment" {
  slo {
    latency_p99 = "200ms"
  }
  apps "checkout" {
    count           = 3
    cpu_per_replica = 0.1
    service_time    = "100ms"
    depends_on      = ["fraud/scoring"]
    call_ratio      = 2
    call_lag        = "20s"
    queries {
      rps = "sum(rate(edge_requests{service=\"{{.Name}}\"}[1m]))"
    }
  }
}
domain "fraud" {
  slo {
    latency_p99 = "100ms"
  }
  apps "rules" {
    cpu_per_replica = 0.1
    service_time    = "10ms"
  }
  apps "scoring" {
    count           = 2
    cpu_per_replica = 0.1
    service_time    = "10ms"
  }
}
`), "k.hcl")
	if err != nil {
		t.Fatal(err)
	}
	c, err := CallerTargetsOf(cfg, "fraud")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range c.Targets {
		names = append(names, tg.App.Name)
	}
	if want := []string{"payment/checkout-0", "payment/checkout-2", "payment/checkout-1"}; !slices.Equal(names, want) {
		t.Errorf("caller targets %v, want %v (in the order their callees list them)", names, want)
	}
	if q := c.Targets[0].Queries.RPS.Template; !strings.Contains(q, "edge_requests") {
		t.Errorf("a caller's rps query %q, want its own set's", q)
	}
	want := [][]soldier.Caller{nil, {{App: 0, Ratio: 2}, {App: 1, Ratio: 2}}, {{App: 2, Ratio: 2}}}
	if !slices.EqualFunc(c.Of, want, slices.Equal) {
		t.Errorf("callers per fraud app %v, want %v", c.Of, want)
	}
	if c, err := CallerTargetsOf(cfg, "payment"); c != nil || err != nil {
		t.Errorf("payment, called by nobody: %+v, %v; want nil, nil", c, err)
	}
	if _, err := CallerTargetsOf(cfg, "nope"); err == nil {
		t.Error("an unknown domain: no error")
	}
}
