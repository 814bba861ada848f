package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

func TestParseKubernetesRules(t *testing.T) {
	cases := []ruleCase{
		{name: "namespace must be a DNS label",
			add:  "kubernetes {\n  namespace = \"Shop_1\"\n}\n",
			line: 13, col: 15, summary: "Invalid namespace", hint: "lowercase letters"},
		{name: "lease_duration must be a duration",
			add:  "kubernetes {\n  lease_duration = 40\n}\n",
			line: 13, col: 20, summary: "Invalid lease_duration", hint: "has no unit"},
		{name: "hpa_headroom must not be negative",
			add:  "kubernetes {\n  hpa_headroom = -0.1\n}\n",
			line: 13, col: 18, summary: "Invalid hpa_headroom", hint: "must be in [0, 1000], got -0.1"},
		{name: "writes_per_second must be positive",
			add:  "kubernetes {\n  writes_per_second = -5\n}\n",
			line: 13, col: 23, summary: "Invalid writes_per_second", hint: "in (0, 10000]"},
		{name: "write_burst is a whole number of writes",
			add:  "kubernetes {\n  write_burst = 2.5\n}\n",
			line: 13, col: 17, summary: "Invalid write_burst"},
		{name: "pool_node_selector is an equality selector",
			add:  "kubernetes {\n  pool_node_selector = \"pool in (a)\"\n}\n",
			line: 13, col: 24, summary: "Invalid pool_node_selector", hint: "only equality"},
		{name: "pool_max_cores is positive",
			add:  "kubernetes {\n  pool_max_cores = -1\n}\n",
			line: 13, col: 20, summary: "Invalid pool_max_cores"},
		{name: "balloons need a pool",
			add:  "kubernetes {\n  balloon_pod_cores = 4\n}\n",
			line: 13, col: 23, summary: "Balloons without a pool", hint: "set pool_node_selector"},
		{name: "a balloon pod is at most a node",
			add:  "kubernetes {\n  pool_node_selector = \"pool=general\"\n  balloon_pod_cores = 64\n}\n",
			line: 14, col: 23, summary: "Invalid balloon_pod_cores"},
		{name: "the balloon priority class is an object name",
			add:  "kubernetes {\n  pool_node_selector = \"pool=general\"\n  balloon_priority_class = \"Low\"\n}\n",
			line: 14, col: 28, summary: "Invalid balloon_priority_class", hint: "lowercase"},
		{name: "a balloon toleration key is a qualified name",
			add:  "kubernetes {\n  balloon_tolerations = [\"dedi cated=apps:NoSchedule\"]\n}\n",
			line: 13, col: 26, summary: "Invalid balloon_tolerations", hint: `"dedi cated=apps:NoSchedule" has key "dedi cated", not a qualified name`},
		{name: "a balloon toleration names the bad entry among good ones",
			add:  "kubernetes {\n  balloon_tolerations = [\"spot\", \"gpu:Never\"]\n}\n",
			line: 13, col: 34, summary: "Invalid balloon_tolerations", hint: `"gpu:Never" has effect "Never", not one of NoSchedule, PreferNoSchedule, NoExecute`},
		{name: "a balloon toleration value is a label value",
			add:  "kubernetes {\n  balloon_tolerations = [\"dedicated=apps/web:NoSchedule\"]\n}\n",
			line: 13, col: 26, summary: "Invalid balloon_tolerations", hint: `has value "apps/web", not a label value`},
		{name: "a balloon toleration value is not empty",
			add:  "kubernetes {\n  balloon_tolerations = [\"gpu=:NoSchedule\"]\n}\n",
			line: 13, col: 26, summary: "Invalid balloon_tolerations", hint: `write "gpu:NoSchedule" to tolerate any value`},
		{name: "a balloon toleration has a key",
			add:  "kubernetes {\n  balloon_tolerations = [\":NoExecute\"]\n}\n",
			line: 13, col: 26, summary: "Invalid balloon_tolerations", hint: `has key "", not a qualified name`},
		{name: "an empty balloon toleration effect is refused",
			add:  "kubernetes {\n  balloon_tolerations = [\"gpu:\"]\n}\n",
			line: 13, col: 26, summary: "Invalid balloon_tolerations", hint: `has effect "", not one of`},
		{name: "balloon_tolerations is a list",
			add:  "kubernetes {\n  balloon_tolerations = \"spot\"\n}\n",
			line: 13, col: 25, summary: "Invalid balloon_tolerations", hint: "a list of strings"},
		{name: "unknown key in kubernetes suggests the nearest",
			add:  "kubernetes {\n  namespce = \"shop\"\n}\n",
			line: 13, col: 3, summary: `Unknown key "namespce" in kubernetes`, hint: `did you mean "namespace"?`},
		{name: "prometheus needs a url",
			add:  "prometheus {\n  max_age = \"1m\"\n}\n",
			line: 12, col: 1, summary: "Missing url", hint: "http://prometheus:9090"},
		{name: "prometheus url must be http(s)",
			add:  "prometheus {\n  url = \"prometheus:9090\"\n}\n",
			line: 13, col: 9, summary: "Invalid url", hint: "not an http(s) URL"},
		{name: "a query must be a template that runs",
			add:  "prometheus {\n  url = \"http://p:9090\"\n  queries {\n    rps = \"sum(rate(x{ {{.Nope}} }[1m]))\"\n  }\n}\n",
			line: 15, col: 11, summary: "Invalid rps", hint: "use {{.Namespace}}"},
		{name: "an unparsable query template",
			add:  "prometheus {\n  url = \"http://p:9090\"\n  queries {\n    cpu = \"{{.Name\"\n  }\n}\n",
			line: 15, col: 11, summary: "Invalid cpu", hint: "not a query template"},
		{name: "workload kind is Deployment or StatefulSet",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    workload {\n      kind = \"deployment\"\n    }"},
			line: 11, col: 14, summary: "Invalid kind", hint: `did you mean "Deployment"?`},
		{name: "workload name must be an object name",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    workload {\n      name = \"Web\"\n    }"},
			line: 11, col: 14, summary: "Invalid name", hint: "lowercase"},
		{name: "a set of several apps needs {i} in the workload name",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    count = 3\n    workload {\n      name = \"web\"\n    }"},
			line: 12, col: 14, summary: "Invalid name", hint: "the set has 3 apps"},
		{name: "a set of several apps needs {i} in the hpa name",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    count = 3\n    workload {\n      name = \"web-{i}\"\n      hpa  = \"web\"\n    }"},
			line: 13, col: 14, summary: "Invalid hpa", hint: "must contain {i}"},
		{name: "selector must be equality-based",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    workload {\n      selector = \"app in (web)\"\n    }"},
			line: 11, col: 18, summary: "Invalid selector", hint: "only equality selectors"},
		{name: "selector values must be label values",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    workload {\n      selector = \"app=-web\"\n    }"},
			line: 11, col: 18, summary: "Invalid selector", hint: `"-web" is not a label value`},
		{name: "workload namespace must be a DNS label",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    workload {\n      namespace = \"a.b\"\n    }"},
			line: 11, col: 19, summary: "Invalid namespace"},
		{name: "workload is a block",
			edit: []string{`service_time    = "10ms"`, `service_time    = "10ms"` + "\n    workload = \"web\""},
			line: 10, col: 5, summary: `Unknown key "workload"`, hint: "workload is a block"},
	}
	runRules(t, cases)
}

