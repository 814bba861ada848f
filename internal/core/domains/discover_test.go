package domains

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// discoverConfig has domain "payment" with one written app, checkout (the
// Deployment checkout in "shop"), discovering Deployments labelled
// regiment.io/domain=payment in "shop" and "pay".
func discoverConfig() *Config {
	c := &Config{
		Cluster:    Cluster{Name: "c", CapacityCores: 100},
		Kubernetes: Kubernetes{Namespace: "shop"},
		Domains: []Domain{{Name: "payment", SLO: SLO{LatencyP99: 100 * time.Millisecond},
			AppSets: []AppSet{{Name: "checkout", CPUPerReplica: 2, MinReplicas: 3, ServiceTime: 20 * time.Millisecond}},
			Discover: &Discover{Namespaces: []string{"shop", "pay"}, Selector: "regiment.io/domain=payment",
				App: AppSet{ServiceTime: 25 * time.Millisecond, MaxReplicas: 40}}}},
	}
	c.Defaults()
	return c
}

func found(ns, name string, cpu float64, annotations ...string) FoundWorkload {
	w := FoundWorkload{Kind: KindDeployment, Namespace: ns, Name: name, Labels: map[string]string{"regiment.io/domain": "payment"},
		Annotations: map[string]string{}, PodSelector: "app=" + name, CPURequest: cpu}
	for _, a := range annotations {
		k, v, _ := strings.Cut(a, "=")
		w.Annotations[k] = v
	}
	return w
}

