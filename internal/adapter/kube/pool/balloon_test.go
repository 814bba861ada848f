package pool

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/domains"
)

func TestBalloonReplicas(t *testing.T) {
	for _, tt := range []struct {
		name            string
		plan, used, pod float64
		want            int32
	}{
		{"no plan", 0, 10, 4, 0},
		{"plan below use", 8, 10, 4, 0},
		{"plan at use", 10, 10, 4, 0},
		{"a part of a pod is a pod", 10.5, 10, 4, 1},
		{"whole pods", 26, 10, 4, 4},
		{"a float error is not a pod", 10 + 3*0.1, 10, 0.1, 3},
		{"bounded", 1e9, 0, 1, MaxBalloonPods},
		{"NaN plan", math.NaN(), 0, 1, 0},
		{"no pod size", 20, 0, 0, 0},
	} {
		if got := BalloonReplicas(tt.plan, tt.used, tt.pod); got != tt.want {
			t.Errorf("%s: BalloonReplicas(%v, %v, %v) = %d, want %d", tt.name, tt.plan, tt.used, tt.pod, got, tt.want)
		}
	}
}

// priorityClass creates a cluster-wide PriorityClass of value for the test.
func priorityClass(t *testing.T, c kubernetes.Interface, name string, value int32) {
	t.Helper()
	never := corev1.PreemptNever
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, PreemptionPolicy: &never}
	if _, err := c.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// poolTolerations let a pod onto the test pool's nodes (poolNode).
func poolTolerations(pool string) []corev1.Toleration {
	return []corev1.Toleration{{Key: testenv.FakeNodeTaint, Operator: corev1.TolerationOpExists},
		{Key: "regiment-test-pool", Operator: corev1.TolerationOpEqual, Value: pool, Effect: corev1.TaintEffectNoSchedule}}
}

// balloonPods counts the namespace's balloon pods bound to a node and all.
func balloonPods(t *testing.T, c kubernetes.Interface, ns string) (bound, all int) {
	t.Helper()
	ps, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: LabelBalloon + "=true"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		all++
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	return bound, all
}

