package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/regimentd/regiment/internal/adapter/kube/leader"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

const exampleOverlay = "../../../deploy/overlays/example"

// applier applies unstructured objects with server-side apply.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier(t *testing.T, cfg *rest.Config, c kubernetes.Interface) *applier {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Discovery()))}
}

// apply server-side applies obj with strict field validation; dryRun makes
// the server validate and admit it without persisting it.
func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: "regiment-deploy-test", FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	force := true
	opts.Force = &force
	var ri dynamic.ResourceInterface = a.dyn.Resource(m.Resource)
	if ns := obj.GetNamespace(); ns != "" {
		ri = a.dyn.Resource(m.Resource).Namespace(ns)
	}
	_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	return err
}

func describeObj(o *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
}

// TestDeployManifests renders deploy/overlays/example, has the apiserver
// validate every object (server-side dry run, strict fields), applies its
// ServiceAccounts and RBAC, and checks that each ServiceAccount can do what
// its daemon does and nothing else.
func TestDeployManifests(t *testing.T) {
	env := testenv.Require(t)
	ctx := context.Background()
	objs := testenv.Kustomize(t, exampleOverlay)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	for kind, n := range map[string]int{"Namespace": 2, "StatefulSet": 1, "Deployment": 3, "ServiceAccount": 3, "Role": 4,
		"RoleBinding": 4, "ConfigMap": 1, "Service": 2} {
		if kinds[kind] != n {
			t.Errorf("%d %s objects, want %d (all: %v)", kinds[kind], kind, n, kinds)
		}
	}
	ap := newApplier(t, env.Config, env.Client)

	// Namespaces for real: objects in a namespace cannot be dry-run before it exists.
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			if err := ap.apply(ctx, o, false); err != nil {
				t.Fatalf("%s: %v", describeObj(o), err)
			}
		}
	}
	t.Run("server dry run accepts every object", func(t *testing.T) {
		for _, o := range objs {
			if err := ap.apply(ctx, o, true); err != nil {
				t.Errorf("%s: %v", describeObj(o), err)
			}
		}
		// Nothing was persisted by the dry run.
		if _, err := env.Client.AppsV1().Deployments("regiment").Get(ctx, "commander", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("dry run persisted the commander: %v", err)
		}
	})

	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding":
			if err := ap.apply(ctx, o, false); err != nil {
				t.Fatalf("%s: %v", describeObj(o), err)
			}
		}
	}
	if _, err := env.Client.CoreV1().ServiceAccounts("regiment").Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "unbound"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFile(exampleOverlay + "/regiment.hcl")
	if err != nil {
		t.Fatal(err)
	}
	// The payment domain's workloads, created by an admin.
	for _, a := range cfg.Apps() {
		ref := cfg.Workload(a)
		if !strings.HasPrefix(a.Name, "payment/") {
			continue
		}
		deployment(t, env.Client, ref.Namespace, ref.Name, 2, false)
		hpa(t, env.Client, ref.Namespace, ref.HPA, 2, 60)
	}

	t.Run("the soldier's service account does its job", func(t *testing.T) { soldierCanWork(t, env, cfg) })
	t.Run("the soldier's service account may do nothing else", func(t *testing.T) {
		c := serviceAccountClient(t, env, "regiment", "regiment-soldier")
		forbidden(t, c, soldierForbidden)
		exactRules(t, env, c, "shop", []string{
			"apps/deployments list", "apps/deployments watch",
			"autoscaling/horizontalpodautoscalers get", "autoscaling/horizontalpodautoscalers list",
			"autoscaling/horizontalpodautoscalers patch", "autoscaling/horizontalpodautoscalers update",
			"autoscaling/horizontalpodautoscalers watch",
			"keda.sh/scaledobjects list", "keda.sh/scaledobjects watch",
			"/pods list", "/pods watch", "/events create", "/events patch",
		})
		exactRules(t, env, c, "regiment", []string{
			"coordination.k8s.io/leases create",
			"coordination.k8s.io/leases get regiment-soldier-fraud", "coordination.k8s.io/leases get regiment-soldier-payment",
			"coordination.k8s.io/leases update regiment-soldier-fraud", "coordination.k8s.io/leases update regiment-soldier-payment",
		})
		exactRules(t, env, c, "default", nil)
	})
	t.Run("the commander's service account does its job", func(t *testing.T) { commanderCanWork(t, env) })
	t.Run("the commander's service account may do nothing else", func(t *testing.T) {
		c := serviceAccountClient(t, env, "regiment", "regiment-commander")
		forbidden(t, c, commanderForbidden)
		exactRules(t, env, c, "shop", []string{
			"autoscaling/horizontalpodautoscalers get", "autoscaling/horizontalpodautoscalers list",
			"autoscaling/horizontalpodautoscalers update",
		})
		exactRules(t, env, c, "regiment", []string{
			"coordination.k8s.io/leases create",
			"coordination.k8s.io/leases get regiment-commander", "coordination.k8s.io/leases update regiment-commander",
			"coordination.k8s.io/leases get regiment-soldier-fraud", "coordination.k8s.io/leases get regiment-soldier-payment",
		})
		exactRules(t, env, c, "default", nil)
	})
}

