package pool

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/domains"
)

// poolNode registers a node of pool with cpu cores: one kwok runs (Ready)
// when fake, else one no kubelet ever reports for (not Ready: coming);
// tainted for this test only, and with taints besides.
func poolNode(t *testing.T, c kubernetes.Interface, name, pool, cpu string, fake bool, taints ...corev1.Taint) {
	t.Helper()
	n := testenv.FakeNode(name, cpu)
	n.Labels["regiment-test-pool"] = pool
	// Other tests' pods tolerate kwok's taint; none tolerates this one, so
	// only this test's pods, bound by name, run here.
	n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "regiment-test-pool", Value: pool, Effect: corev1.TaintEffectNoSchedule})
	n.Spec.Taints = append(n.Spec.Taints, taints...)
	if !fake {
		delete(n.Annotations, testenv.FakeNodeAnnotation)
	}
	if _, err := c.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// boundPod creates a pod on node requesting cpu, labelled app=app, owned by
// owner when not nil.
func boundPod(t *testing.T, c kubernetes.Interface, ns, name, node, app, cpu string, owner *metav1.OwnerReference) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{NodeName: node,
			Tolerations: []corev1.Toleration{{Key: testenv.FakeNodeTaint, Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/app",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	if _, err := c.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The pool's capacity follows its nodes: a kwok node is ready, a node no
// kubelet runs is coming; a DaemonSet's pod and a pod not Regiment's
// subtract their requests, a pod of a Regiment app does not; a node added
// adds its cores and a node removed takes its own and its pods' away.
func TestWatcherFollowsNodes(t *testing.T) {
	env := testenv.RequireFull(t)
	ns := testenv.Namespace(t, env.Client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := ns
	a, b, c := "pool-a-"+ns, "pool-b-"+ns, "pool-c-"+ns
	poolNode(t, env.Client, a, pool, "8", true)
	poolNode(t, env.Client, b, pool, "4", false)
	poolNode(t, env.Client, "other-"+ns, "other-"+pool, "16", true)

	// A DaemonSet that runs nowhere owns the agent pod, as its controller
	// would: the garbage collector keeps a pod whose owner exists.
	ds, err := env.Client.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent-template"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent-template"}},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"no-such-node": "x"},
					Containers: []corev1.Container{{Name: "c", Image: "example.invalid/agent"}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	boundPod(t, env.Client, ns, "agent-a", a, "agent", "500m", &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID})
	boundPod(t, env.Client, ns, "cron-a", a, "cron", "1", nil)
	boundPod(t, env.Client, ns, "web-a", a, "web", "2", nil)
	boundPod(t, env.Client, ns, "elsewhere", "other-"+ns, "cron", "3", nil)

	cfg := &domains.Config{Kubernetes: domains.Kubernetes{Namespace: ns},
		Domains: []domains.Domain{{Name: "shop", AppSets: []domains.AppSet{{Name: "web", Count: 1}}}}}
	cfg.Defaults()
	w, err := NewWatcher(env.Client, nil, Config{NodeSelector: "regiment-test-pool=" + pool, Managed: ManagedPods(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(ctx, func(err error) { t.Error(err) }); close(done) }()
	defer func() { cancel(); <-done }()

	expect := func(what string, want Size) {
		t.Helper()
		var got Size
		testenv.Eventually(t, 30*time.Second, func() (bool, string) {
			got, _ = w.Size()
			return got == want, fmt.Sprintf("%s: capacity %+v, want %+v", what, got, want)
		})
	}
	expect("a ready, b coming, the agent's and cron's requests reserved", Size{Cores: 10.5, ReadyCores: 8, PendingCores: 4,
		ReservedCores: 1.5, ManagedCores: 2, Nodes: 1, PendingNodes: 1})
	poolNode(t, env.Client, c, pool, "8", true)
	expect("c added", Size{Cores: 18.5, ReadyCores: 16, PendingCores: 4, ReservedCores: 1.5, ManagedCores: 2, Nodes: 2, PendingNodes: 1})
	if err := env.Client.CoreV1().Nodes().Delete(ctx, a, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("a removed with its pods", Size{Cores: 12, ReadyCores: 8, PendingCores: 4, Nodes: 1, PendingNodes: 1})
	if ready, pending, ok := w.NodeCounts(); !ok || ready != 1 || pending != 1 {
		t.Errorf("NodeCounts = %d, %d, %v; want 1 ready, 1 pending (the Commander's cluster.nodes, cluster.pending_nodes)", ready, pending, ok)
	}
	if cores, ok := w.CapacityCores(); ok {
		t.Errorf("CapacityCores = %g, true without a max; want false (the Commander shares capacity_cores)", cores)
	}
}

// A Karpenter NodePool's cpu limit caps the pool named by its nodes'
// karpenter.sh/nodepool label; pool_max_cores caps it further when lower.
func TestWatcherCappedByKarpenterLimit(t *testing.T) {
	env := testenv.RequireFull(t)
	ns := testenv.Namespace(t, env.Client)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	nodePoolCRD(t, dyn)
	np := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
		"metadata": map[string]any{"name": "np-" + ns}, "spec": map[string]any{"limits": map[string]any{"cpu": "12"}}}}
	if _, err := dyn.Resource(NodePools).Create(ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dyn.Resource(NodePools).Delete(context.Background(), "np-"+ns, metav1.DeleteOptions{}) })
	for _, name := range []string{"kp-a-" + ns, "kp-b-" + ns} {
		n := testenv.FakeNode(name, "8")
		n.Labels[LabelKarpenterNodePool] = "np-" + ns
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "regiment-test-pool", Value: ns, Effect: corev1.TaintEffectNoSchedule})
		if _, err := env.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	for _, tt := range []struct {
		maxCores, want float64
	}{{0, 12}, {10, 10}} {
		w, err := NewWatcher(env.Client, dyn, Config{NodeSelector: LabelKarpenterNodePool + "=np-" + ns, MaxCores: tt.maxCores,
			KarpenterEvery: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { w.Run(wctx, func(err error) { t.Error(err) }); close(done) }()
		want := Size{Cores: tt.want, ReadyCores: 16, Nodes: 2, MaxCores: tt.want, Capped: true}
		testenv.Eventually(t, 30*time.Second, func() (bool, string) {
			got, _ := w.Size()
			return got == want, fmt.Sprintf("pool_max_cores %g: capacity %+v, want %+v", tt.maxCores, got, want)
		})
		if cores, ok := w.CapacityCores(); !ok || cores != tt.want {
			t.Errorf("pool_max_cores %g: CapacityCores = %g, %v; want the max %g to share", tt.maxCores, cores, ok, tt.want)
		}
		stop()
		<-done
	}
}

// nodePoolCRD installs a minimal karpenter.sh/v1 NodePool CRD and waits
// until it is served.
func nodePoolCRD(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "nodepools.karpenter.sh"},
		"spec": map[string]any{"group": "karpenter.sh", "scope": "Cluster",
			"names": map[string]any{"kind": "NodePool", "plural": "nodepools", "singular": "nodepool", "listKind": "NodePoolList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
	}}
	if _, err := dyn.Resource(crds).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		_, err := dyn.Resource(NodePools).List(context.Background(), metav1.ListOptions{})
		return err == nil, fmt.Sprintf("nodepools not served: %v", err)
	})
}
