package pool

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/core/domains"
)

// LabelKarpenterNodePool names the Karpenter NodePool a node belongs to.
const LabelKarpenterNodePool = "karpenter.sh/nodepool"

// NodePools is the Karpenter NodePool resource, karpenter.sh/v1.
var NodePools = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}

// Config configures a Watcher.
type Config struct {
	// NodeSelector selects the pool's nodes, equality only: "k=v[,k=v]".
	NodeSelector string
	// MaxCores is the most node cores the pool may grow to, as the
	// operator knows it (a cluster-autoscaler's max nodes x node cores);
	// 0: none.
	MaxCores float64
	// Managed says whether a pod is of an app Regiment sizes.
	Managed func(*corev1.Pod) bool
	// Discover are the domains' discover blocks: a pod of a workload one
	// selects is managed too (kube.Discoverer.Owns), whatever its labels.
	Discover []domains.Discover
	// KarpenterEvery is how often the NodePools' limits are read. Default 1m.
	KarpenterEvery time.Duration
}

// Watcher follows the contested pool's size (SizeOf) with a Node
// informer filtered by the pool's selector and a Pod informer over pods
// bound to nodes, indexed by node; it reads the CPU limit of the pool's
// Karpenter NodePools (those named by its nodes' karpenter.sh/nodepool
// label, or by its selector) with the dynamic client, where the CRD
// exists. It implements commander.Capacity. Run starts it; Size is
// safe for concurrent use.
type Watcher struct {
	cfg     Config
	dyn     dynamic.Interface // nil: no Karpenter limits
	nodeSel labels.Selector
	factory []informers.SharedInformerFactory
	nodes   corelisters.NodeLister
	pods    cache.Indexer
	synced  []cache.InformerSynced
	owners  []*kube.Discoverer // of cfg.Discover

	mu        sync.Mutex
	karpenter float64 // summed NodePool cpu limits; 0: none known
}

const podsByNode = "node"

// NewWatcher returns a Watcher reading through client and, for
// Karpenter limits, dyn (nil: none). It starts nothing.
func NewWatcher(client kubernetes.Interface, dyn dynamic.Interface, cfg Config) (*Watcher, error) {
	sel, err := labels.Parse(cfg.NodeSelector)
	if err != nil {
		return nil, fmt.Errorf("pool: node selector %q: %w", cfg.NodeSelector, err)
	}
	if cfg.KarpenterEvery <= 0 {
		cfg.KarpenterEvery = time.Minute
	}
	if cfg.Managed == nil {
		cfg.Managed = func(*corev1.Pod) bool { return false }
	}
	w := &Watcher{cfg: cfg, dyn: dyn, nodeSel: sel}
	nf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(kube.DropManagedFields),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = cfg.NodeSelector }))
	pf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(kube.DropManagedFields),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }))
	ni, pi := nf.Core().V1().Nodes(), pf.Core().V1().Pods()
	if err := pi.Informer().AddIndexers(cache.Indexers{podsByNode: func(obj any) ([]string, error) {
		return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
	}}); err != nil {
		return nil, fmt.Errorf("pool: pods index: %w", err)
	}
	w.factory = []informers.SharedInformerFactory{nf, pf}
	w.nodes, w.pods = ni.Lister(), pi.Informer().GetIndexer()
	w.synced = []cache.InformerSynced{ni.Informer().HasSynced, pi.Informer().HasSynced}
	for _, d := range cfg.Discover {
		x := kube.NewDiscoverer(client, d)
		factories, synced := x.Informers()
		w.owners = append(w.owners, x)
		w.factory = append(w.factory, factories...)
		w.synced = append(w.synced, synced...)
	}
	return w, nil
}

