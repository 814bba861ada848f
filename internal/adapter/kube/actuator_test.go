package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// target is a Target for app i named name in ns, with bounds [lo, hi].
func target(i int, ns, name string, kind domains.WorkloadKind, lo, hi int32) Target {
	return Target{
		App:         soldier.App{Index: i, Name: "d/" + name, CPU: 0.1, Min: lo, Max: hi, Capacity: 10},
		WorkloadRef: domains.WorkloadRef{Kind: kind, Namespace: ns, Name: name, Selector: "app=" + name, HPA: name},
		Pods:        labels.SelectorFromSet(labels.Set{"app": name}),
	}
}

func TestActuatorScalesThroughTheScaleSubresource(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "web", 1, false)
	statefulSet(t, env.Client, ns, "db", 1)
	targets := []Target{target(0, ns, "web", domains.KindDeployment, 1, 50), target(1, ns, "db", domains.KindStatefulSet, 1, 50)}

	var w writeCounter
	act, err := NewActuator(w.client(t, env.Config), ActuatorConfig{Actuation: domains.ActuateReplicas, Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	obs := NewObserver(env.Client, ObserverConfig{Actuation: domains.ActuateReplicas, Targets: targets, TargetUtilisation: 0.5})
	runObserver(t, obs)
	ctx := context.Background()

	if err := act.Apply(ctx, []soldier.Change{{App: 0, Replicas: 7}, {App: 1, Replicas: 3}}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int32{"web": 7} {
		s, err := env.Client.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err != nil || s.Spec.Replicas != want {
			t.Fatalf("deployment %s scale = %v, %v; want %d", name, s.Spec.Replicas, err, want)
		}
	}
	if s, err := env.Client.AppsV1().StatefulSets(ns).GetScale(ctx, "db", metav1.GetOptions{}); err != nil || s.Spec.Replicas != 3 {
		t.Fatalf("statefulset db scale = %v, %v; want 3", s.Spec.Replicas, err)
	}
	if got := w.total("deployments/scale", "statefulsets/scale"); got != 2 {
		t.Errorf("writes = %s, want one PUT per scale subresource", &w)
	}

	// The observer sees the new replicas through its informers.
	o := &soldier.Observation{Apps: make([]soldier.AppObservation, 2)}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		if err := obs.Observe(ctx, o); err != nil {
			return false, err.Error()
		}
		return o.Apps[0].Replicas == 7 && o.Apps[1].Replicas == 3, fmt.Sprintf("observed %+v", o.Apps)
	})

	// What the cluster holds is not written again.
	before := w.total("scale")
	if err := act.Apply(ctx, []soldier.Change{{App: 0, Replicas: 7}}); err != nil {
		t.Fatal(err)
	}
	if got := w.total("scale"); got != before || act.Stats().NoOps != 1 {
		t.Errorf("a no-op wrote: writes %d -> %d, stats %+v", before, got, act.Stats())
	}
}

