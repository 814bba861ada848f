package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	acautoscalingv1 "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	acautoscalingv2 "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/episodes"
)

// ownersRig is a one-domain Soldier on the test cluster whose n apps
// ("web-<i>") each need 11 replicas, recording into a real store.
type ownersRig struct {
	cfg *domains.Config
	ad  *Adapter
	sd  *soldier.Soldier
	st  *store.Store
	app *store.Appender
	now time.Time
	seq uint64
}

func newOwnersRig(t *testing.T, ns string, n int, soldierBlock string, dyn dynamic.Interface) *ownersRig {
	t.Helper()
	env := testenv.Require(t)
	prom := promtest.New(t, "load 15s\n")
	var series []fmt.Stringer
	for i := range n {
		series = append(series, appSeries{ns: ns, pod: fmt.Sprintf("web-%d-6d4cf-x2k4p", i), ok: 52.5, cpu: 0.5, mem: 100})
	}
	prom.Load(t, promtest.Script(series...))
	cfg := soldierConfig(t, ns, prom.URL, n, soldierBlock)
	ad, err := NewAdapter(env.Client, cfg, "shop", "soldier-0")
	if err != nil {
		t.Fatal(err)
	}
	if dyn != nil {
		ad.WatchKEDA(dyn)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ad.Run(ctx, hclog.NewNullLogger()) }()
	t.Cleanup(func() { cancel(); <-done })

	st, err := store.Open(filepath.Join(t.TempDir(), "episodes.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &ownersRig{cfg: cfg, ad: ad, st: st, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	ep := recording.SoldierEpisode("soldier-shop-1", cfg, "shop", "proportional")
	ep.Started = r.now
	if err := st.BeginEpisode(ep); err != nil {
		t.Fatal(err)
	}
	r.app = st.NewAppender(1, 0)
	scfg, err := soldier.NewConfig(cfg, "shop")
	if err != nil {
		t.Fatal(err)
	}
	r.sd = soldier.New(scfg, &soldier.SqrtStaffing{}, ad.Observer, ad.Actuator, nil,
		&recording.Soldier{Episode: ep.ID, Out: r.app, Err: func(err error) { t.Error(err) }})
	ad.Observer.clock = func() time.Time { return r.now }
	return r
}

// tick runs one Soldier tick under a fresh directive.
func (r *ownersRig) tick(t *testing.T) soldier.TickResult {
	t.Helper()
	r.seq++
	if ok, reason := r.sd.OnDirective(directive(r.cfg, r.seq, r.now), r.now); !ok {
		t.Fatalf("directive rejected: %s", reason)
	}
	res, err := r.sd.Tick(context.Background(), r.now)
	if err != nil {
		t.Fatalf("tick: %v", err)
	}
	r.now = r.now.Add(10 * time.Second)
	return res
}

// waitOwners waits until the Observer sees want (app index -> owner; the
// others none).
func (r *ownersRig) waitOwners(t *testing.T, want map[int]string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		var got []string
		ok := true
		for i, tg := range r.ad.Observer.cfg.Targets {
			in, err := r.ad.Observer.Ownership(&tg)
			if err != nil {
				return false, err.Error()
			}
			o := ForeignOwner(in).String()
			ok = ok && o == want[i]
			got = append(got, fmt.Sprintf("%d:%q", i, o))
		}
		return ok, "owners " + strings.Join(got, " ")
	})
}