// Run runs the informers and reads the Karpenter limits every
// KarpenterEvery until ctx ends; onErr, if not nil, sees failed reads.
func (w *Watcher) Run(ctx context.Context, onErr func(error)) {
	stop, ok := kube.StartInformers(ctx, w.factory, w.synced)
	defer stop()
	if !ok {
		return
	}
	t := time.NewTicker(w.cfg.KarpenterEvery)
	defer t.Stop()
	for {
		if err := w.readKarpenter(ctx); err != nil && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Synced reports whether the informers have synced once.
func (w *Watcher) Synced() bool {
	for _, s := range w.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Size is the pool's size now (see SizeOf); false
// before the informers synced.
func (w *Watcher) Size() (Size, bool) {
	if !w.Synced() {
		return Size{}, false
	}
	nodes, _ := w.nodes.List(w.nodeSel)
	var pn []Node
	var pp []Pod
	for _, n := range nodes {
		pn = append(pn, Node{Name: n.Name, AllocatableCores: cores(n.Status.Allocatable[corev1.ResourceCPU]),
			Ready: nodeReady(n), Unschedulable: n.Spec.Unschedulable})
		objs, _ := w.pods.ByIndex(podsByNode, n.Name)
		for _, o := range objs {
			p := o.(*corev1.Pod)
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			pp = append(pp, Pod{Node: n.Name, RequestCores: kube.PodRequestCores(&p.Spec), DaemonSet: ownedByDaemonSet(p),
				Managed: w.managed(p), Balloon: isBalloon(p)})
		}
	}
	w.mu.Lock()
	maxCores := w.karpenter
	w.mu.Unlock()
	if w.cfg.MaxCores > 0 && (maxCores == 0 || w.cfg.MaxCores < maxCores) {
		maxCores = w.cfg.MaxCores
	}
	return SizeOf(pn, pp, maxCores), true
}

// managed says whether p is of an app Regiment sizes: Config.Managed,
// or a pod of a discovered workload.
func (w *Watcher) managed(p *corev1.Pod) bool {
	if w.cfg.Managed(p) {
		return true
	}
	for _, x := range w.owners {
		if x.Owns(p) {
			return true
		}
	}
	return false
}

// ManagedCores is Size's ManagedCores, what Balloons need not hold;
// false before the informers synced.
func (w *Watcher) ManagedCores() (float64, bool) {
	c, ok := w.Size()
	return c.ManagedCores, ok
}

// CapacityCores is what the Commander shares out (commander.Capacity): the
// most node cores the pool may grow to less what others request on its
// nodes, MaxCores - ReservedCores; false before the informers synced or
// without a max. The nodes there now do not bound it: domains grow onto
// the nodes the autoscaler adds for their pods (and for the capacity
// plan's balloons). Sharing out only the nodes there now squeezed every
// domain's growth to its overage cap, at 1.5x the breaches on the seed-scale
// training days (docs/experiments.md).
func (w *Watcher) CapacityCores() (float64, bool) {
	c, ok := w.Size()
	if !ok || c.MaxCores <= 0 {
		return 0, false
	}
	return max(c.MaxCores-c.ReservedCores, 0), true
}

// NodeCounts is the pool's ready, schedulable nodes and those not ready
// yet (Size), for the Commander's observation (commander.NodeCounter);
// ok is false until the informers have synced.
func (w *Watcher) NodeCounts() (ready, pending int, ok bool) {
	c, ok := w.Size()
	return c.Nodes, c.PendingNodes, ok
}

// readKarpenter sums the cpu limits of the pool's NodePools; a NodePool
// without one, or none found, leaves no Karpenter cap.
func (w *Watcher) readKarpenter(ctx context.Context) error {
	if w.dyn == nil {
		return nil
	}
	names := map[string]bool{}
	for _, term := range strings.Split(w.cfg.NodeSelector, ",") {
		if k, v, ok := strings.Cut(term, "="); ok && strings.TrimSpace(k) == LabelKarpenterNodePool {
			names[strings.TrimSpace(strings.TrimPrefix(v, "="))] = true
		}
	}
	nodes, _ := w.nodes.List(w.nodeSel)
	for _, n := range nodes {
		if v := n.Labels[LabelKarpenterNodePool]; v != "" {
			names[v] = true
		}
	}
	total := 0.0
	for _, name := range slices.Sorted(maps.Keys(names)) {
		np, err := w.dyn.Resource(NodePools).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) { // no such NodePool, or no Karpenter CRD
			continue
		}
		if err != nil {
			return fmt.Errorf("pool: read nodepool %s: %w", name, err)
		}
		limit, found, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "limits", "cpu")
		q, perr := resource.ParseQuantity(fmt.Sprint(limit)) // "1000", 1000 or "1000m"
		if !found || perr != nil {
			total = math.Inf(1) // no cpu limit: this NodePool may grow without bound
			continue
		}
		total += cores(q)
	}
	if math.IsInf(total, 1) {
		total = 0
	}
	w.mu.Lock()
	w.karpenter = total
	w.mu.Unlock()
	return nil
}

// ManagedPods says whether a pod is of an app of cfg: it matches the pod
// selector of a listed app in the app's namespace, or it is in a discover
// namespace of a domain and carries that discover block's selector labels
// itself. Watcher also counts the pods of discovered workloads
// (Config.Discover), whatever their labels.
func ManagedPods(cfg *domains.Config) func(*corev1.Pod) bool {
	type sel struct {
		ns  string
		sel labels.Selector
	}
	var sels []sel
	for _, a := range cfg.Apps() {
		r := cfg.Workload(a)
		if s, err := labels.Parse(r.Selector); err == nil {
			sels = append(sels, sel{r.Namespace, s})
		}
	}
	for _, d := range cfg.Domains {
		if d.Discover == nil || d.Discover.Selector == "" {
			continue
		}
		if s, err := labels.Parse(d.Discover.Selector); err == nil {
			for _, ns := range d.Discover.Namespaces {
				sels = append(sels, sel{ns, s})
			}
		}
	}
	return func(p *corev1.Pod) bool {
		for _, s := range sels {
			if p.Namespace == s.ns && s.sel.Matches(labels.Set(p.Labels)) {
				return true
			}
		}
		return false
	}
}

func cores(q resource.Quantity) float64 { return float64(q.MilliValue()) / 1000 }

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ownedByDaemonSet(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
