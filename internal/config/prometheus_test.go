package config

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

func TestParsePrometheusRules(t *testing.T) {
	prom := func(body string) string { return "prometheus {\n  url = \"http://p:9090\"\n" + body + "}\n" }
	cases := []ruleCase{
		{name: "an inline bearer token is refused",
			add:  prom("  bearer_token = \"abc\"\n"),
			line: 14, col: 18, summary: "Inline token not allowed", hint: "bearer_token_file"},
		{name: "an Authorization header is refused",
			add:  prom("  headers = { Authorization = \"Bearer abc\" }\n"),
			line: 14, col: 13, summary: "Invalid headers", hint: "bearer_token_file"},
		{name: "a header name must be an HTTP token",
			add:  prom("  headers = { \"X Tenant\" = \"a\" }\n"),
			line: 14, col: 13, summary: "Invalid headers", hint: "not an HTTP header name"},
		{name: "headers are a map of strings",
			add:  prom("  headers = \"X-Scope-OrgID: a\"\n"),
			line: 14, col: 13, summary: "headers", hint: "a map of strings"},
		{name: "insecure_skip_verify is a bool",
			add:  prom("  tls {\n    insecure_skip_verify = \"yes\"\n  }\n"),
			line: 15, col: 28, summary: "insecure_skip_verify", hint: "true or false"},
		{name: "a client certificate needs its key",
			add:  prom("  tls {\n    cert_file = \"client.crt\"\n  }\n"),
			line: 15, col: 17, summary: "Missing key_file", hint: "both cert_file and key_file"},
		{name: "batch_by names labels",
			add:  prom("  queries {\n    batch_by = [\"name space\"]\n  }\n"),
			line: 15, col: 17, summary: "Invalid batch_by", hint: "not a PromQL label name"},
		{name: "a batched query sees the batch's variables",
			add:  prom("  queries {\n    batch_by = [\"namespace\", \"workload\"]\n    rps = \"x{namespace=\\\"{{.Namespace}}\\\"}\"\n  }\n"),
			line: 16, col: 11, summary: "Invalid rps", hint: "batched by batch_by"},
		{name: "batch_by must tell a set's apps apart",
			add:  prom("  queries {\n    batch_by = [\"namespace\", \"team\"]\n    cpu = \"x{namespace=~\\\"{{.Namespaces}}\\\"}\"\n  }\n"),
			line: 15, col: 16, summary: "Invalid batch_by", hint: `apps "web": cpu batches by "team"`},
		{name: "an app set's queries are checked",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    queries {\n      p99 = \"{{.Nope}}\"\n    }"},
			line: 11, col: 13, summary: "Invalid p99", hint: "a per-app query"},
		{name: "a query with an unclosed parenthesis is not PromQL",
			add:  prom("  queries {\n    rps = \"sum(rate(http_requests_total{namespace=\\\"{{.Namespace}}\\\"}[1m])\"\n  }\n"),
			line: 15, col: 11, summary: "Invalid rps", hint: "not PromQL: unclosed left parenthesis at 1:50 of the query as run (at its end)"},
		{name: "a query with a bad range is not PromQL",
			add:  prom("  queries {\n    cpu = \"rate(x[1q])\"\n  }\n"),
			line: 15, col: 11, summary: "Invalid cpu", hint: "not PromQL:"},
		{name: "a query calling an unknown function is not PromQL",
			add:  prom("  queries {\n    memory = \"sum(rated(x[1m]))\"\n  }\n"),
			line: 15, col: 14, summary: "Invalid memory", hint: `unknown function with name "rated" at 1:5 of the query as run (at "rated(x[1m]))")`},
		{name: "a batched query is parsed as run on the batch's variables",
			add:  prom("  queries {\n    batch_by = [\"namespace\"]\n    p99 = \"max by (namespace) (x{namespace=~\\\"{{.Namespaces}}\\\"}\"\n  }\n"),
			line: 16, col: 11, summary: "Invalid p99", hint: "not PromQL: unclosed left parenthesis"},
		{name: "an app set's malformed query is located at its own line",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    queries {\n      error_rate = \"sum(x) /\"\n    }"},
			line: 11, col: 20, summary: "Invalid error_rate", hint: "not PromQL:"},
		{name: "an app set's batch_by must tell its apps apart",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    queries {\n      batch_by = [\"tier\"]\n      rps = \"x\"\n    }"},
			line: 11, col: 18, summary: "Invalid batch_by", hint: `rps batches by "tier"`},
	}
	runRules(t, cases)
}

// TestDefaultQueriesAreValidPromQL: the queries every app gets unless a
// queries block replaces them parse as the validator parses a user's.
func TestDefaultQueriesAreValidPromQL(t *testing.T) {
	for i, q := range domains.DefaultPrometheusQueries.List() {
		src := base + "prometheus {\n  url = \"http://p:9090\"\n  queries {\n    " + domains.Signals[i] + " = " + strconv.Quote(q.Template) + "\n    batch_by = " + batchBy(q.BatchBy) + "\n  }\n}\n"
		if _, err := Parse([]byte(src), "cluster.hcl"); err != nil {
			t.Errorf("the default %s query is refused: %v", domains.Signals[i], err)
		}
	}
}

func batchBy(labels []string) string {
	q := make([]string, len(labels))
	for i, l := range labels {
		q[i] = strconv.Quote(l)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func TestParsePrometheusTranslates(t *testing.T) {
	cfg, err := LoadFile("testdata/prometheus.hcl")
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs("testdata")
	p := cfg.Prometheus
	want := domains.Prometheus{URL: "https://mimir.monitoring:8080/prometheus", MaxAge: 2 * time.Minute, Timeout: 5 * time.Second,
		BearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
		Headers:         map[string]string{"X-Scope-OrgID": "payments"},
		TLS: domains.PrometheusTLS{CAFile: filepath.Join("testdata", "ca.crt"), CertFile: filepath.Join("testdata", "client.crt"),
			KeyFile: filepath.Join("testdata", "client.key"), ServerName: "mimir"},
	}
	want.Queries = p.Queries
	if !reflect.DeepEqual(p, want) {
		t.Errorf("prometheus\n got %+v\nwant %+v (relative paths against %s)", p, want, dir)
	}
	q := p.Queries
	if q.RPS.Template != `sum by (namespace, app) (rate(requests_total{namespace=~"{{.Namespaces}}",app=~"{{.Labels.app}}"}[1m]))` ||
		!reflect.DeepEqual(q.RPS.BatchBy, []string{"namespace", "app"}) {
		t.Errorf("rps %+v", q.RPS)
	}
	if !reflect.DeepEqual(q.Memory, domains.DefaultPrometheusQueries.Memory) || !reflect.DeepEqual(q.Restarts, domains.DefaultPrometheusQueries.Restarts) {
		t.Errorf("unset queries are not the defaults: %+v %+v", q.Memory, q.Restarts)
	}
	apps := cfg.Apps()
	checkout, ledger := cfg.Queries(apps[0]), cfg.Queries(apps[1])
	if checkout.P99.Template != `max(edge_p99_seconds{service="{{.Name}}"})` || checkout.P99.BatchBy != nil || checkout.RPS.Template != q.RPS.Template {
		t.Errorf("checkout's queries: p99 %+v, rps %+v; want its own p99 per app, the block's rps", checkout.P99, checkout.RPS)
	}
	if !reflect.DeepEqual(ledger, q) {
		t.Errorf("ledger's queries are not the block's: %+v", ledger)
	}
}