// serviceAccountClient authenticates as namespace/name, as a pod of that
// ServiceAccount would.
func serviceAccountClient(t *testing.T, env *testenv.Env, namespace, name string) kubernetes.Interface {
	t.Helper()
	cfg, err := env.ServiceAccountConfig(namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func soldierCanWork(t *testing.T, env *testenv.Env, cfg *domains.Config) {
	c := serviceAccountClient(t, env, "regiment", "regiment-soldier")
	ad, err := NewAdapter(c, cfg, "payment", "soldier-payment-0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runObserver(t, ad.Observer) // list and watch Deployments, Pods, HPAs
	if err := ad.Lease.Renew(ctx); err != nil {
		t.Fatalf("lease create: %v", err)
	}
	if err := ad.Lease.Renew(ctx); err != nil {
		t.Fatalf("lease update: %v", err)
	}
	o := &soldier.Observation{Apps: make([]soldier.AppObservation, 2)}
	if err := ad.Observer.Observe(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := ad.Actuator.Apply(ctx, []soldier.Change{{App: 0, Replicas: 5}, {App: 1, Replicas: 7}}); err != nil {
		t.Fatalf("hpa get and update: %v", err)
	}
	h, _ := env.Client.AutoscalingV2().HorizontalPodAutoscalers("shop").Get(ctx, "checkout-1", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 7 {
		t.Errorf("checkout-1 min %d, want 7", *h.Spec.MinReplicas)
	}
	// An Event on the workload of an app it cannot write.
	go ad.Events.Run(ctx)
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		ad.Events.Report(time.Now(), []soldier.Failing{{App: 0, Reason: soldier.FailDenied, Detail: "test", Target: 5, Failures: 1}})
		list, err := env.Client.CoreV1().Events("shop").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + EventWriteFailed})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) > 0, "no RegimentWriteFailed event recorded as the soldier"
	})
	// And one on the workload of an app breaching with its max_replicas
	// ready, once however often it is reported within the repeat; and one on
	// an app whose sizing wants more than its max_replicas, before it
	// breaches, once too.
	now := time.Now()
	eventOnce(t, env, EventScalingLimited, "checkout-1", "max_replicas (10) ready: p99 0.9 s (objective 0.25 s)", func() int {
		return ad.Events.ReportAtMax(now, []soldier.AtMax{{App: 1, Max: 10, Ready: 10, P99: 0.9}}, 0.25)
	})
	eventOnce(t, env, EventWantsMoreThanMax, "checkout-0", "wants 13 replicas, more than its max_replicas (10)", func() int {
		return ad.Events.ReportLimited(now, []soldier.Limited{{App: 0, Max: 10, Wanted: 13}})
	})
}

// eventOnce reports, until an Event of reason is on the workload in the
// shop namespace with a message containing message, and checks that report
// recorded it once however often it was called within its repeat.
func eventOnce(t *testing.T, env *testenv.Env, reason, workload, message string, report func() int) {
	t.Helper()
	told := 0
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		told += report()
		list, err := env.Client.CoreV1().Events("shop").List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + reason})
		if err != nil {
			return false, err.Error()
		}
		if len(list.Items) == 0 {
			return false, "no " + reason + " event recorded as the soldier"
		}
		e := list.Items[0]
		return e.InvolvedObject.Name == workload && strings.Contains(e.Message, message),
			fmt.Sprintf("event on %s: %q", e.InvolvedObject.Name, e.Message)
	})
	if told != 1 {
		t.Errorf("%s recorded %d times within its repeat, want once", reason, told)
	}
}

