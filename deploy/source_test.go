package deploy

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/config"
)

var helmPath = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "helm").Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n helm: %w", err)
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("helm at %s: %w", path, err)
	}
	return path, nil
})

// helmTemplate runs the real `helm template regiment chart/regiment` (the
// module's go tool) in namespace regiment with args, returning its stdout,
// stderr and whether it succeeded.
func helmTemplate(t *testing.T, args ...string) (string, string, bool) {
	t.Helper()
	helm, err := helmPath()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helm, append([]string{"template", "regiment", chartDir, "--namespace", "regiment"}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return stdout.String(), stderr.String(), err == nil
}

// soldierModes are the Soldier Deployments of rendered manifests, in order:
// domain name and mode label.
func soldierModes(t *testing.T, manifests string) [][2]string {
	t.Helper()
	var out [][2]string
	for _, o := range decodeManifests(t, "helm template", manifests) {
		if o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/component"] == "soldier" {
			out = append(out, [2]string{o.GetLabels()["regiment.io/domain"], o.GetLabels()["regiment.io/mode"]})
		}
	}
	return out
}

// TestHelmTemplateRefusesValuesThatDisagreeWithTheConfig: `helm template`
// renders one Soldier per domain of the HCL it ships when the values list
// the same domains, and fails, naming the domain, when a domain of the HCL
// has no values (it would get no Soldier) or the values name a domain the
// HCL lacks.
func TestHelmTemplateRefusesValuesThatDisagreeWithTheConfig(t *testing.T) {
	hcl := "--set-file=config.hcl=staging/regiment.hcl"
	out, stderr, ok := helmTemplate(t, "--values=staging/values.yaml", hcl)
	if !ok {
		t.Fatalf("staging values and config: %s", stderr)
	}
	want := [][2]string{{"payment", "recommend"}, {"fraud", "recommend"}, {"merchant", "recommend"}}
	if got := soldierModes(t, out); !slices.Equal(got, want) {
		t.Errorf("Soldiers %v, want %v", got, want)
	}
	for _, c := range []struct{ name, values, want string }{
		{"a domain of the config without values", "testdata/chart-staging-two-domains.yaml",
			`domain "merchant" of config.hcl has no entry in the values' domains: it would get no Soldier`},
		{"values of a domain the config lacks", "testdata/chart-staging-extra-domain.yaml",
			`domain "search" is in the values' domains but config.hcl has no domain "search" block`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, ok := helmTemplate(t, "--values="+c.values, hcl)
			if ok {
				t.Fatalf("helm template rendered %d Soldiers %v; want it to fail", len(soldierModes(t, out)), soldierModes(t, out))
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("helm template says:\n%s\nwant it to say %q", stderr, c.want)
			}
		})
	}
}

// chartHCL is a config the cases of TestChartReadsItsConfigsDomainsAndModes
// edit: {{soldier}} is the soldier block's extra lines, {{domains}} the
// domain blocks, {{tail}} what follows them.
const chartHCL = `# domain "comment" { } in a comment is not a domain
cluster "shop" {
  capacity_cores = 400 // domain "line" {
  node_cores     = 16
}
/* domain "block" {
   mode = "active"
} */
soldier {
  tick      = "10s"
  actuation = "hpa-bounds"
{{soldier}}}
kubernetes {
  namespace       = "shop"
  lease_namespace = "regiment"
}
prometheus {
  url = "http://prometheus.monitoring.svc:9090"
  queries {
    batch_by = ["namespace", "workload"]
    rps      = <<EOT
sum by (namespace, workload) (label_replace(rate(x{namespace=~"{{.Namespaces}}",pod=~"{{.Pods}}",mode="active"}[1m]), "workload", "$1", "pod", "{{.Pods}}"))
EOT
    p99 = "max by (namespace, workload) (label_replace(y{namespace=~\"{{.Namespaces}}\",pod=~\"{{.Pods}}\",domain=\"x {\"}, \"workload\", \"$1\", \"pod\", \"{{.Pods}}\"))"
  }
}
{{domains}}{{tail}}`

func chartDomain(name, mode string) string {
	m := ""
	if mode != "" {
		m = fmt.Sprintf("  mode = %q # not \"off\"\n", mode)
	}
	return fmt.Sprintf(`domain "%s" {
%s  slo { latency_p99 = "150ms" }
  apps "%s-web" {
    cpu_per_replica = 0.5
    max_replicas    = 10
    service_time    = "25ms"
    workload {
      name = "%s-web" # }
    }
  }
}
`, name, m, name, name)
}

