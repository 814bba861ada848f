package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/internal/adapter/kube/pool"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// buildWith builds, as kustomize does, a kustomization that lists resources
// and components (directories of deploy/, e.g. "overlays/example",
// "components/pool") followed by extra, its other fields. It builds in a copy
// of base/, components/ and overlays/, so that the test writes nothing into
// the repository.
func buildWith(t *testing.T, resources, components []string, extra string) []*unstructured.Unstructured {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"base", "components", "overlays"} {
		if err := os.CopyFS(filepath.Join(root, dir), os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, r := range resources {
		fmt.Fprintf(&b, "- ../%s\n", r)
	}
	if len(components) > 0 {
		b.WriteString("components:\n")
		for _, c := range components {
			fmt.Fprintf(&b, "- ../%s\n", c)
		}
	}
	b.WriteString(extra)
	dir := filepath.Join(root, "build")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return testenv.Kustomize(t, dir)
}

// grants are the rights that the RoleBindings and ClusterRoleBindings of
// objs give ServiceAccount namespace/name, one string per (scope, API group,
// resource, resource name, verb): "cluster apps/deployments create",
// "own apps/deployments get regiment-balloon". The scope is "cluster", "own"
// (the ServiceAccount's namespace) or another namespace.
func grants(objs []*unstructured.Unstructured, namespace, name string) map[string]bool {
	roles := map[string]*unstructured.Unstructured{} // "Kind namespace/name"
	for _, o := range objs {
		if o.GetKind() == "Role" || o.GetKind() == "ClusterRole" {
			roles[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = o
		}
	}
	out := map[string]bool{}
	for _, o := range objs {
		if (o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding") || !bindsServiceAccount(o, namespace, name) {
			continue
		}
		scope := "cluster"
		if o.GetKind() == "RoleBinding" {
			scope = o.GetNamespace()
			if scope == namespace {
				scope = "own"
			}
		}
		refNS := ""
		if str(o.Object, "roleRef", "kind") == "Role" {
			refNS = o.GetNamespace()
		}
		role := roles[str(o.Object, "roleRef", "kind")+" "+refNS+"/"+str(o.Object, "roleRef", "name")]
		if role == nil {
			out[scope+" missing "+str(o.Object, "roleRef", "kind")+" "+str(o.Object, "roleRef", "name")] = true
			continue
		}
		rules, _ := field(role.Object, "rules").([]any)
		for _, r := range rules {
			for _, g := range ruleAtoms(r.(map[string]any)) {
				out[scope+" "+g] = true
			}
		}
	}
	return out
}

// bindsServiceAccount says whether binding b has ServiceAccount
// namespace/name among its subjects.
func bindsServiceAccount(b *unstructured.Unstructured, namespace, name string) bool {
	subjects, _ := field(b.Object, "subjects").([]any)
	for _, s := range subjects {
		sm := s.(map[string]any)
		if sm["kind"] == "ServiceAccount" && sm["namespace"] == namespace && sm["name"] == name {
			return true
		}
	}
	return false
}

// ruleAtoms expands a PolicyRule into "group/resource[ name] verb" strings,
// one per combination; no resourceNames is any name.
func ruleAtoms(r map[string]any) []string {
	list := func(k string) []string {
		vs, _ := field(r, k).([]any) // nonResourceURLs rules have no apiGroups
		var out []string
		for _, v := range vs {
			out = append(out, v.(string))
		}
		return out
	}
	names := []string{""}
	if _, ok := r["resourceNames"]; ok {
		names = list("resourceNames")
	}
	var out []string
	for _, g := range list("apiGroups") {
		for _, res := range list("resources") {
			for _, n := range names {
				for _, v := range list("verbs") {
					out = append(out, strings.TrimSpace(g+"/"+res+" "+n)+" "+v)
				}
			}
		}
	}
	return out
}

// added is what b has and a has not; removed what a has and b has not.
func added(a, b map[string]bool) (plus, minus []string) {
	for k := range b {
		if !a[k] {
			plus = append(plus, k)
		}
	}
	for k := range a {
		if !b[k] {
			minus = append(minus, k)
		}
	}
	slices.Sort(plus)
	slices.Sort(minus)
	return plus, minus
}

// commanderAccount is the ServiceAccount the Commander's pods run as:
// the chart's StatefulSet or the kustomize base's Deployment.
func commanderAccount(t *testing.T, objs []*unstructured.Unstructured) (namespace, name string) {
	t.Helper()
	for _, o := range objs {
		if (o.GetKind() == "StatefulSet" && o.GetName() == "regiment-commander") || (o.GetKind() == "Deployment" && o.GetName() == "commander") {
			return o.GetNamespace(), str(podSpec(o), "serviceAccountName")
		}
	}
	t.Fatal("no Commander workload")
	return "", ""
}

// renderChartWith renders the chart (release regiment in namespace
// regiment) with commander.readNodes and commander.balloons.enabled set.
func renderChartWith(t *testing.T, readNodes, balloons bool) []*unstructured.Unstructured {
	t.Helper()
	values := filepath.Join(t.TempDir(), "values.yaml")
	v := fmt.Sprintf("commander:\n  readNodes: %v\n  balloons:\n    enabled: %v\n", readNodes, balloons)
	if err := os.WriteFile(values, []byte(v), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, _ := renderChart(t, chartCase{"commander features", values, "regiment"})
	return objs
}

// featureGrants is what enabling a feature grants the Commander: its rights
// in on less those in off, which must hold no right that on lacks.
func featureGrants(t *testing.T, off, on []*unstructured.Unstructured) []string {
	t.Helper()
	offNS, offSA := commanderAccount(t, off)
	onNS, onSA := commanderAccount(t, on)
	plus, minus := added(grants(off, offNS, offSA), grants(on, onNS, onSA))
	if len(minus) > 0 {
		t.Errorf("enabling the feature takes rights away: %q", minus)
	}
	return plus
}

// componentCases are the components an overlay lists, the chart values
// that grant the same, and those rights.
var componentCases = []struct {
	name                string
	components          []string
	readNodes, balloons bool
	want                []string
}{
	{"pool", []string{"components/pool"}, true, false, []string{
		"cluster /nodes get", "cluster /nodes list", "cluster /nodes watch",
		"cluster /pods get", "cluster /pods list", "cluster /pods watch",
		"cluster karpenter.sh/nodepools get",
	}},
	{"pool and balloons", []string{"components/pool", "components/balloons"}, true, true, []string{
		"cluster /nodes get", "cluster /nodes list", "cluster /nodes watch",
		"cluster /pods get", "cluster /pods list", "cluster /pods watch",
		"cluster karpenter.sh/nodepools get",
		"cluster scheduling.k8s.io/priorityclasses regiment-balloon get",
		"own apps/deployments create",
		"own apps/deployments regiment-balloon get", "own apps/deployments regiment-balloon patch",
	}},
}

// TestComponentsGrantWhatTheChartGrants: adding the components to the
// example overlay gives the Commander's ServiceAccount exactly the rights
// the chart adds with commander.readNodes and commander.balloons.enabled,
// and those are the rights listed (least privilege: the balloon Deployment
// and PriorityClass by name).
func TestComponentsGrantWhatTheChartGrants(t *testing.T) {
	example := buildWith(t, []string{"overlays/example"}, nil, "")
	chartOff := renderChartWith(t, false, false)
	for _, c := range componentCases {
		t.Run(c.name, func(t *testing.T) {
			chart := featureGrants(t, chartOff, renderChartWith(t, c.readNodes, c.balloons))
			kustomized := featureGrants(t, example, buildWith(t, []string{"overlays/example"}, c.components, ""))
			if !slices.Equal(kustomized, chart) {
				t.Errorf("the components grant the Commander\n%q\nthe chart\n%q", kustomized, chart)
			}
			if !slices.Equal(kustomized, c.want) {
				t.Errorf("the components grant the Commander\n%q\nwant\n%q", kustomized, c.want)
			}
		})
	}
}

// TestBalloonPriorityClassIsTheChart's: the balloons component's
// PriorityClass is the chart's, whose value is negative, never preempts
// and is no default.
func TestBalloonPriorityClassIsTheCharts(t *testing.T) {
	objs := buildWith(t, []string{"overlays/example"}, []string{"components/pool", "components/balloons"}, "")
	got := find(objs, "PriorityClass", pool.BalloonName)
	want := find(renderChartWith(t, true, true), "PriorityClass", pool.BalloonName)
	if got == nil || want == nil {
		t.Fatalf("balloon PriorityClass: component %v, chart %v", got != nil, want != nil)
	}
	for _, f := range []string{"value", "preemptionPolicy", "globalDefault", "description"} {
		if g, w := fmt.Sprint(field(got.Object, f)), fmt.Sprint(field(want.Object, f)); g != w {
			t.Errorf("%s: component %s, chart %s", f, g, w)
		}
	}
	if fmt.Sprint(field(got.Object, "value")) != "-1000" || field(got.Object, "preemptionPolicy") != "Never" {
		t.Errorf("value %v, preemptionPolicy %v; want -1000, Never", field(got.Object, "value"), field(got.Object, "preemptionPolicy"))
	}
	if n := find(buildWith(t, []string{"overlays/example"}, []string{"components/pool"}, ""), "PriorityClass", pool.BalloonName); n != nil {
		t.Error("the pool component alone creates the balloon PriorityClass")
	}
}

// movedNamespace is where TestComponentsOnTheAPIServer installs the base
// with both components for real: the chart's test installs its own
// regiment-commander, with the same rights, into namespace regiment.
const movedNamespace = "regiment-components"

// moveTo is a kustomization's transformers moving every object of namespace
// regiment, and the ServiceAccounts its bindings name, into namespace ns.
func moveTo(ns string) string {
	return `transformers:
- |-
  apiVersion: builtin
  kind: NamespaceTransformer
  metadata:
    name: moved
    namespace: ` + ns + `
  setRoleBindingSubjects: allServiceAccounts
`
}

// TestComponentsOnTheAPIServer: the apiserver admits the example overlay
// with both components (server-side apply as a dry run, strict fields, no
// warning). Then the base with both components, moved to its own
// namespace, is installed for real, and the Commander's ServiceAccount may
// do what the components are for and nothing near it: asked by
// SubjectAccessReview, then doing it as that ServiceAccount with a token
// (following the pool, holding balloons).
func TestComponentsOnTheAPIServer(t *testing.T) {
	a := newAPIServer(t)
	t.Run("admitted", func(t *testing.T) {
		a.t = t
		a.applyAll(buildWith(t, []string{"overlays/example"}, []string{"components/pool", "components/balloons"}, ""), true)
	})
	a.t = t
	objs := buildWith(t, []string{"base"}, []string{"components/pool", "components/balloons"}, moveTo(movedNamespace))
	a.applyAll([]*unstructured.Unstructured{restricted(movedNamespace)}, false)
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "PriorityClass":
			a.check(o, a.apply(o, false))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	env := testenv.Require(t)
	t.Run("access reviews", func(t *testing.T) { commanderAccessReviews(t, env.Client) })
	t.Run("as the service account", func(t *testing.T) {
		cfg, err := env.ServiceAccountConfig(movedNamespace, "regiment-commander")
		if err != nil {
			t.Fatal(err)
		}
		followsThePool(t, cfg)
		holdsBalloons(t, cfg, env.Client)
	})
}

// access is one request a SubjectAccessReview asks about.
type access struct {
	verb, group, resource, name, namespace string
	allowed                                bool
}

// commanderAccess are requests of the Commander's ServiceAccount with both
// components: the rights they grant, and their nearest neighbours, refused.
var commanderAccess = []access{
	{"list", "", "nodes", "", "", true},
	{"watch", "", "nodes", "", "", true},
	{"list", "", "pods", "", "", true},
	{"get", "karpenter.sh", "nodepools", "general", "", true},
	{"get", "scheduling.k8s.io", "priorityclasses", "regiment-balloon", "", true},
	{"create", "apps", "deployments", "", movedNamespace, true},
	{"get", "apps", "deployments", "regiment-balloon", movedNamespace, true},
	{"patch", "apps", "deployments", "regiment-balloon", movedNamespace, true},

	{"patch", "", "nodes", "node-1", "", false},
	{"delete", "", "pods", "p", "default", false},
	{"create", "", "pods", "", movedNamespace, false},
	{"list", "", "secrets", "", movedNamespace, false},
	{"list", "karpenter.sh", "nodepools", "", "", false},
	{"get", "scheduling.k8s.io", "priorityclasses", "system-cluster-critical", "", false},
	{"create", "scheduling.k8s.io", "priorityclasses", "", "", false},
	{"patch", "apps", "deployments", "commander", movedNamespace, false},
	{"get", "apps", "deployments", "commander", movedNamespace, false},
	{"update", "apps", "deployments", "regiment-balloon", movedNamespace, false},
	{"delete", "apps", "deployments", "regiment-balloon", movedNamespace, false},
	{"patch", "apps", "deployments", "regiment-balloon", "default", false},
	{"create", "apps", "deployments", "", "default", false},
	{"list", "apps", "deployments", "", movedNamespace, false},
}

func commanderAccessReviews(t *testing.T, admin kubernetes.Interface) {
	user := "system:serviceaccount:" + movedNamespace + ":regiment-commander"
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + movedNamespace, "system:authenticated"}
	for _, c := range commanderAccess {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: c.verb, Group: c.group, Resource: c.resource,
				Name: c.name, Namespace: c.namespace}}}
		got, err := admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != c.allowed {
			t.Errorf("%s %s/%s %q in %q: allowed %v, want %v (%s)", c.verb, c.group, c.resource, c.name, c.namespace,
				got.Status.Allowed, c.allowed, got.Status.Reason)
		}
	}
	// The components grant the Commander only: the Soldiers' ServiceAccount
	// of the same namespace still cannot read the nodes.
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + movedNamespace + ":regiment-soldier", Groups: groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "nodes"}}}
	if got, err := admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{}); err != nil || got.Status.Allowed {
		t.Errorf("the soldier may list nodes: %v, %v", got.Status.Allowed, err)
	}
}

