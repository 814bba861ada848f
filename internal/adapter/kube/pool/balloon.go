package pool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	acappsv1 "k8s.io/client-go/applyconfigurations/apps/v1"
	accorev1 "k8s.io/client-go/applyconfigurations/core/v1"
	acmetav1 "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube"
)

// The balloon Deployment holds the Commander's capacity plan on a
// Kubernetes pool: placeholder pods of the lowest priority that request the
// planned cores not yet in use, so that the node autoscaler (Karpenter,
// cluster-autoscaler) provisions their nodes early, and that any real pod
// preempts at once. It is the cluster's form of Sim.SetCapacityTarget.
const (
	// BalloonName names the Deployment, in the lease namespace.
	BalloonName = "regiment-balloon"
	// LabelBalloon marks its pods: the pool counts them neither as
	// reserved by others nor as Regiment's apps.
	LabelBalloon = "regiment.io/balloon"
	// MaxBalloonPods bounds the Deployment's replicas whatever the plan.
	MaxBalloonPods = 10_000
)

// BalloonConfig places the balloon pods.
type BalloonConfig struct {
	Namespace     string            // the Deployment's (the lease namespace)
	NodeSelector  map[string]string // the pool's nodes (pool_node_selector)
	PodCores      float64           // CPU request (and limit) of one pod, cores; > 0
	PriorityClass string            // must exist with a negative value
	Image         string            // a pause image
	Tolerations   []corev1.Toleration
	// Owner, when set, owns the Deployment: when it is deleted (the
	// chart's Commander StatefulSet, at uninstall) the garbage collector
	// deletes the balloons with it. In Namespace.
	Owner *metav1.OwnerReference
}

// BalloonReplicas is how many balloon pods of podCores hold a plan of
// planCores when Regiment's apps request usedCores on the pool's nodes now:
// ceil((planCores - usedCores) / podCores) within [0, MaxBalloonPods]. A
// plan of 0 (none) or below the use holds nothing. Pure.
func BalloonReplicas(planCores, usedCores, podCores float64) int32 {
	if !(podCores > 0) || !(planCores > usedCores) {
		return 0 // NaN fails both comparisons
	}
	n := math.Ceil((planCores-usedCores)/podCores - 1e-9)
	return int32(min(n, MaxBalloonPods))
}

// Balloons is a commander.Pool on Kubernetes: SetCapacityTarget sizes the
// balloon Deployment to the plan less what Regiment's apps use on the pool
// now (Watcher's ManagedCores). It applies the whole Deployment every
// time, level-triggered: a Deployment deleted or scaled by hand is put back
// at the next tick, and an unchanged one is a no-op apply the API server
// does not store. It writes nothing until the priority class is found with a negative
// value: a balloon of default priority would not be preempted and would
// take real pods' nodes. Safe for concurrent use.
type Balloons struct {
	client kubernetes.Interface
	cfg    BalloonConfig
	used   func() (cores float64, ok bool)

	mu      sync.Mutex
	checked bool  // the priority class was found fit
	last    int32 // replicas last applied; -1: none yet
}

// NewBalloons returns the pool's balloons; used gives the cores Regiment's
// apps request on the pool's nodes now (false while unknown).
func NewBalloons(client kubernetes.Interface, cfg BalloonConfig, used func() (float64, bool)) (*Balloons, error) {
	switch {
	case cfg.Namespace == "":
		return nil, errors.New("pool: balloons: no namespace")
	case !(cfg.PodCores > 0):
		return nil, fmt.Errorf("pool: balloons: pod cores %v, want > 0", cfg.PodCores)
	case cfg.PriorityClass == "" || cfg.Image == "":
		return nil, errors.New("pool: balloons: a priority class and an image are needed")
	}
	return &Balloons{client: client, cfg: cfg, used: used, last: -1}, nil
}

// SetCapacityTarget implements commander.Pool: it holds cores of the pool,
// ready or on their way, with balloon pods for the part Regiment's apps do
// not use. While the pool's use is unknown it does nothing.
func (b *Balloons) SetCapacityTarget(ctx context.Context, cores float64) error {
	used, ok := b.used()
	if !ok {
		return nil
	}
	n := BalloonReplicas(cores, used, b.cfg.PodCores)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.checked {
		if err := b.checkPriorityClass(ctx); err != nil {
			return err
		}
		b.checked = true
	}
	if _, err := b.client.AppsV1().Deployments(b.cfg.Namespace).Apply(ctx, b.deployment(n), kube.ApplyOptions()); err != nil {
		return fmt.Errorf("pool: balloons: apply %d pods of %v cores: %w", n, b.cfg.PodCores, err)
	}
	b.last = n
	return nil
}

