package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// discoverDomain is a domain that only discovers, to append to base (line
// 12); its discover block's attributes are on lines 15 to 17.
func discoverDomain(attrs string) string {
	return "domain \"d\" {\n  slo { latency_p99 = \"100ms\" }\n  discover {\n" + attrs + "  }\n}\n"
}

func TestParseDiscoverRules(t *testing.T) {
	ok := "    namespaces   = [\"shop\"]\n    selector     = \"regiment.io/domain=d\"\n    service_time = \"20ms\"\n"
	runRules(t, []ruleCase{
		{name: "a domain needs apps or discover",
			add:  "domain \"d\" {\n  slo { latency_p99 = \"100ms\" }\n}\n",
			line: 12, col: 1, summary: "Missing apps block in domain", hint: "or a discover block"},
		{name: "discover needs namespaces",
			add:  discoverDomain("    selector     = \"a=b\"\n    service_time = \"20ms\"\n"),
			line: 14, col: 3, summary: "Missing namespaces"},
		{name: "namespaces are DNS labels",
			add:  discoverDomain("    namespaces   = [\"shop\", \"Bad_NS\"]\n    selector     = \"a=b\"\n    service_time = \"20ms\"\n"),
			line: 15, col: 29, summary: "Invalid namespaces", hint: "lowercase"},
		{name: "discover needs a selector or an annotation",
			add:  discoverDomain("    namespaces   = [\"shop\"]\n    service_time = \"20ms\"\n"),
			line: 14, col: 3, summary: "Missing selector", hint: "every workload"},
		{name: "the selector is equality only",
			add:  discoverDomain("    namespaces   = [\"shop\"]\n    selector     = \"tier in (web)\"\n    service_time = \"20ms\"\n"),
			line: 16, col: 20, summary: "Invalid selector", hint: "only equality"},
		{name: "the annotation is key=value",
			add:  discoverDomain("    namespaces   = [\"shop\"]\n    annotation   = \"regiment.io/domain\"\n    service_time = \"20ms\"\n"),
			line: 16, col: 20, summary: "Invalid annotation", hint: "key=value"},
		{name: "kinds are Deployment or StatefulSet",
			add:  discoverDomain(ok + "    kinds        = [\"Deployment\", \"CronJob\"]\n"),
			line: 18, col: 35, summary: "Invalid kinds", hint: "is not one of"},
		{name: "a set service_time is positive",
			add:  discoverDomain("    namespaces   = [\"shop\"]\n    selector     = \"a=b\"\n    service_time = \"0s\"\n"),
			line: 17, col: 20, summary: "Invalid service_time"},
		{name: "min_replicas above max_replicas",
			add:  discoverDomain(ok + "    min_replicas = 20\n    max_replicas = 10\n"),
			line: 18, col: 20, summary: "Invalid min_replicas", hint: "above max_replicas 10"},
	})
}

func TestParseDiscoverTranslates(t *testing.T) {
	src := base + discoverDomain("    namespaces   = [\"shop\", \"pay\"]\n    selector     = \"regiment.io/domain=d\"\n"+
		"    annotation   = \"regiment.io/scale=true\"\n    kinds        = [\"StatefulSet\"]\n    service_time = \"20ms\"\n"+
		"    max_replicas = 30\n    cpu_per_replica = 0.25\n")
	cfg, err := Parse([]byte(src), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Domains[1]
	if len(d.AppSets) != 0 || d.Discover == nil {
		t.Fatalf("domain d: %d app sets, discover %v", len(d.AppSets), d.Discover)
	}
	want := domains.Discover{Namespaces: []string{"shop", "pay"}, Selector: "regiment.io/domain=d", Annotation: "regiment.io/scale=true",
		Kinds: []domains.WorkloadKind{domains.KindStatefulSet},
		App: domains.AppSet{CPUPerReplica: 0.25, MinReplicas: 1, MaxReplicas: 30, ServiceTime: 20 * time.Millisecond, Concurrency: 1,
			StartupTime: 30 * time.Second, Timeout: 5 * time.Second, CallRatio: 1, CPULimitRatio: domains.DefaultCPULimitRatio}}
	if !reflect.DeepEqual(*d.Discover, want) {
		t.Errorf("discover\n got %+v\nwant %+v", *d.Discover, want)
	}
	if cfg.Domains[0].Discover != nil {
		t.Errorf("a domain without the block discovers: %+v", cfg.Domains[0].Discover)
	}
}

func TestStagingExampleDiscovers(t *testing.T) {
	cfg, err := LoadFile("../../examples/staging-discover.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range cfg.Domains {
		if d.Discover == nil || len(d.AppSets) != 0 || d.Discover.Selector != "regiment.io/domain="+d.Name {
			t.Errorf("domain %s: discover %+v, %d app sets; want discovery by its own label only", d.Name, d.Discover, len(d.AppSets))
		}
	}
	if cfg.Kubernetes.PoolNodeSelector != "pool=general" {
		t.Errorf("pool_node_selector %q", cfg.Kubernetes.PoolNodeSelector)
	}
}

func TestDiscoverWithoutServiceTimeLearnsIt(t *testing.T) {
	src := base + discoverDomain("    namespaces   = [\"shop\"]\n    selector     = \"regiment.io/domain=d\"\n")
	cfg, err := Parse([]byte(src), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Domains[1].Discover.App
	if !a.Learn || a.ServiceTime != domains.PriorServiceTime {
		t.Errorf("discover without service_time: learn %v, service time %s; want learned from the prior %s", a.Learn, a.ServiceTime, domains.PriorServiceTime)
	}
	src = base + discoverDomain("    namespaces   = [\"shop\"]\n    selector     = \"regiment.io/domain=d\"\n    service_time = \"20ms\"\n")
	if cfg, err = Parse([]byte(src), "cluster.hcl"); err != nil {
		t.Fatal(err)
	}
	if a := cfg.Domains[1].Discover.App; a.Learn || a.ServiceTime != 20*time.Millisecond {
		t.Errorf("discover with service_time 20ms: learn %v, service time %s", a.Learn, a.ServiceTime)
	}
}