// followsThePool runs the Commander's pool.Watcher as cfg's ServiceAccount:
// its Node and Pod informers sync, and its read of the pool's Karpenter
// NodePool is not refused (the test apiserver has no Karpenter: not found,
// which the watcher takes for no cap).
func followsThePool(t *testing.T, cfg *rest.Config) {
	t.Helper()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pool.NewWatcher(client, dyn, pool.Config{NodeSelector: pool.LabelKarpenterNodePool + "=general", MaxCores: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 16)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, func(err error) { errs <- err }) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(15 * time.Second)
	for !w.Synced() {
		select {
		case err := <-errs:
			t.Fatalf("pool watcher: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the pool's informers did not sync in 15s as the Commander (list and watch nodes and pods)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := dyn.Resource(pool.NodePools).Get(ctx, "general", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get nodepool general as the Commander: %v, want not found (no Karpenter here), not forbidden", err)
	}
}

// holdsBalloons has the Commander's Balloons, as cfg's ServiceAccount,
// create the balloon Deployment and resize it, and checks it with admin.
func holdsBalloons(t *testing.T, cfg *rest.Config, admin kubernetes.Interface) {
	t.Helper()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pool.NewBalloons(client, pool.BalloonConfig{Namespace: movedNamespace, NodeSelector: map[string]string{"pool": "general"},
		PodCores: 2, PriorityClass: pool.BalloonName, Image: "registry.k8s.io/pause:3.10"}, func() (float64, bool) { return 1, true })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		planCores float64
		pods      int32
	}{{7, 3}, {3, 1}} { // ceil((plan - 1 used) / 2)
		if err := b.SetCapacityTarget(ctx, c.planCores); err != nil {
			t.Fatalf("plan of %v cores: %v", c.planCores, err)
		}
		d, err := admin.AppsV1().Deployments(movedNamespace).Get(ctx, pool.BalloonName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas != c.pods {
			t.Errorf("plan of %v cores: %d balloon pods, want %d", c.planCores, *d.Spec.Replicas, c.pods)
		}
	}
}