// Balloon tolerations are allowed without balloons (they do nothing), and
// an empty list is none.
func TestParseBalloonTolerationsWithoutBalloons(t *testing.T) {
	for _, tt := range []struct {
		list string
		want []domains.Toleration
	}{
		{`["dedicated=apps:NoSchedule", "spot"]`, []domains.Toleration{{Key: "dedicated", Value: "apps", Effect: "NoSchedule"}, {Key: "spot"}}},
		{`[]`, nil},
	} {
		cfg, err := Parse([]byte(base+"kubernetes {\n  balloon_tolerations = "+tt.list+"\n}\n"), "cluster.hcl")
		if err != nil {
			t.Fatalf("balloon_tolerations = %s: %v", tt.list, err)
		}
		if k := cfg.Kubernetes; k.BalloonPodCores != 0 || !slices.Equal(k.BalloonTolerations, tt.want) {
			t.Errorf("balloon_tolerations = %s: got %v with balloon_pod_cores %v, want %v", tt.list, k.BalloonTolerations, k.BalloonPodCores, tt.want)
		}
	}
}

// goodTolerations are tolerations in kubectl's taint syntax and what they read as.
var goodTolerations = []struct {
	rule, spec string
	want       domains.Toleration
}{
	{"key, value and effect tolerate that taint", "dedicated=apps:NoSchedule", domains.Toleration{Key: "dedicated", Value: "apps", Effect: "NoSchedule"}},
	{"no value tolerates any value", "gpu:NoSchedule", domains.Toleration{Key: "gpu", Effect: "NoSchedule"}},
	{"no effect tolerates every effect", "dedicated=apps", domains.Toleration{Key: "dedicated", Value: "apps"}},
	{"a key alone tolerates any value and effect", "spot", domains.Toleration{Key: "spot"}},
	{"a prefixed key", "example.com/pool=batch-1:PreferNoSchedule", domains.Toleration{Key: "example.com/pool", Value: "batch-1", Effect: "PreferNoSchedule"}},
	{"NoExecute", "node.kubernetes.io/unreachable:NoExecute", domains.Toleration{Key: "node.kubernetes.io/unreachable", Effect: "NoExecute"}},
}