// The capacity plan held on a real pool (kube-scheduler, kwok nodes, the
// Deployment controller): balloons fill the planned cores Regiment's apps
// do not use, count neither as reserved nor as managed, and yield at once
// to a real pod that needs their room (preemption), after which the next
// plan asks for fewer. An unchanged count changes nothing; a Deployment
// deleted by hand is put back.
func TestBalloonsHoldThePlanAndYieldToPods(t *testing.T) {
	env := testenv.RequireFull(t)
	ns := testenv.Namespace(t, env.Client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := ns
	poolNode(t, env.Client, "bl-a-"+ns, pool, "4", true)
	poolNode(t, env.Client, "bl-b-"+ns, pool, "4", true)
	boundPod(t, env.Client, ns, "web-0", "bl-a-"+ns, "web", "1", nil)
	pc := "balloon-" + ns
	priorityClass(t, env.Client, pc, -1000)

	cfg := &domains.Config{Kubernetes: domains.Kubernetes{Namespace: ns},
		Domains: []domains.Domain{{Name: "shop", AppSets: []domains.AppSet{{Name: "web", Count: 1}}}}}
	cfg.Defaults()
	w, err := NewWatcher(env.Client, nil, Config{NodeSelector: "regiment-test-pool=" + pool, Managed: ManagedPods(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(ctx, nil); close(done) }()
	defer func() { cancel(); <-done }()
	b, err := NewBalloons(env.Client, BalloonConfig{Namespace: ns, NodeSelector: map[string]string{"regiment-test-pool": pool},
		PodCores: 2, PriorityClass: pc, Image: domains.DefaultBalloonImage, Tolerations: poolTolerations(pool)}, w.ManagedCores)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() (bool, string) { return w.Synced(), "pool watcher not synced" })

	// Plan 7 cores, 1 in use: ceil(6 / 2) = 3 balloons, all on the pool.
	if err := b.SetCapacityTarget(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if b.Replicas() != 3 {
		t.Fatalf("balloons %d, want 3", b.Replicas())
	}
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		bound, all := balloonPods(t, env.Client, ns)
		c, _ := w.Size()
		return bound == 3 && all == 3 && c.Cores == 8 && c.ManagedCores == 1,
			fmt.Sprintf("balloon pods %d bound of %d; capacity %+v (want 3 of 3, cores 8, managed 1)", bound, all, c)
	})
	d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, BalloonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.PriorityClassName; got != pc {
		t.Errorf("balloon priority class %q, want %q", got, pc)
	}
	gen := d.Generation
	if err := b.SetCapacityTarget(ctx, 7); err != nil { // the same count: a no-op apply
		t.Fatal(err)
	}

	// A real pod of 3 cores fits only where a balloon was: it preempts one.
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"regiment-test-pool": pool}, Tolerations: poolTolerations(pool),
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/app",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}}}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		got, err := env.Client.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.Spec.NodeName != "", "the real pod was not scheduled over a balloon"
	})
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		bound, _ := balloonPods(t, env.Client, ns)
		return bound == 2, fmt.Sprintf("%d balloon pods bound, want 2: one preempted, its replacement pending", bound)
	})
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		c, _ := w.Size()
		return c.ManagedCores == 4, fmt.Sprintf("managed cores %v, want 4", c.ManagedCores)
	})
	// The same plan now needs ceil((7 - 4) / 2) = 2 balloons.
	if err := b.SetCapacityTarget(ctx, 7); err != nil {
		t.Fatal(err)
	}
	d, err = env.Client.AppsV1().Deployments(ns).Get(ctx, BalloonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 2 || d.Generation != gen+1 {
		t.Errorf("balloon replicas %d at generation %d, want 2 at %d (one change since the unchanged plan)", *d.Spec.Replicas, d.Generation, gen+1)
	}
	// Deleted by hand, it is back at the next plan.
	if err := env.Client.AppsV1().Deployments(ns).Delete(ctx, BalloonName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetCapacityTarget(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, BalloonName, metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 2 {
		t.Errorf("the deleted balloon Deployment was not put back at 2 replicas: %v", err)
	}
}

// A pool whose nodes carry a taint only the apps tolerate (a dedicated
// pool, dedicated=apps:NoSchedule) takes balloons only through
// balloon_tolerations: with entries that do not match (another value,
// another key) they stay Pending, unschedulable for an untolerated taint
// (the pool's other taints are tolerated); with the matching entry they
// are bound to the pool's node.
func TestBalloonsTolerateATaintedPool(t *testing.T) {
	env := testenv.RequireFull(t)
	ns := testenv.Namespace(t, env.Client)
	ctx := context.Background()
	pool := ns
	poolNode(t, env.Client, "bt-"+ns, pool, "4", true, corev1.Taint{Key: "dedicated", Value: "apps", Effect: corev1.TaintEffectNoSchedule})
	pc := "balloon-" + ns
	priorityClass(t, env.Client, pc, -1000)
	hold := func(balloonTolerations ...domains.Toleration) {
		t.Helper()
		b, err := NewBalloons(env.Client, BalloonConfig{Namespace: ns, NodeSelector: map[string]string{"regiment-test-pool": pool},
			PodCores: 1, PriorityClass: pc, Image: domains.DefaultBalloonImage, Tolerations: append(poolTolerations(pool), Tolerations(balloonTolerations)...)},
			func() (float64, bool) { return 0, true })
		if err != nil {
			t.Fatal(err)
		}
		if err := b.SetCapacityTarget(ctx, 2); err != nil { // 2 pods of 1 core
			t.Fatal(err)
		}
	}

	hold(domains.Toleration{Key: "dedicated", Value: "batch", Effect: "NoSchedule"}, domains.Toleration{Key: "gpu"})
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		ps, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelBalloon + "=true"})
		if err != nil {
			return false, err.Error()
		}
		refused, why := 0, ""
		for _, p := range ps.Items {
			why += fmt.Sprintf("%s: %+v; ", p.Name, p.Status.Conditions)
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable && strings.Contains(c.Message, "untolerated taint") {
					refused++
				}
			}
		}
		bound, all := balloonPods(t, env.Client, ns)
		return refused == 2 && bound == 0 && all == 2,
			fmt.Sprintf("%d balloon pods, %d bound, %d refused for an untolerated taint (want 2, 0, 2): %s", all, bound, refused, why)
	})

	hold(domains.Toleration{Key: "dedicated", Value: "apps", Effect: "NoSchedule"})
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		bound, all := balloonPods(t, env.Client, ns)
		return bound == 2 && all == 2, fmt.Sprintf("%d of %d balloon pods bound, want 2 of 2 on the tainted pool", bound, all)
	})
	d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, BalloonName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps", Effect: corev1.TaintEffectNoSchedule}
	if tols := d.Spec.Template.Spec.Tolerations; !slices.Contains(tols, want) {
		t.Errorf("balloon tolerations %+v, want %+v among them", tols, want)
	}
}