func TestActuatorSetsHPABounds(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "api", 2, false)
	hpa(t, env.Client, ns, "api", 1, 10)
	targets := []Target{target(0, ns, "api", domains.KindDeployment, 2, 40)}

	var w writeCounter
	act, err := NewActuator(w.client(t, env.Config), ActuatorConfig{Actuation: domains.ActuateHPABounds, Targets: targets,
		HPAHeadroom: 0.5, Lease: "regiment/regiment-soldier-d"})
	if err != nil {
		t.Fatal(err)
	}
	obs := NewObserver(env.Client, ObserverConfig{Actuation: domains.ActuateHPABounds, Targets: targets, TargetUtilisation: 0.5})
	runObserver(t, obs)
	ctx := context.Background()

	if err := act.Apply(ctx, []soldier.Change{{App: 0, Replicas: 8}}); err != nil {
		t.Fatal(err)
	}
	h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *h.Spec.MinReplicas != 8 || h.Spec.MaxReplicas != 12 {
		t.Errorf("hpa bounds [%d, %d], want [8, 12] (target 8, headroom 50%%)", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	if h.Labels[LabelManaged] != "true" || h.Annotations[AnnotationLease] != "regiment/regiment-soldier-d" || h.Annotations[AnnotationSafeBounds] != "2-40" ||
		h.Annotations[AnnotationOriginal] != `{"minReplicas":1,"maxReplicas":10}` || h.Labels[LabelManagedBy] != "unnamed" {
		t.Errorf("hpa labels %v, annotations %v", h.Labels, h.Annotations)
	}
	o := &soldier.Observation{Apps: make([]soldier.AppObservation, 1)}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		if err := obs.Observe(ctx, o); err != nil {
			return false, err.Error()
		}
		return o.Apps[0].Replicas == 8 && obs.Status()[0].Found, fmt.Sprintf("observed %+v %+v", o.Apps[0], obs.Status()[0])
	})

	// The target maps into the app's bounds: 39 -> [39, 40].
	if err := act.Apply(ctx, []soldier.Change{{App: 0, Replicas: 39}}); err != nil {
		t.Fatal(err)
	}
	h, _ = env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "api", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 39 || h.Spec.MaxReplicas != 40 {
		t.Errorf("hpa bounds [%d, %d], want [39, 40]", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	if err := act.Apply(ctx, []soldier.Change{{App: 0, Replicas: 39}}); err != nil {
		t.Fatal(err)
	}
	if got := w.total("horizontalpodautoscalers"); got != 3 || act.Stats().Records != 1 {
		t.Errorf("writes %s, stats %+v; want 3: the original recorded once, two bounds (the repeated target is a no-op)", &w, act.Stats())
	}

	// An HPA that does not exist fails that app's write (a
	// soldier.WriteErrors naming it, not found). Apply leaves the retry to
	// the Soldier's backoff; Reassert writes it.
	act2, _ := NewActuator(env.Client, ActuatorConfig{Actuation: domains.ActuateHPABounds,
		Targets: []Target{target(0, ns, "nope", domains.KindDeployment, 1, 5)}})
	err = act2.Apply(ctx, []soldier.Change{{App: 0, Replicas: 3}})
	var we soldier.WriteErrors
	if !errors.As(err, &we) || len(we) != 1 || we[0].App != 0 || we[0].Reason != soldier.FailNotFound || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing hpa: %v, want a WriteErrors of app 0 not found", err)
	}
	hpa(t, env.Client, ns, "nope", 1, 5)
	if err := act2.Apply(ctx, nil); err != nil {
		t.Errorf("apply of nothing: %v", err)
	}
	h, _ = env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "nope", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 1 {
		t.Errorf("apply of nothing retried a failed change: min %d", *h.Spec.MinReplicas)
	}
	if err := act2.Reassert(ctx); err != nil {
		t.Errorf("reassert of the failed change: %v", err)
	}
	h, _ = env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "nope", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 3 {
		t.Errorf("the failed change was not reasserted: min %d", *h.Spec.MinReplicas)
	}
}

func TestActuatorApplyKeepsAConcurrentWritersFields(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "api", 2, false)
	hpa(t, env.Client, ns, "api", 1, 10)

	// Between the actuator's read and its write someone else updates another
	// field of the HPA: a server-side apply carries no resourceVersion, so
	// it is not refused, and owns only its own fields, so the other
	// writer's field stays.
	var raced atomic.Bool
	window := int32(42)
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && !raced.Swap(true) {
				hpas := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					h, err := hpas.Get(r.Context(), "api", metav1.GetOptions{})
					if err != nil {
						return err
					}
					// A spec field no controller writes (metadata is not safe:
					// the HPA controller's status updates may carry old metadata).
					h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &window}}
					_, err = hpas.Update(r.Context(), h, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					return nil, err
				}
			}
			return rt.RoundTrip(r)
		})
	})
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	act, _ := NewActuator(client, ActuatorConfig{Actuation: domains.ActuateHPABounds, HPAHeadroom: 0.5,
		Targets: []Target{target(0, ns, "api", domains.KindDeployment, 1, 40)}})
	if err := act.Apply(context.Background(), []soldier.Change{{App: 0, Replicas: 6}}); err != nil {
		t.Fatal(err)
	}
	if s := act.Stats(); s.Conflicts != 0 || s.Writes != 1 || !raced.Load() {
		t.Errorf("stats %+v (raced %v), want one write and no conflict", s, raced.Load())
	}
	h, _ := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(context.Background(), "api", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 6 || h.Spec.Behavior == nil || *h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 42 {
		t.Errorf("after the write: min %d, behavior %+v; want 6 and the other writer's behavior kept", *h.Spec.MinReplicas, h.Spec.Behavior)
	}
}