func TestWithDiscovered(t *testing.T) {
	other := found("shop", "batch", 1)
	other.Labels["regiment.io/domain"] = "batch"
	sts := found("shop", "ledger", 1)
	sts.Kind = KindStatefulSet
	exprs := found("shop", "exprs", 1)
	exprs.PodSelector = ""
	tests := []struct {
		name     string
		found    []FoundWorkload
		want     []string // app names, written first
		problems []string // substrings, one per problem
	}{
		{"labelled deployments of the namespaces are apps, written apps first, sorted",
			[]FoundWorkload{found("shop", "web", 0.5), found("pay", "auth", 0.25)}, []string{"checkout", "pay_auth", "shop_web"}, nil},
		{"another label, kind or namespace is not selected",
			[]FoundWorkload{other, sts, found("elsewhere", "web", 1)}, []string{"checkout"}, nil},
		{"a written app wins over the workload it maps to",
			[]FoundWorkload{found("shop", "checkout", 0.5)}, []string{"checkout"}, nil},
		{"a workload of several namespaces' domain is named namespace_name, as is one shared across namespaces",
			[]FoundWorkload{found("shop", "api", 1), found("pay", "api", 1), found("pay", "checkout", 0.5)},
			[]string{"checkout", "pay_api", "pay_checkout", "shop_api"}, nil},
		{"dots in a workload name become underscores",
			[]FoundWorkload{found("shop", "api.v2", 1)}, []string{"checkout", "shop_api_v2"}, nil},
		{"pods without CPU requests and no default are skipped",
			[]FoundWorkload{found("shop", "web", 0)}, []string{"checkout"}, []string{"request no CPU"}},
		{"a pod selector with expressions is skipped",
			[]FoundWorkload{exprs}, []string{"checkout"}, []string{"match expressions"}},
		{"a bad annotation skips the app and says why",
			[]FoundWorkload{found("shop", "web", 1, AnnotationMinReplicas+"=two")}, []string{"checkout"}, []string{"regiment.io/min-replicas"}},
		{"min above max by annotation is skipped",
			[]FoundWorkload{found("shop", "web", 1, AnnotationMinReplicas+"=50")}, []string{"checkout"}, []string{"above max"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := discoverConfig()
			got, problems := c.WithDiscovered(0, tt.found)
			var names []string
			for _, s := range got.Domains[0].AppSets {
				names = append(names, s.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("apps %v, want %v", names, tt.want)
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems %q, want %d", problems, len(tt.problems))
			}
			for i, p := range tt.problems {
				if !strings.Contains(problems[i], p) {
					t.Errorf("problem %q, want it to say %q", problems[i], p)
				}
			}
			if len(c.Domains[0].AppSets) != 1 {
				t.Errorf("the config given changed: %d app sets", len(c.Domains[0].AppSets))
			}
		})
	}
}

func TestDiscoveredAppAttributes(t *testing.T) {
	c := discoverConfig()
	got, problems := c.WithDiscovered(0, []FoundWorkload{
		found("shop", "web", 0.75),
		found("pay", "auth", 0.25, AnnotationMinReplicas+"=2", AnnotationMaxReplicas+"=9", AnnotationServiceTime+"=40ms",
			AnnotationConcurrency+"=8", AnnotationHPA+"=auth-hpa"),
	})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	apps := got.Apps()
	if len(apps) != 3 {
		t.Fatalf("%d apps, want 3", len(apps))
	}
	auth, web := apps[1], apps[2]
	if auth.Name != "payment/pay_auth" || web.Name != "payment/shop_web" {
		t.Errorf("apps %s and %s, want payment/pay_auth and payment/shop_web", auth.Name, web.Name)
	}
	if web.CPUPerReplica != 0.75 || web.MinReplicas != 1 || web.MaxReplicas != 40 || web.ServiceTime != 25*time.Millisecond ||
		web.Concurrency != 1 || !web.Discovered {
		t.Errorf("web = %+v, want cpu 0.75 from its requests and discover's attributes (max 40, 25ms)", *web.AppSet)
	}
	if auth.CPUPerReplica != 0.25 || auth.MinReplicas != 2 || auth.MaxReplicas != 9 || auth.ServiceTime != 40*time.Millisecond || auth.Concurrency != 8 {
		t.Errorf("auth = %+v, want its annotations' attributes", *auth.AppSet)
	}
	if r := got.Workload(auth); r != (WorkloadRef{Kind: KindDeployment, Namespace: "pay", Name: "auth", Selector: "app=auth", HPA: "auth-hpa"}) {
		t.Errorf("auth's workload = %+v", r)
	}
	// Discovering again from the result replaces the discovered apps: a
	// deleted workload goes, the written app stays.
	again, _ := got.WithDiscovered(0, []FoundWorkload{found("shop", "web", 0.75)})
	if n := len(again.Domains[0].AppSets); n != 2 || again.Domains[0].AppSets[1].Name != "shop_web" {
		t.Errorf("after auth was deleted: %+v", again.Domains[0].AppSets)
	}
	// A default cpu_per_replica sizes pods that request none.
	c.Domains[0].Discover.App.CPUPerReplica = 0.1
	got, _ = c.WithDiscovered(0, []FoundWorkload{found("shop", "web", 0)})
	if s := got.Domains[0].AppSets[1]; s.CPUPerReplica != 0.1 {
		t.Errorf("cpu per replica %g, want discover's 0.1", s.CPUPerReplica)
	}
}

// oneNamespace is discoverConfig searching "shop" only, with a StatefulSet
// kind too and a written set of three apps, "cart-0" to "cart-2" (the
// Deployments of those names in "pay").
func oneNamespace() *Config {
	c := discoverConfig()
	c.Domains[0].Discover.Namespaces = []string{"shop"}
	c.Domains[0].Discover.Kinds = []WorkloadKind{KindDeployment, KindStatefulSet}
	c.Domains[0].AppSets = append(c.Domains[0].AppSets, AppSet{Name: "cart", Count: 3, CPUPerReplica: 1, ServiceTime: 20 * time.Millisecond,
		Workload: Workload{Namespace: "pay"}})
	c.Defaults()
	return c
}

func TestDiscoveredAppNamesAreStable(t *testing.T) {
	sts := func(ns, name string) FoundWorkload {
		w := found(ns, name, 1)
		w.Kind = KindStatefulSet
		return w
	}
	tests := []struct {
		name     string
		cfg      func() *Config
		found    []FoundWorkload
		want     []string // every app of the domain
		problems []string // substrings, one per problem
	}{
		{"one namespace: an app is named after its workload",
			oneNamespace, []FoundWorkload{found("shop", "web", 1)}, []string{"checkout", "cart-0", "cart-1", "cart-2", "web"}, nil},
		{"several namespaces: a workload of the same name elsewhere renames nothing",
			discoverConfig, []FoundWorkload{found("shop", "web", 1), found("pay", "web", 1)}, []string{"checkout", "pay_web", "shop_web"}, nil},
		{"several namespaces: namespace and name cannot run together into another's",
			discoverConfig, []FoundWorkload{found("shop", "a-b", 1), found("pay", "shop-a-b", 1)}, []string{"checkout", "pay_shop-a-b", "shop_a-b"}, nil},
		{"a Deployment and a StatefulSet of one name: the Deployment keeps it and the problem names both",
			oneNamespace, []FoundWorkload{sts("shop", "web"), found("shop", "web", 1)}, []string{"checkout", "cart-0", "cart-1", "cart-2", "web"},
			[]string{"StatefulSet shop/web: its app name \"web\" is Deployment shop/web's"}},
		{"a workload named like a written app: the written app keeps it and the problem names both workloads",
			oneNamespace, []FoundWorkload{found("shop", "cart-1", 1)}, []string{"checkout", "cart-0", "cart-1", "cart-2"},
			[]string{"Deployment shop/cart-1: its app name \"cart-1\" is the written app payment/cart-1 (Deployment pay/cart-1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := tt.cfg().WithDiscovered(0, tt.found)
			var names []string
			for _, a := range got.Apps() {
				names = append(names, strings.TrimPrefix(a.Name, "payment/"))
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("apps %v, want %v", names, tt.want)
			}
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems %q, want %d", problems, len(tt.problems))
			}
			for i, p := range tt.problems {
				if !strings.Contains(problems[i], p) {
					t.Errorf("problem %q, want it to say %q", problems[i], p)
				}
			}
		})
	}
	// The same workload has the same name whatever else is found.
	c := discoverConfig()
	alone, _ := c.WithDiscovered(0, []FoundWorkload{found("pay", "checkout", 1)})
	crowded, _ := c.WithDiscovered(0, []FoundWorkload{found("shop", "checkout-x", 1), found("pay", "checkout", 1), found("shop", "checkout", 1)})
	name := func(cfg *Config) string {
		for _, s := range cfg.Domains[0].AppSets {
			if s.Discovered && s.Workload.Namespace == "pay" && s.Workload.Name == "checkout" {
				return s.Name
			}
		}
		return ""
	}
	if a, b := name(alone), name(crowded); a != "pay_checkout" || b != a {
		t.Errorf("pay/checkout named %q alone and %q among others, want pay_checkout both times", a, b)
	}
}

func TestDiscoveredAppWithoutServiceTimeLearnsIt(t *testing.T) {
	c := discoverConfig()
	c.Domains[0].Discover.App.ServiceTime = 0
	c.Defaults()
	got, problems := c.WithDiscovered(0, []FoundWorkload{found("shop", "web", 1), found("pay", "auth", 1, AnnotationServiceTime+"=40ms")})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	apps := got.Apps()
	checkout, auth, web := apps[0], apps[1], apps[2]
	if !web.Learn || web.ServiceTime != PriorServiceTime {
		t.Errorf("web: learn %v, service time %s; want learned from the prior %s", web.Learn, web.ServiceTime, PriorServiceTime)
	}
	if auth.Learn || auth.ServiceTime != 40*time.Millisecond {
		t.Errorf("auth: learn %v, service time %s; want its annotation's 40ms, not learned", auth.Learn, auth.ServiceTime)
	}
	if checkout.Learn {
		t.Errorf("checkout, written with its service time, learns")
	}
}
