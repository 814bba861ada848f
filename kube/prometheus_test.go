package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"k8s.io/klog/v2"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/soldier"
)

// fakePrometheus is a hand-written fake of the Prometheus HTTP API's instant
// query endpoint (GET /api/v1/query): there is no real Prometheus in the test
// environment. It answers each query with the value set for that exact query
// string: a number, NaN, no series (unset), or an HTTP 503 (failing).
type fakePrometheus struct {
	*httptest.Server
	mu      sync.Mutex
	values  map[string]string // query -> value as Prometheus formats it
	failing bool
	queries int
}

func newFakePrometheus(t testing.TB) *fakePrometheus {
	f := &fakePrometheus{values: map[string]string{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakePrometheus) set(query string, v float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values[query] = strconv.FormatFloat(v, 'g', -1, 64)
}

func (f *fakePrometheus) setRaw(query, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values[query] = v
}

func (f *fakePrometheus) unset(query string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.values, query)
}

func (f *fakePrometheus) fail(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing = on
}

func (f *fakePrometheus) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if f.failing {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"status":"error","errorType":"unavailable","error":"fake outage"}`)
		return
	}
	q := r.URL.Query().Get("query")
	if strings.HasPrefix(q, "scalar(") {
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"scalar","result":[%d,"%s"]}}`, time.Now().Unix(), f.values[q])
		return
	}
	if q == "two_series" {
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1,"1"]},{"metric":{"a":"2"},"value":[1,"2"]}]}}`)
		return
	}
	v, ok := f.values[q]
	if !ok {
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
		return
	}
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[%d,"%s"]}]}}`, time.Now().Unix(), v)
}

// testQueries are query templates whose rendering is easy to set in a fake.
var testQueries = domains.PrometheusQueries{
	RPS:       `rps{namespace="{{.Namespace}}",{{.Matchers}}}`,
	P99:       `p99{namespace="{{.Namespace}}",{{.Matchers}}}`,
	ErrorRate: `errors{namespace="{{.Namespace}}",{{.Matchers}}}`,
	CPU:       `cpu{namespace="{{.Namespace}}",workload="{{.Name}}"}`,
}

// setApp sets an app's four metrics in f, for the testQueries templates.
func (f *fakePrometheus) setApp(ns, name string, rps, p99, errRate, cpu float64) {
	m := fmt.Sprintf(`namespace=%q,app=%q}`, ns, name)
	f.set("rps{"+m, rps)
	f.set("p99{"+m, p99)
	f.set("errors{"+m, errRate)
	f.set(fmt.Sprintf(`cpu{namespace=%q,workload=%q}`, ns, name), cpu)
}

func TestPrometheusQuery(t *testing.T) {
	f := newFakePrometheus(t)
	p, err := NewPrometheus(domains.Prometheus{URL: f.URL, Timeout: time.Second, Queries: testQueries}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.set("up", 42.5)
	f.setRaw("nan", "NaN")
	f.setRaw("scalar(1)", "7")
	if v, err := p.Query(ctx, "up"); err != nil || v != 42.5 {
		t.Errorf("one sample: %v, %v", v, err)
	}
	if v, err := p.Query(ctx, "scalar(1)"); err != nil || v != 7 {
		t.Errorf("scalar: %v, %v", v, err)
	}
	if _, err := p.Query(ctx, "absent"); !errors.Is(err, ErrNoData) {
		t.Errorf("no series: %v, want ErrNoData", err)
	}
	if _, err := p.Query(ctx, "nan"); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN: %v, want ErrNotFinite", err)
	}
	if _, err := p.Query(ctx, "two_series"); err == nil || !strings.Contains(err.Error(), "aggregate") {
		t.Errorf("two series: %v, want an error asking to aggregate", err)
	}
	f.fail(true)
	if _, err := p.Query(ctx, "up"); err == nil || errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "fake outage") {
		t.Errorf("outage: %v, want Prometheus's error", err)
	}
}