// TestChartReadsItsConfigsDomainsAndModes: the domains the chart reads from
// config.hcl, and each one's mode, are those config.Parse reads, whatever
// comments, strings and heredocs hold; each Soldier's Role follows its mode.
func TestChartReadsItsConfigsDomainsAndModes(t *testing.T) {
	cases := []struct {
		name                   string
		soldier, domains, tail string
	}{
		{"no mode anywhere is active", "", chartDomain("payment", "") + chartDomain("fraud", ""), ""},
		{"the soldier block's mode for every domain", "  mode = \"recommend\"\n", chartDomain("payment", "") + chartDomain("fraud", ""), ""},
		{"a domain's own mode first", "  mode = \"recommend\"\n", chartDomain("payment", "active") + chartDomain("fraud", "") + chartDomain("search", "off"), ""},
		{"the shadow alias", "  mode = \"shadow\"\n", chartDomain("payment", "active") + chartDomain("fraud", ""), ""},
		{"blocks after the domains", "  mode = \"recommend\"\n", chartDomain("payment", "") + chartDomain("fraud", "active"),
			"store {\n  path = \"/data/regiment.db\"\n}\nnats {\n  url = \"nats://n:4222\"\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hcl := strings.NewReplacer("{{soldier}}", c.soldier, "{{domains}}", c.domains, "{{tail}}", c.tail).Replace(chartHCL)
			cfg, err := config.Parse([]byte(hcl), "config.hcl")
			if err != nil {
				t.Fatalf("the case's config: %v\n%s", err, hcl)
			}
			var want [][2]string
			var values []any
			for di, d := range cfg.Domains {
				want = append(want, [2]string{d.Name, string(cfg.ModeOf(di))})
				values = append(values, map[string]any{"name": d.Name, "namespaces": []any{"shop"}})
			}
			objs := renderValues(t, map[string]any{"config": map[string]any{"hcl": hcl}, "domains": values})
			var got [][2]string
			for _, o := range objs {
				if o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/component"] == "soldier" {
					got = append(got, [2]string{o.GetLabels()["regiment.io/domain"], o.GetLabels()["regiment.io/mode"]})
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("the chart runs Soldiers %v, config.Parse reads %v", got, want)
			}
			for di, d := range cfg.Domains {
				role := findIn(objs, "Role", "regiment-soldier-"+d.Name, "shop")
				writes := slices.ContainsFunc(ruleAtomsOf(role), func(a string) bool {
					return strings.HasPrefix(a, "autoscaling/horizontalpodautoscalers:") && !strings.HasSuffix(a, ":get") &&
						!strings.HasSuffix(a, ":list") && !strings.HasSuffix(a, ":watch")
				})
				if wantWrites := !cfg.ModeOf(di).Recommends(); writes != wantWrites {
					t.Errorf("%s in mode %s: its Role writes HPAs %v, want %v: %v", d.Name, cfg.ModeOf(di), writes, wantWrites, ruleAtomsOf(role))
				}
			}
		})
	}
}