// badTolerations are refused, with a problem containing want.
var badTolerations = []struct{ rule, spec, want string }{
	{"an empty entry", "", `has key "", not a qualified name`},
	{"no key", ":NoSchedule", `has key "", not a qualified name`},
	{"no key before the value", "=apps:NoSchedule", `has key "", not a qualified name`},
	{"a key with a space", "dedi cated=apps", `has key "dedi cated", not a qualified name`},
	{"a key ending in a dash", "gpu-:NoSchedule", `has key "gpu-", not a qualified name`},
	{"a key of two slashes", "a/b/c", `has key "a/b/c", not a qualified name`},
	{"a key name over 63 characters", strings.Repeat("k", 64), "not a qualified name"},
	{"an upper-case key prefix", "Example.com/pool", "not a qualified name"},
	{"an empty value", "gpu=:NoSchedule", `has an empty value; write "gpu:NoSchedule"`},
	{"an empty value without effect", "gpu=", `has an empty value; write "gpu"`},
	{"a value with a slash", "dedicated=apps/web", `has value "apps/web", not a label value`},
	{"a second equals sign", "dedicated=apps=web", `has value "apps=web", not a label value`},
	{"a value over 63 characters", "k=" + strings.Repeat("v", 64), "not a label value"},
	{"an unknown effect", "gpu:NoScheduling", `has effect "NoScheduling", not one of NoSchedule, PreferNoSchedule, NoExecute`},
	{"effects are case-sensitive", "gpu:noschedule", `has effect "noschedule"`},
	{"an empty effect", "gpu:", `has effect ""`},
	{"a second colon", "gpu:NoSchedule:NoExecute", `has effect "NoSchedule:NoExecute"`},
}

// The config reads kubectl's taint syntax into tolerations, and writes them
// back the same (domains.Toleration.String, in the Commander's log).
func TestParseToleration(t *testing.T) {
	for _, tt := range goodTolerations {
		got, bad := parseToleration(tt.spec)
		if bad != "" || got != tt.want {
			t.Errorf("%s: parseToleration(%q) = %+v, %q; want %+v", tt.rule, tt.spec, got, bad, tt.want)
		}
		if s := got.String(); s != tt.spec {
			t.Errorf("%s: %+v.String() = %q, want %q", tt.rule, got, s, tt.spec)
		}
	}
}

func TestParseTolerationRefuses(t *testing.T) {
	for _, tt := range badTolerations {
		got, bad := parseToleration(tt.spec)
		if !strings.Contains(bad, tt.want) || got != (domains.Toleration{}) {
			t.Errorf("%s: parseToleration(%q) = %+v, %q; want nothing and a problem containing %q", tt.rule, tt.spec, got, bad, tt.want)
		}
	}
}

func TestParseKubernetesTranslates(t *testing.T) {
	cfg, err := LoadFile("testdata/kubernetes.hcl")
	if err != nil {
		t.Fatal(err)
	}
	wantK := domains.Kubernetes{Namespace: "shop", LeaseNamespace: "regiment", LeaseDuration: 30 * time.Second, HPAHeadroom: 0.25,
		WritesPerSecond: 80, WriteBurst: 40, PoolNodeSelector: "karpenter.sh/nodepool=general", PoolMaxCores: 640,
		BalloonPodCores: 4, BalloonPriorityClass: "overprovisioning", BalloonImage: domains.DefaultBalloonImage,
		BalloonTolerations: []domains.Toleration{{Key: "dedicated", Value: "apps", Effect: "NoSchedule"}, {Key: "gpu", Effect: "NoSchedule"}, {Key: "example.com/spot"}}}
	if !reflect.DeepEqual(cfg.Kubernetes, wantK) {
		t.Errorf("kubernetes = %+v, want %+v", cfg.Kubernetes, wantK)
	}
	p := cfg.Prometheus
	if p.URL != "http://prometheus.monitoring:9090" || p.MaxAge != time.Minute || p.Timeout != 5*time.Second {
		t.Errorf("prometheus = %+v", p)
	}
	if p.Queries.RPS.Template != `sum(rate(requests_total{namespace="{{.Namespace}}",{{.Matchers}}}[2m]))` || p.Queries.RPS.BatchBy != nil {
		t.Errorf("rps query = %q", p.Queries.RPS)
	}
	if !reflect.DeepEqual(p.Queries.CPU, domains.DefaultPrometheusQueries.CPU) {
		t.Errorf("an unset query is not the default: %q", p.Queries.CPU)
	}

	var got []domains.WorkloadRef
	for _, a := range cfg.Apps() {
		got = append(got, cfg.Workload(a))
	}
	want := []domains.WorkloadRef{
		{Kind: domains.KindDeployment, Namespace: "payments", Name: "checkout-0", Selector: "app=checkout,shard=0", HPA: "checkout-0-hpa"},
		{Kind: domains.KindDeployment, Namespace: "payments", Name: "checkout-1", Selector: "app=checkout,shard=1", HPA: "checkout-1-hpa"},
		{Kind: domains.KindStatefulSet, Namespace: "shop", Name: "ledger", Selector: "app=ledger", HPA: "ledger"},
		{Kind: domains.KindDeployment, Namespace: "shop", Name: "scoring-0", Selector: "app=scoring-0", HPA: "scoring-0"},
		{Kind: domains.KindDeployment, Namespace: "shop", Name: "scoring-1", Selector: "app=scoring-1", HPA: "scoring-1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("workloads\n got %+v\nwant %+v", got, want)
	}
}