func TestPrometheusRender(t *testing.T) {
	p, err := NewPrometheus(domains.Prometheus{URL: "http://p", Queries: domains.DefaultPrometheusQueries}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := &Target{WorkloadRef: domains.WorkloadRef{Namespace: "shop", Name: "web-0", Selector: "app=web,app.kubernetes.io/part-of=shop"}}
	q, err := p.Render(MetricRPS, tg)
	want := `sum(rate(http_requests_total{namespace="shop",app="web",app_kubernetes_io_part_of="shop"}[1m]))`
	if err != nil || q != want {
		t.Errorf("got %q, %v\nwant %q", q, err, want)
	}
}

// observerForMetrics is an Observer with targets but no informers, for the
// metric logic alone.
func observerForMetrics(t *testing.T, f *fakePrometheus, maxAge time.Duration) (*Observer, *time.Time) {
	p, err := NewPrometheus(domains.Prometheus{URL: f.URL, Timeout: time.Second, Queries: testQueries}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := NewObserver(nil, ObserverConfig{Prometheus: p, MaxAge: maxAge, TargetUtilisation: 0.5, Targets: []Target{
		{App: soldier.App{Index: 0, Name: "d/web", Capacity: 10}, WorkloadRef: domains.WorkloadRef{Namespace: "ns", Name: "web", Selector: "app=web"}},
	}})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o.clock = func() time.Time { return now }
	return o, &now
}

func TestObserverMetricFreshness(t *testing.T) {
	f := newFakePrometheus(t)
	o, now := observerForMetrics(t, f, time.Minute)
	obs := &soldier.Observation{Apps: make([]soldier.AppObservation, 1)}
	status := make([]AppStatus, 1)
	observe := func() soldier.AppObservation {
		t.Helper()
		obs.Apps[0].Replicas = 4
		o.observeMetrics(context.Background(), obs, status)
		return obs.Apps[0]
	}

	// Never read: stand-ins that hold the size, flagged missing.
	a := observe()
	if a.RPS != 4*10*0.5 || a.CPUUtil != 0.5 || a.P99 != 0 || a.ErrorRate != 0 || !a.Blind {
		t.Errorf("missing stand-ins: %+v, want the size-holding values and blind", a)
	}
	for m, st := range status[0].Metrics {
		if st.Freshness != Missing || !errors.Is(st.Err, ErrNoData) {
			t.Errorf("%s: %v (%v), want missing with ErrNoData", Metric(m), st.Freshness, st.Err)
		}
	}

	f.setApp("ns", "web", 120, 0.08, 0.002, 0.6)
	a = observe()
	if a.RPS != 120 || a.P99 != 0.08 || a.ErrorRate != 0.002 || a.CPUUtil != 0.6 || status[0].Stale() || a.Blind {
		t.Errorf("fresh: %+v %+v", a, status[0])
	}

	// An outage: the last values are held, flagged stale with their age.
	f.fail(true)
	*now = now.Add(30 * time.Second)
	a = observe()
	if a.RPS != 120 || a.P99 != 0.08 || a.Blind {
		t.Errorf("stale values not held: %+v", a)
	}
	if st := status[0].Metrics[MetricRPS]; st.Freshness != Stale || st.Age != 30*time.Second || st.Err == nil {
		t.Errorf("rps status %+v, want stale for 30s with the error", st)
	}

	// Past MaxAge: stand-ins again, never a silent zero.
	*now = now.Add(31 * time.Second)
	a = observe()
	if a.RPS != 20 || status[0].Metrics[MetricRPS].Freshness != Missing || !a.Blind {
		t.Errorf("past max age: %+v %+v", a, status[0].Metrics[MetricRPS])
	}

	// No traffic: NaN latency and error rate are exact zeros, not stand-ins.
	f.fail(false)
	f.setApp("ns", "web", 0, 0, 0, 0.01)
	f.setRaw(`p99{namespace="ns",app="web"}`, "NaN")
	f.unset(`errors{namespace="ns",app="web"}`)
	a = observe()
	if a.RPS != 0 || a.P99 != 0 || a.ErrorRate != 0 || status[0].Stale() {
		t.Errorf("no traffic: %+v %+v", a, status[0])
	}
	// With traffic, a NaN latency is missing, not zero.
	f.set(`rps{namespace="ns",app="web"}`, 50)
	*now = now.Add(5 * time.Minute)
	observe()
	if st := status[0].Metrics[MetricP99]; st.Freshness != Missing || !errors.Is(st.Err, ErrNotFinite) {
		t.Errorf("NaN p99 with traffic: %+v, want missing", st)
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