// why is `regiment episodes why` for the domain at the last tick.
func (r *ownersRig) why(t *testing.T) string {
	t.Helper()
	if err := r.app.Flush(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := episodes.Why(context.Background(), &b, r.st, "shop", r.now, time.Minute); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func replicasOf(t *testing.T, r *ownersRig, ns string, i int) int32 {
	t.Helper()
	env := testenv.Require(t)
	s, err := env.Client.AppsV1().Deployments(ns).GetScale(context.Background(), fmt.Sprintf("web-%d", i), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Spec.Replicas
}

// In replicas actuation an HPA someone else made targets web-0, Argo CD
// (its field manager, by server-side apply) owns web-1's spec.replicas and
// a KEDA ScaledObject targets web-2: those three are left alone and said
// so (Observer status, the recorded step's guard and reason, episodes
// why); web-3 and web-4 are scaled, with "regiment" owning their
// spec.replicas in managedFields. Then someone scales web-3 by hand after
// Regiment: it took the field, and web-3 is left alone from the next tick.
func TestSoldierLeavesAppsWithOtherOwnersAlone(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	ctx := context.Background()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	scaledObjectCRD(t, dyn)
	const n = 5
	for i := range n {
		deployment(t, env.Client, ns, fmt.Sprintf("web-%d", i), 1, false)
	}
	hpa(t, env.Client, ns, "web-0", 1, 10)
	argo := acautoscalingv1.Scale().WithSpec(acautoscalingv1.ScaleSpec().WithReplicas(2))
	if _, err := env.Client.AppsV1().Deployments(ns).ApplyScale(ctx, "web-1", argo,
		metav1.ApplyOptions{FieldManager: "argocd-controller", Force: true}); err != nil {
		t.Fatal(err)
	}
	so := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": map[string]any{"name": "web-2-queue", "namespace": ns},
		"spec":     map[string]any{"scaleTargetRef": map[string]any{"name": "web-2"}}}}
	if _, err := dyn.Resource(scaledObjects).Namespace(ns).Create(ctx, so, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	r := newOwnersRig(t, ns, n, `  actuation = "replicas"
  target_utilisation = 0.5`, dyn)
	r.waitOwners(t, map[int]string{0: "hpa/web-0", 1: "field-manager/argocd-controller:.spec.replicas", 2: "keda/web-2-queue"})
	res := r.tick(t)

	want := []int32{1, 2, 1, 11, 11}
	for i, w := range want {
		if got := replicasOf(t, r, ns, i); got != w {
			t.Errorf("web-%d replicas %d, want %d", i, got, w)
		}
	}
	if res.Writes != 2 || r.ad.Actuator.Stats().Writes != 2 {
		t.Errorf("tick writes %d, actuator %+v; want 2 (web-3, web-4)", res.Writes, r.ad.Actuator.Stats())
	}
	st := r.ad.Observer.Status()
	if st[0].Owner.String() != "hpa/web-0" || st[1].Owner.Kind != OwnerFieldManager || st[2].Owner.Kind != OwnerKEDA || st[3].Owner.Found() {
		t.Errorf("observer owners %v %v %v %v", st[0].Owner, st[1].Owner, st[2].Owner, st[3].Owner)
	}
	out := r.why(t)
	for _, want := range [][]string{
		{"foreign_owner", "replicas/shop/web-0", "-> 1", "owned by hpa/web-0"},
		{"foreign_owner", "replicas/shop/web-1", "-> 2", "owned by field-manager/argocd-controller:.spec.replicas"},
		{"foreign_owner", "replicas/shop/web-2", "-> 1", "owned by keda/web-2-queue"},
	} {
		if !hasLine(out, want...) {
			t.Errorf("episodes why has no line with %q:\n%s", want, out)
		}
	}

	// Regiment's writes are its own in managedFields: spec.replicas, by
	// server-side apply of the scale subresource.
	d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, "web-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owners := fieldOwners(d.ManagedFields, replicasPath)
	if len(owners) != 1 || owners[0].Manager != "regiment" || owners[0].Operation != metav1.ManagedFieldsOperationApply || owners[0].Subresource != "scale" {
		t.Errorf("web-3 spec.replicas owners %+v, want regiment alone (Apply, scale)", owners)
	}

	// A hand scale of web-3 after Regiment's write takes the field.
	// (Retried on conflict: the deployment controller writes the object too.)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := env.Client.AppsV1().Deployments(ns).GetScale(ctx, "web-3", metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = 4
		_, err = env.Client.AppsV1().Deployments(ns).UpdateScale(ctx, "web-3", s, metav1.UpdateOptions{FieldManager: "kubectl"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r.waitOwners(t, map[int]string{0: "hpa/web-0", 1: "field-manager/argocd-controller:.spec.replicas", 2: "keda/web-2-queue",
		3: "field-manager/kubectl:.spec.replicas"})
	r.tick(t)
	if got := replicasOf(t, r, ns, 3); got != 4 {
		t.Errorf("web-3 replicas %d after the hand scale, want the hand's 4", got)
	}
	if !hasLine(r.why(t), "replicas/shop/web-3", "owned by field-manager/kubectl:.spec.replicas") {
		t.Errorf("episodes why does not say web-3 is kubectl's")
	}
	// The Actuator itself refuses an app another controller owns (a
	// change made before the Observer saw the owner).
	err = r.ad.Actuator.Apply(ctx, []soldier.Change{{App: 1, Replicas: 9}})
	var fo *ForeignOwnerError
	if !errors.As(err, &fo) || fo.Owner.Name != "argocd-controller" || replicasOf(t, r, ns, 1) != 2 {
		t.Errorf("direct apply to Argo's web-1: %v", err)
	}
}

// In hpa-bounds actuation Flux's kustomize-controller applies web-1's HPA
// bounds with its own field manager: web-1 is left alone and reported,
// web-0's HPA gets Regiment's bounds, owned by "regiment" in managedFields.
func TestSoldierLeavesHPABoundsWithAnotherManagerAlone(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	ctx := context.Background()
	for i := range 2 {
		name := fmt.Sprintf("web-%d", i)
		deployment(t, env.Client, ns, name, 1, false)
		hpa(t, env.Client, ns, name, 1, 100)
	}
	flux := acautoscalingv2.HorizontalPodAutoscaler("web-1", ns).
		WithSpec(acautoscalingv2.HorizontalPodAutoscalerSpec().WithMinReplicas(3).WithMaxReplicas(30))
	if _, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Apply(ctx, flux,
		metav1.ApplyOptions{FieldManager: "kustomize-controller", Force: true}); err != nil {
		t.Fatal(err)
	}
	r := newOwnersRig(t, ns, 2, `  actuation = "hpa-bounds"
  target_utilisation = 0.5`, nil)
	r.waitOwners(t, map[int]string{1: "field-manager/kustomize-controller:.spec.minReplicas"})
	r.tick(t)

	hpas := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)
	h0, _ := hpas.Get(ctx, "web-0", metav1.GetOptions{})
	h1, _ := hpas.Get(ctx, "web-1", metav1.GetOptions{})
	if *h0.Spec.MinReplicas != 11 || h0.Spec.MaxReplicas != 17 || *h1.Spec.MinReplicas != 3 || h1.Spec.MaxReplicas != 30 || h1.Labels[LabelManaged] != "" {
		t.Errorf("web-0 [%d, %d] want [11, 17]; web-1 [%d, %d] %v want Flux's [3, 30], unlabelled",
			*h0.Spec.MinReplicas, h0.Spec.MaxReplicas, *h1.Spec.MinReplicas, h1.Spec.MaxReplicas, h1.Labels)
	}
	for _, p := range [][]string{minPath, maxPath} {
		if o := fieldOwners(h0.ManagedFields, p); len(o) != 1 || o[0].Manager != "regiment" || o[0].Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("web-0 %v owners %+v, want regiment alone (Apply)", p, o)
		}
	}
	if out := r.why(t); !hasLine(out, "foreign_owner", "replicas/shop/web-1", "owned by field-manager/kustomize-controller:.spec.minReplicas") {
		t.Errorf("episodes why:\n%s", out)
	}
}

// scaledObjectCRD installs a minimal keda.sh ScaledObject CRD and waits
// until it is served.
func scaledObjectCRD(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "scaledobjects.keda.sh"},
		"spec": map[string]any{"group": "keda.sh", "scope": "Namespaced",
			"names": map[string]any{"kind": "ScaledObject", "plural": "scaledobjects", "singular": "scaledobject", "listKind": "ScaledObjectList"},
			"versions": []any{map[string]any{"name": "v1alpha1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
	}}
	if _, err := dyn.Resource(crds).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		_, err := dyn.Resource(scaledObjects).List(context.Background(), metav1.ListOptions{})
		return err == nil, fmt.Sprintf("scaledobjects not served: %v", err)
	})
}

// hasLine reports whether a line of out holds every part.
func hasLine(out string, parts ...string) bool {
	for _, l := range strings.Split(out, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}