// Balloons write nothing unless their PriorityClass exists with a negative
// value: a balloon every pod could not preempt would take real pods' nodes.
func TestBalloonsNeedANegativePriorityClass(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	ctx := context.Background()
	used := func() (float64, bool) { return 0, true }
	zero := "zero-" + ns
	priorityClass(t, env.Client, zero, 0)
	for _, tt := range []struct{ class, want string }{
		{"missing-" + ns, "not found"},
		{zero, "must be negative"},
	} {
		b, err := NewBalloons(env.Client, BalloonConfig{Namespace: ns, PodCores: 1, PriorityClass: tt.class, Image: "pause"}, used)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.SetCapacityTarget(ctx, 10); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("priority class %s: error %v, want one saying %q", tt.class, err, tt.want)
		}
		if b.Replicas() != -1 {
			t.Errorf("priority class %s: %d balloons applied", tt.class, b.Replicas())
		}
	}
	if _, err := env.Client.AppsV1().Deployments(ns).Get(ctx, BalloonName, metav1.GetOptions{}); err == nil {
		t.Error("a balloon Deployment was created without a fit priority class")
	}
}

func TestNewBalloonsRefusesBadConfig(t *testing.T) {
	used := func() (float64, bool) { return 0, true }
	for _, cfg := range []BalloonConfig{
		{PodCores: 1, PriorityClass: "p", Image: "i"},
		{Namespace: "n", PodCores: 0, PriorityClass: "p", Image: "i"},
		{Namespace: "n", PodCores: math.NaN(), PriorityClass: "p", Image: "i"},
		{Namespace: "n", PodCores: 1, Image: "i"},
	} {
		if _, err := NewBalloons(nil, cfg, used); err == nil {
			t.Errorf("NewBalloons(%+v) accepted", cfg)
		}
	}
}

// Owned by the Commander's controller (found from its pod), the balloon
// Deployment goes with it: the garbage collector deletes it when the owner
// is deleted, as at uninstall.
func TestBalloonsGoWithTheirOwner(t *testing.T) {
	env := testenv.RequireFull(t)
	ns := testenv.Namespace(t, env.Client)
	ctx := context.Background()
	pc := "balloon-" + ns
	priorityClass(t, env.Client, pc, -1000)
	// A stand-in for the Commander's StatefulSet and its pod.
	owner, err := env.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "commander"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "commander-0", OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1",
		Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &yes}}},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"no-such-node": "x"}, Containers: []corev1.Container{{Name: "c", Image: "example.invalid/commander"}}}}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ref, err := ControllerOf(ctx, env.Client, ns, "commander-0")
	if err != nil || ref == nil || ref.UID != owner.UID {
		t.Fatalf("ControllerOf = %+v, %v; want the ConfigMap %s", ref, err, owner.UID)
	}
	if none, err := ControllerOf(ctx, env.Client, ns, "no-such-pod"); err == nil || none != nil {
		t.Errorf("ControllerOf of a missing pod = %+v, %v; want an error", none, err)
	}
	b, err := NewBalloons(env.Client, BalloonConfig{Namespace: ns, PodCores: 1, PriorityClass: pc, Image: domains.DefaultBalloonImage,
		Owner: ref}, func() (float64, bool) { return 0, true })
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetCapacityTarget(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.CoreV1().ConfigMaps(ns).Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		_, err := env.Client.AppsV1().Deployments(ns).Get(ctx, BalloonName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("the balloon Deployment outlived its owner: %v", err)
	})
}