func commanderCanWork(t *testing.T, env *testenv.Env) {
	c := serviceAccountClient(t, env, "regiment", "regiment-commander")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	led := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- leader.Elect(ctx, leader.Config{Client: c, Namespace: "regiment", RetryPeriod: 200 * time.Millisecond},
			"commander-0", func(lctx context.Context) { close(led); <-lctx.Done() }, nil)
	}()
	select {
	case <-led:
	case <-time.After(15 * time.Second):
		t.Fatal("the commander did not acquire its lease")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	le, err := env.Client.CoordinationV1().Leases("regiment").Get(context.Background(), leader.CommanderLease, metav1.GetOptions{})
	if err != nil || le.Spec.HolderIdentity == nil || *le.Spec.HolderIdentity != "" {
		t.Errorf("lease after release: %+v, %v; want released (no holder)", le.Spec, err)
	}

	// The Reverter reads the Soldier's lease and, once it lapsed, updates HPAs.
	rev := NewReverter(c, []string{"shop"})
	rev.Kinds = RevertKinds(domains.ActuateHPABounds) // as the Commander of an hpa-bounds config
	if done, err := rev.RevertOnce(context.Background()); err != nil || len(done) != 0 {
		t.Fatalf("with a live soldier: %v, %v", done, err)
	}
	le, err = env.Client.CoordinationV1().Leases("regiment").Get(context.Background(), SoldierLeaseName("payment"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	le.Spec.RenewTime = &old
	if _, err := env.Client.CoordinationV1().Leases("regiment").Update(context.Background(), le, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if done, err := rev.RevertOnce(context.Background()); err != nil || len(done) != 2 {
		t.Errorf("with a lapsed soldier: %v, %v; want both checkout hpas reverted", done, err)
	}
}

// action is one API call a ServiceAccount must not be allowed.
type action struct {
	name string
	do   func(ctx context.Context, c kubernetes.Interface) error
}

var (
	soldierForbidden = []action{
		{"get a deployment (it only lists and watches)", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AppsV1().Deployments("shop").Get(ctx, "checkout-0", metav1.GetOptions{})
			return err
		}},
		{"scale a deployment (hpa-bounds actuation)", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AppsV1().Deployments("shop").GetScale(ctx, "checkout-0", metav1.GetOptions{})
			return err
		}},
		{"delete a deployment", func(ctx context.Context, c kubernetes.Interface) error {
			return c.AppsV1().Deployments("shop").Delete(ctx, "checkout-0", metav1.DeleteOptions{})
		}},
		{"delete an hpa", func(ctx context.Context, c kubernetes.Interface) error {
			return c.AutoscalingV2().HorizontalPodAutoscalers("shop").Delete(ctx, "checkout-0", metav1.DeleteOptions{})
		}},
		{"patch a deployment (it applies only HPAs)", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AppsV1().Deployments("shop").Patch(ctx, "checkout-0", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
			return err
		}},
		{"create a pod", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Pods("shop").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}, metav1.CreateOptions{})
			return err
		}},
		{"read secrets", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Secrets("shop").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list pods elsewhere", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list leases", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoordinationV1().Leases("regiment").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"take the commander's lease", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoordinationV1().Leases("regiment").Update(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: leader.CommanderLease, Namespace: "regiment"}}, metav1.UpdateOptions{})
			return err
		}},
		{"read the config", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().ConfigMaps("regiment").List(ctx, metav1.ListOptions{})
			return err
		}},
	}
	commanderForbidden = []action{
		{"scale a deployment", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AppsV1().Deployments("shop").GetScale(ctx, "checkout-0", metav1.GetOptions{})
			return err
		}},
		{"watch hpas", func(ctx context.Context, c kubernetes.Interface) error {
			w, err := c.AutoscalingV2().HorizontalPodAutoscalers("shop").Watch(ctx, metav1.ListOptions{})
			if err == nil {
				w.Stop()
			}
			return err
		}},
		{"list pods", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Pods("shop").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"renew a soldier's lease", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoordinationV1().Leases("regiment").Update(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: SoldierLeaseName("payment"), Namespace: "regiment"}}, metav1.UpdateOptions{})
			return err
		}},
		{"delete its own lease", func(ctx context.Context, c kubernetes.Interface) error {
			return c.CoordinationV1().Leases("regiment").Delete(ctx, leader.CommanderLease, metav1.DeleteOptions{})
		}},
		{"read secrets", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Secrets("regiment").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"update hpas elsewhere", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.AutoscalingV2().HorizontalPodAutoscalers("default").List(ctx, metav1.ListOptions{})
			return err
		}},
	}
)

func forbidden(t *testing.T, c kubernetes.Interface, actions []action) {
	t.Helper()
	for _, a := range actions {
		if err := a.do(context.Background(), c); !apierrors.IsForbidden(err) {
			t.Errorf("%s: %v, want Forbidden", a.name, err)
		}
	}
}

// exactRules checks the resource rules the client holds in namespace (from
// a SelfSubjectRulesReview), one "group/resource verb [name]" per verb and
// name, against want. The rules every authenticated user has (those of a
// ServiceAccount bound to nothing) are left out.
func exactRules(t *testing.T, env *testenv.Env, c kubernetes.Interface, namespace string, want []string) {
	t.Helper()
	got := rules(t, c, namespace)
	baseline := rules(t, serviceAccountClient(t, env, "regiment", "unbound"), namespace)
	got = slices.DeleteFunc(got, func(r string) bool { return slices.Contains(baseline, r) })
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("rules in %q beyond every user's:\n got %q\nwant %q", namespace, got, want)
	}
}

// rules lists the resource rules c holds in namespace, sorted.
func rules(t *testing.T, c kubernetes.Interface, namespace string) []string {
	t.Helper()
	r, err := c.AuthorizationV1().SelfSubjectRulesReviews().Create(context.Background(),
		&authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespace}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rule := range r.Status.ResourceRules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					if len(rule.ResourceNames) == 0 {
						got = append(got, fmt.Sprintf("%s/%s %s", g, res, v))
					}
					for _, n := range rule.ResourceNames {
						got = append(got, fmt.Sprintf("%s/%s %s %s", g, res, v, n))
					}
				}
			}
		}
	}
	sort.Strings(got)
	return slices.Compact(got)
}