// Replicas is the balloon pods last applied; -1 before the first.
func (b *Balloons) Replicas() int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

func (b *Balloons) checkPriorityClass(ctx context.Context) error {
	pc, err := b.client.SchedulingV1().PriorityClasses().Get(ctx, b.cfg.PriorityClass, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("pool: balloons: priority class %s: %w (the chart, or deploy/components/balloons, creates it; balloons are held until it exists)", b.cfg.PriorityClass, err)
	}
	if pc.Value >= 0 {
		return fmt.Errorf("pool: balloons: priority class %s has value %d: it must be negative, below every real pod's, so that any pod preempts a balloon", pc.Name, pc.Value)
	}
	return nil
}

// deployment is the balloon Deployment at n replicas: pause containers
// requesting (and limited to) PodCores, on the pool's nodes, of the
// balloon priority class, under Pod Security "restricted".
func (b *Balloons) deployment(n int32) *acappsv1.DeploymentApplyConfiguration {
	lbl := map[string]string{LabelBalloon: "true", "app.kubernetes.io/name": BalloonName, "app.kubernetes.io/managed-by": "regiment"}
	cpu := *resource.NewMilliQuantity(int64(math.Ceil(b.cfg.PodCores*1000-1e-6)), resource.DecimalSI)
	res := corev1.ResourceList{corev1.ResourceCPU: cpu}
	var tols []*accorev1.TolerationApplyConfiguration
	for _, t := range b.cfg.Tolerations {
		tc := accorev1.Toleration().WithKey(t.Key).WithOperator(t.Operator).WithValue(t.Value).WithEffect(t.Effect)
		tols = append(tols, tc)
	}
	pod := accorev1.PodSpec().
		WithPriorityClassName(b.cfg.PriorityClass).
		WithNodeSelector(b.cfg.NodeSelector).
		WithTolerations(tols...).
		WithTerminationGracePeriodSeconds(0).
		WithAutomountServiceAccountToken(false).
		WithEnableServiceLinks(false).
		WithSecurityContext(accorev1.PodSecurityContext().WithRunAsNonRoot(true).WithRunAsUser(65535).
			WithSeccompProfile(accorev1.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(accorev1.Container().WithName("pause").WithImage(b.cfg.Image).
			WithResources(accorev1.ResourceRequirements().WithRequests(res).WithLimits(res)).
			WithSecurityContext(accorev1.SecurityContext().WithAllowPrivilegeEscalation(false).WithReadOnlyRootFilesystem(true).
				WithCapabilities(accorev1.Capabilities().WithDrop("ALL"))))
	d := acappsv1.Deployment(BalloonName, b.cfg.Namespace).WithLabels(lbl)
	if o := b.cfg.Owner; o != nil {
		d.WithOwnerReferences(acmetav1.OwnerReference().WithAPIVersion(o.APIVersion).WithKind(o.Kind).WithName(o.Name).WithUID(o.UID))
	}
	return d.WithSpec(acappsv1.DeploymentSpec().
		WithReplicas(n).
		WithSelector(acmetav1.LabelSelector().WithMatchLabels(map[string]string{LabelBalloon: "true"})).
		WithTemplate(accorev1.PodTemplateSpec().WithLabels(lbl).WithSpec(pod)))
}

// ControllerOf is the controller of pod name in namespace (a Commander's
// own StatefulSet, found from its pod), as an owner for the balloons; nil
// when the pod has none.
func ControllerOf(ctx context.Context, client kubernetes.Interface, namespace, name string) (*metav1.OwnerReference, error) {
	p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("pool: the controller of pod %s/%s: %w", namespace, name, err)
	}
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return nil, nil
	}
	return &metav1.OwnerReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}, nil
}

// isBalloon says whether p is one of Regiment's balloon pods.
func isBalloon(p *corev1.Pod) bool { return p.Labels[LabelBalloon] == "true" }

// SelectorMap turns an equality selector ("k=v[,k=v]", as validated) into
// a node selector.
func SelectorMap(s string) (map[string]string, error) {
	m, err := labels.ConvertSelectorToLabelsMap(s)
	if err != nil {
		return nil, fmt.Errorf("pool: selector %q: %w", s, err)
	}
	return m, nil
}