// TestChartReadsTheShippedConfigs: for every config the repository ships
// (examples/, the staging config, the overlays'), the chart reads the
// domains and modes config.LoadFile reads.
func TestChartReadsTheShippedConfigs(t *testing.T) {
	paths, err := filepath.Glob("../examples/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, "staging/regiment.hcl", "overlays/example/regiment.hcl", "overlays/example-secure/regiment.hcl")
	for _, path := range paths {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			cfg, err := config.LoadFile(path)
			if err != nil {
				t.Skipf("not a config: %v", err)
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want [][2]string
			var values []any
			for di, d := range cfg.Domains {
				want = append(want, [2]string{d.Name, string(cfg.ModeOf(di))})
				values = append(values, map[string]any{"name": d.Name, "namespaces": []any{"shop"}})
			}
			var got [][2]string
			for _, o := range renderValues(t, map[string]any{"config": map[string]any{"hcl": string(src)}, "domains": values}) {
				if o.GetKind() == "Deployment" && o.GetLabels()["app.kubernetes.io/component"] == "soldier" {
					got = append(got, [2]string{o.GetLabels()["regiment.io/domain"], o.GetLabels()["regiment.io/mode"]})
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("the chart runs Soldiers %v, config.LoadFile reads %v", got, want)
			}
		})
	}
}

// TestChartWithAnExistingConfigMapFollowsDomainsMode: the chart cannot read
// a config in a ConfigMap of the user's; each Soldier's Role then follows
// domains[].mode, recommend (read only) unless it says otherwise.
func TestChartWithAnExistingConfigMapFollowsDomainsMode(t *testing.T) {
	objs := renderValues(t, map[string]any{"config": map[string]any{"existingConfigMap": "mine"},
		"domains": []any{map[string]any{"name": "payment", "namespaces": []any{"shop"}, "mode": "active"},
			map[string]any{"name": "fraud", "namespaces": []any{"shop"}}}})
	for domain, want := range map[string]bool{"payment": true, "fraud": false} {
		atoms := ruleAtomsOf(findIn(objs, "Role", "regiment-soldier-"+domain, "shop"))
		if got := slices.Contains(atoms, "autoscaling/horizontalpodautoscalers:patch"); got != want {
			t.Errorf("%s: patches HPAs %v, want %v: %v", domain, got, want, atoms)
		}
	}
}

// renderValues renders the chart with user values v, release "regiment"
// in namespace "regiment".
func renderValues(t *testing.T, v map[string]any) []*unstructured.Unstructured {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	objs, _ := renderChart(t, chartCase{"values", path, "regiment"})
	return objs
}

func findIn(objs []*unstructured.Unstructured, kind, name, namespace string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name && o.GetNamespace() == namespace {
			return o
		}
	}
	return nil
}

// ruleAtomsOf are a Role's grants as group/resource:verb.
func ruleAtomsOf(role *unstructured.Unstructured) []string {
	if role == nil {
		return nil
	}
	var out []string
	rules, _ := role.Object["rules"].([]any)
	for _, r := range rules {
		rm := r.(map[string]any)
		for _, g := range rm["apiGroups"].([]any) {
			for _, res := range rm["resources"].([]any) {
				for _, v := range rm["verbs"].([]any) {
					out = append(out, fmt.Sprintf("%s/%s:%s", g, res, v))
				}
			}
		}
	}
	return out
}