func TestActuatorRateLimitsWrites(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	var targets []Target
	var changes []soldier.Change
	for i := range 6 {
		name := fmt.Sprintf("web-%d", i)
		deployment(t, env.Client, ns, name, 1, false)
		targets = append(targets, target(i, ns, name, domains.KindDeployment, 1, 50))
		changes = append(changes, soldier.Change{App: i, Replicas: 2})
	}
	// 10 writes/s with a burst of 1: six writes take at least 0.5 s.
	act, _ := NewActuator(env.Client, ActuatorConfig{Actuation: domains.ActuateReplicas, Targets: targets, WritesPerSecond: 10, Burst: 1})
	t0 := time.Now()
	if err := act.Apply(context.Background(), changes); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took < 500*time.Millisecond {
		t.Errorf("6 writes at 10/s (burst 1) took %s, want >= 500ms", took)
	}
	// A cancelled context stops waiting for tokens.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range changes {
		changes[i].Replicas = 3
	}
	if err := act.Apply(ctx, changes); err == nil {
		t.Error("apply with a cancelled context succeeded")
	}
}

// The default write limits, through a client built as the daemons build
// theirs (Client), write 200 apps' HPAs within a 10 s tick, the first time
// recording each HPA's original too: 400 writes, 100 from the burst, 300
// more at 50/s. client-go's own default limit (5 requests/s) would have
// taken 160 s for the 800 requests.
func TestDefaultWriteLimitsWrite200AppsWithinATick(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	const n = 200
	var cfg domains.Config
	cfg.Defaults()
	client, err := Client(env.Kubeconfig, cfg.Kubernetes)
	if err != nil {
		t.Fatal(err)
	}
	// apply writes n fresh apps' HPAs (a write and a record each) at the
	// given limits and returns how long it took.
	apply := func(prefix string, perSecond float64, burst int) time.Duration {
		t.Helper()
		var targets []Target
		var changes []soldier.Change
		for i := range n {
			name := fmt.Sprintf("%s-%d", prefix, i)
			hpa(t, env.Client, ns, name, 1, 10)
			targets = append(targets, target(i, ns, name, domains.KindDeployment, 1, 50))
			changes = append(changes, soldier.Change{App: i, Replicas: 4})
		}
		act, _ := NewActuator(client, ActuatorConfig{Actuation: domains.ActuateHPABounds, Targets: targets, Lease: ns + "/l",
			WritesPerSecond: perSecond, Burst: burst})
		t0 := time.Now()
		if err := act.Apply(context.Background(), changes); err != nil {
			t.Fatal(err)
		}
		if s := act.Stats(); s.Writes != n || s.Records != n {
			t.Errorf("stats %+v, want %d writes and %d records", s, n, n)
		}
		return time.Since(t0)
	}
	took := apply("app", cfg.Kubernetes.WritesPerSecond, cfg.Kubernetes.WriteBurst)
	server := apply("free", 1e6, 10_000) // the API server's own time for as many requests, side by side
	t.Logf("%d HPA writes at the default limits took %s; unlimited %s", n, took, server)
	// 6 s of token waits (burst 100, then 50/s for the other 300 requests),
	// overlapping the server's time: at least 6 s, at most 6 s more than
	// the server takes unlimited. More means a limiter throttles harder
	// (client-go's default 5 QPS: 80 s; the former 10/s: 38 s).
	if took < 5500*time.Millisecond || took > server+9*time.Second {
		t.Errorf("%d writes and records took %s (the server alone %s), want 6 s of token waits at most 9 s over the server's time", 2*n, took, server)
	}
}
