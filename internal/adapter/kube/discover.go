package kube

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Discoverer watches the workloads a domain's Discover selects: a shared
// informer per namespace and kind, filtered by the label selector on the
// server. It reports the list of workloads (domains.FoundWorkload) once
// synced and again whenever it changes; domains.Config.WithDiscovered turns
// the list into the domain's apps. The annotation filter is applied there,
// not here.
type Discoverer struct {
	factories []informers.SharedInformerFactory
	deploys   []appslisters.DeploymentLister
	sets      []appslisters.StatefulSetLister
	synced    []cache.InformerSynced
	changed   chan struct{} // a workload was added, updated or deleted; holds one
}

// NewDiscoverer returns a Discoverer for d reading through client. It
// starts nothing.
func NewDiscoverer(client kubernetes.Interface, d domains.Discover) *Discoverer {
	x := &Discoverer{changed: make(chan struct{}, 1)}
	poke := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { x.poke() },
		UpdateFunc: func(_, _ any) { x.poke() },
		DeleteFunc: func(any) { x.poke() },
	}
	for _, ns := range d.Namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
			informers.WithTransform(DropManagedFields),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = d.Selector }))
		x.factories = append(x.factories, f)
		for _, k := range slices.Compact(slices.Sorted(slices.Values(d.Kinds))) {
			var inf cache.SharedIndexInformer
			if k == domains.KindStatefulSet {
				i := f.Apps().V1().StatefulSets()
				inf, x.sets = i.Informer(), append(x.sets, i.Lister())
			} else {
				i := f.Apps().V1().Deployments()
				inf, x.deploys = i.Informer(), append(x.deploys, i.Lister())
			}
			inf.AddEventHandler(poke)
			x.synced = append(x.synced, inf.HasSynced)
		}
	}
	return x
}

func (x *Discoverer) poke() {
	select {
	case x.changed <- struct{}{}:
	default:
	}
}

// Run runs the informers until ctx ends. Once they synced it calls found
// with the workloads, then again after events whenever the list differs
// from the last one reported; found runs on Run's goroutine, so a slow one
// coalesces the events behind it.
func (x *Discoverer) Run(ctx context.Context, found func([]domains.FoundWorkload)) {
	stop, ok := StartInformers(ctx, x.factories, x.synced)
	defer stop()
	if !ok {
		return
	}
	var last []domains.FoundWorkload
	first := true
	for {
		if now := x.List(); first || !reflect.DeepEqual(now, last) {
			first, last = false, now
			found(now)
		}
		select {
		case <-ctx.Done():
			return
		case <-x.changed:
		}
	}
}

// List is the workloads in the informers' caches, in namespace, name and
// kind order.
func (x *Discoverer) List() []domains.FoundWorkload {
	var out []domains.FoundWorkload
	for _, l := range x.deploys {
		ds, _ := l.List(labels.Everything())
		for _, d := range ds {
			out = append(out, Found(domains.KindDeployment, d.ObjectMeta, d.Spec.Selector, &d.Spec.Template.Spec))
		}
	}
	for _, l := range x.sets {
		ss, _ := l.List(labels.Everything())
		for _, s := range ss {
			out = append(out, Found(domains.KindStatefulSet, s.ObjectMeta, s.Spec.Selector, &s.Spec.Template.Spec))
		}
	}
	slices.SortFunc(out, func(a, b domains.FoundWorkload) int {
		return strings.Compare(a.Namespace+"/"+a.Name+"/"+string(a.Kind), b.Namespace+"/"+b.Name+"/"+string(b.Kind))
	})
	return out
}

// Found describes a workload for discovery: its pod selector's match
// labels as "k=v[,k=v]" sorted by key ("" with match expressions) and its
// pods' CPU request in cores, summed over the template's containers.
func Found(kind domains.WorkloadKind, meta metav1.ObjectMeta, sel *metav1.LabelSelector, pod *corev1.PodSpec) domains.FoundWorkload {
	w := domains.FoundWorkload{Kind: kind, Namespace: meta.Namespace, Name: meta.Name,
		Labels: maps.Clone(meta.Labels), Annotations: maps.Clone(meta.Annotations)}
	if sel != nil && len(sel.MatchExpressions) == 0 && len(sel.MatchLabels) > 0 {
		var terms []string
		for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
			terms = append(terms, k+"="+sel.MatchLabels[k])
		}
		w.PodSelector = strings.Join(terms, ",")
	}
	w.CPURequest = PodRequestCores(pod)
	return w
}

// Owns says whether pod p is a pod of a workload the Discoverer holds: its
// controller is one of them (a StatefulSet), or a ReplicaSet of one (a
// Deployment's, named "<deployment>-<pod-template-hash>"), and the
// workload's pod selector matches it. The Commander counts such pods as the
// domains' own, not as pods Regiment does not manage, without asking for
// the discover selector's labels on the pods. False before the informers
// synced.
func (x *Discoverer) Owns(p *corev1.Pod) bool {
	owner := metav1.GetControllerOf(p)
	if owner == nil {
		return false
	}
	var sel *metav1.LabelSelector
	switch owner.Kind {
	case "ReplicaSet":
		hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
		name, ok := strings.CutSuffix(owner.Name, "-"+hash)
		if hash == "" || !ok {
			return false
		}
		for _, l := range x.deploys {
			if d, err := l.Deployments(p.Namespace).Get(name); err == nil {
				sel = d.Spec.Selector
				break
			}
		}
	case "StatefulSet":
		for _, l := range x.sets {
			if s, err := l.StatefulSets(p.Namespace).Get(owner.Name); err == nil {
				sel = s.Spec.Selector
				break
			}
		}
	}
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(p.Labels))
}

// PodRequestCores is the sum of spec's containers' CPU requests, in cores.
func PodRequestCores(spec *corev1.PodSpec) float64 {
	total := 0.0
	for _, c := range spec.Containers {
		q := c.Resources.Requests[corev1.ResourceCPU]
		total += float64(q.MilliValue()) / 1000
	}
	return total
}

// StartInformers starts factories and waits until synced all report
// synced: ok false when ctx ended first. stop shuts the factories down;
// the caller calls it either way (the Discoverer's and pool.Watcher's Run).
func StartInformers(ctx context.Context, factories []informers.SharedInformerFactory, synced []cache.InformerSynced) (stop func(), ok bool) {
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	stop = func() {
		for _, f := range factories {
			f.Shutdown()
		}
	}
	return stop, cache.WaitForCacheSync(ctx.Done(), synced...)
}

// Informers are the Discoverer's informer factories, to start and shut
// down, and its informers' synced functions, for a caller that runs it
// among its own informers (the Commander's pool.Watcher).
func (d *Discoverer) Informers() ([]informers.SharedInformerFactory, []cache.InformerSynced) {
	return d.factories, d.synced
}