// TestRecommendModeCannotWriteHPAs installs the chart's RBAC on a real
// kube-apiserver and acts as the Soldiers' ServiceAccounts: a Soldier in
// recommend mode reads its domain's HPAs and Deployments but its patch of
// an HPA, its update of one and its patch of a Deployment's scale are
// refused (403); once its domain's mode is active in the config (the
// chart upgraded), the same patch is allowed.
func TestRecommendModeCannotWriteHPAs(t *testing.T) {
	env := testenv.Require(t)
	a := newAPIServer(t)
	const releaseNS, appNS = "regiment-modes", "shop-modes"
	a.applyAll([]*unstructured.Unstructured{restricted(releaseNS), restricted(appNS)}, false)
	ctx := context.Background()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: appNS},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "checkout"},
			MinReplicas:    ptr(int32(2)), MaxReplicas: 10,
		},
	}
	if _, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(appNS).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	install := func(t *testing.T, soldierMode, paymentMode string) {
		t.Helper()
		hcl := strings.NewReplacer("{{soldier}}", fmt.Sprintf("  mode = %q\n", soldierMode),
			"{{domains}}", chartDomain("payment", paymentMode)+chartDomain("fraud", ""), "{{tail}}", "").Replace(chartHCL)
		hcl = strings.ReplaceAll(hcl, `lease_namespace = "regiment"`, fmt.Sprintf("lease_namespace = %q", releaseNS))
		b, err := yaml.Marshal(map[string]any{"config": map[string]any{"hcl": hcl},
			"domains": []any{map[string]any{"name": "payment", "namespaces": []any{appNS}}, map[string]any{"name": "fraud", "namespaces": []any{appNS}}}})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		objs, _ := renderChart(t, chartCase{"modes", path, releaseNS})
		a.t = t
		for _, o := range objs {
			switch o.GetKind() {
			case "ServiceAccount", "Role", "RoleBinding":
				a.check(o, a.apply(o, false))
			}
		}
	}
	as := func(t *testing.T, sa string) kubernetes.Interface {
		t.Helper()
		cfg, err := env.ServiceAccountConfig(releaseNS, sa)
		if err != nil {
			t.Fatal(err)
		}
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	patchMin := func(c kubernetes.Interface, min int) error {
		_, err := c.AutoscalingV2().HorizontalPodAutoscalers(appNS).Patch(ctx, "checkout", types.MergePatchType,
			fmt.Appendf(nil, `{"spec":{"minReplicas":%d}}`, min), metav1.PatchOptions{})
		return err
	}

	t.Run("recommend", func(t *testing.T) {
		install(t, "recommend", "")
		payment := as(t, "regiment-soldier-payment")
		var got *autoscalingv2.HorizontalPodAutoscaler
		granted(t, "a recommending Soldier reads its HPAs", func() (err error) {
			got, err = payment.AutoscalingV2().HorizontalPodAutoscalers(appNS).Get(ctx, "checkout", metav1.GetOptions{})
			return err
		})
		if err := patchMin(payment, 3); !apierrors.IsForbidden(err) {
			t.Errorf("recommend mode: patch of an HPA returned %v, want 403 Forbidden", err)
		} else {
			t.Logf("recommend mode: patch of an HPA: %v", err)
		}
		got.Spec.MinReplicas = ptr(int32(3))
		if _, err := payment.AutoscalingV2().HorizontalPodAutoscalers(appNS).Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("recommend mode: update of an HPA returned %v, want 403 Forbidden", err)
		}
		if _, err := payment.AppsV1().Deployments(appNS).Patch(ctx, "checkout", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`),
			metav1.PatchOptions{}, "scale"); !apierrors.IsForbidden(err) {
			t.Errorf("recommend mode: patch of a Deployment's scale returned %v, want 403 Forbidden", err)
		}
	})
	t.Run("active", func(t *testing.T) {
		install(t, "recommend", "active") // payment switched, as docs/staging.md does, then helm upgrade
		payment := as(t, "regiment-soldier-payment")
		granted(t, "active mode: payment patches its HPA", func() error { return patchMin(payment, 3) })
		if err := patchMin(as(t, "regiment-soldier-fraud"), 4); !apierrors.IsForbidden(err) {
			t.Errorf("fraud, still recommending: patch of an HPA returned %v, want 403 Forbidden", err)
		}
	})
	got, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(appNS).Get(ctx, "checkout", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := *got.Spec.MinReplicas; m != 3 {
		t.Errorf("the HPA's minReplicas is %d, want 3 from the active Soldier's patch only", m)
	}
}

func ptr[T any](v T) *T { return &v }

// granted polls call until the apiserver's RBAC cache allows it (a Role
// just applied takes a moment), failing the test after 15 s.
func granted(t *testing.T, what string, call func() error) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := call()
		if err == nil {
			return
		}
		if !apierrors.IsForbidden(err) || time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHelmTemplatePodSettings: `helm template` gives each daemon's pods
// (Commander, each Soldier, the chart's NATS) the priorityClassName,
// podAnnotations (beside the config checksum that restarts them on a new
// config), resources (a domain's own over the Soldiers') and ServiceAccount
// annotations of its values, and none of the others'.
func TestHelmTemplatePodSettings(t *testing.T) {
	out, stderr, ok := helmTemplate(t, "--values=testdata/chart-pod-settings.yaml")
	if !ok {
		t.Fatal(stderr)
	}
	objs := decodeManifests(t, "helm template", out)
	cases := []struct {
		kind, name, sa, priority   string
		annotations, saAnnotations map[string]string
		requests                   map[string]any
	}{
		{"StatefulSet", "regiment-commander", "regiment-commander", "regiment-critical",
			map[string]string{"sidecar.istio.io/inject": "false", "team": "platform-commander"},
			map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/regiment-commander"},
			map[string]any{"cpu": "300m", "memory": "300Mi"}},
		{"Deployment", "regiment-soldier-payment", "regiment-soldier-payment", "regiment-critical",
			map[string]string{"team": "platform-soldier"},
			map[string]string{"iam.gke.io/gcp-service-account": "soldier@project.iam.gserviceaccount.com"},
			map[string]any{"cpu": "150m", "memory": "150Mi"}},
		{"Deployment", "regiment-soldier-fraud", "regiment-soldier-fraud", "regiment-critical",
			map[string]string{"team": "platform-soldier"},
			map[string]string{"iam.gke.io/gcp-service-account": "soldier@project.iam.gserviceaccount.com"},
			map[string]any{"cpu": "250m", "memory": "250Mi"}},
		{"StatefulSet", "regiment-nats", "regiment-nats", "regiment-nats",
			map[string]string{"team": "platform-nats"}, map[string]string{"note": "nats"},
			map[string]any{"cpu": "50m", "memory": "64Mi"}},
	}
	for _, c := range cases {
		o := find(objs, c.kind, c.name)
		if o == nil {
			t.Errorf("no %s %s", c.kind, c.name)
			continue
		}
		spec := podSpec(o)
		if got := spec["priorityClassName"]; got != c.priority {
			t.Errorf("%s: priorityClassName %v, want %s", c.name, got, c.priority)
		}
		ann, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "annotations")
		for k, v := range c.annotations {
			if ann[k] != v {
				t.Errorf("%s: pod annotation %s=%q, want %q (all: %v)", c.name, k, ann[k], v, ann)
			}
		}
		if c.kind != "StatefulSet" || c.name == "regiment-commander" {
			if ann["checksum/config"] == "" {
				t.Errorf("%s: podAnnotations replaced the config checksum: %v", c.name, ann)
			}
		}
		if len(ann) > len(c.annotations)+1 {
			t.Errorf("%s: pod annotations %v, want only %v and the checksum", c.name, ann, c.annotations)
		}
		req := field(spec["containers"].([]any)[0].(map[string]any), "resources", "requests")
		if fmt.Sprint(req) != fmt.Sprint(c.requests) {
			t.Errorf("%s: requests %v, want %v", c.name, req, c.requests)
		}
		if sa := spec["serviceAccountName"]; sa != c.sa {
			t.Errorf("%s runs as %v, want %s", c.name, sa, c.sa)
		}
		acct := find(objs, "ServiceAccount", c.sa)
		if acct == nil || !maps.Equal(acct.GetAnnotations(), c.saAnnotations) {
			t.Errorf("ServiceAccount %s annotations %v, want %v", c.sa, acct.GetAnnotations(), c.saAnnotations)
		}
	}
	// The defaults set none of them.
	out, stderr, ok = helmTemplate(t)
	if !ok {
		t.Fatal(stderr)
	}
	for _, o := range decodeManifests(t, "helm template", out) {
		if spec := podSpec(o); spec != nil && spec["priorityClassName"] != nil {
			t.Errorf("defaults: %s %s has priorityClassName %v", o.GetKind(), o.GetName(), spec["priorityClassName"])
		}
		if o.GetKind() == "ServiceAccount" && len(o.GetAnnotations()) > 0 {
			t.Errorf("defaults: ServiceAccount %s has annotations %v", o.GetName(), o.GetAnnotations())
		}
	}
}

// TestChartDefaultsToRecommend: installed with its defaults, the chart's
// config puts every domain in recommend mode, and no Soldier may write an
// HPA or a workload.
func TestChartDefaultsToRecommend(t *testing.T) {
	objs, vals := renderChart(t, chartCases[0])
	cfg, err := config.Parse([]byte(vals["config"].(map[string]any)["hcl"].(string)), "values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for di, d := range cfg.Domains {
		if m := cfg.ModeOf(di); m != "recommend" {
			t.Errorf("the default config runs %s in mode %s, want recommend", d.Name, m)
		}
		dep := find(objs, "Deployment", "regiment-soldier-"+d.Name)
		if dep == nil || dep.GetLabels()["regiment.io/mode"] != "recommend" {
			t.Errorf("no Soldier of %s labelled recommend", d.Name)
		}
	}
	for _, o := range objs {
		if o.GetKind() != "Role" || !strings.HasPrefix(o.GetName(), "regiment-soldier-") {
			continue
		}
		for _, a := range ruleAtomsOf(o) {
			res, verb, _ := strings.Cut(a, ":")
			writes := verb == "patch" || verb == "update" || verb == "create" || verb == "delete"
			if writes && res != "/events" && res != "coordination.k8s.io/leases" {
				t.Errorf("Role %s/%s grants %s", o.GetNamespace(), o.GetName(), a)
			}
		}
	}
}
