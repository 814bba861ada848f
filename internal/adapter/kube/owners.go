package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// Owner is another controller that sets what Regiment would write for an
// app: an HPA or a KEDA ScaledObject targeting its workload, or a field
// manager owning the written field. The zero Owner is none.
type Owner struct {
	Kind  string // OwnerHPA, OwnerKEDA or OwnerFieldManager
	Name  string // the HPA's or ScaledObject's name, or the field manager
	Field string // OwnerFieldManager only: the field it owns, ".spec.replicas"
}

// Kinds of Owner.
const (
	OwnerHPA          = "hpa"
	OwnerKEDA         = "keda"
	OwnerFieldManager = "field-manager"
)

// Found reports whether o is an owner.
func (o Owner) Found() bool { return o.Kind != "" }

// String is "hpa/web", "keda/web" or "field-manager/argocd-controller:.spec.replicas";
// "" when none.
func (o Owner) String() string {
	switch {
	case !o.Found():
		return ""
	case o.Field != "":
		return o.Kind + "/" + o.Name + ":" + o.Field
	}
	return o.Kind + "/" + o.Name
}

// ScaleTarget is what a KEDA ScaledObject (or an HPA) scales: a workload
// of the object's namespace.
type ScaleTarget struct {
	Name       string // the ScaledObject's or HPA's own name
	Kind       string // the target's kind; "" is Deployment (KEDA's default)
	TargetName string
	APIVersion string // the target's apiVersion; "" is apps/v1
}

// Ownership is what ForeignOwner decides from, for one app.
type Ownership struct {
	Actuation domains.Actuation
	Workload  domains.WorkloadRef
	// HPAs are the HPAs of the workload's namespace; ScaledObjects its KEDA
	// ScaledObjects (none when KEDA is not installed).
	HPAs          []ScaleTarget
	ScaledObjects []ScaleTarget
	// Fields are the managedFields of the object Regiment writes: the
	// workload (replicas) or the app's HPA (hpa-bounds).
	Fields []metav1.ManagedFieldsEntry
	// Claimed says Regiment has written the field on this object before
	// (in this process). An imperative writer (operation Update) owning a
	// field Regiment claimed took it from Regiment.
	Claimed bool
}

// ForeignOwner says whether another controller than Regiment sets the
// app's replicas, and which; the first found of, in order:
//
//   - replicas: an HPA targeting the workload (the HPA controller writes
//     spec.replicas); hpa-bounds: an HPA other than the app's targeting it
//     (two HPAs on one workload fight);
//   - a KEDA ScaledObject targeting the workload (it runs its own HPA);
//   - a field manager other than Regiment owning the written field
//     (spec.replicas in replicas; the HPA's spec.minReplicas or
//     spec.maxReplicas in hpa-bounds) that Regiment does not own too: an
//     applier (operation Apply: Argo CD or Flux with server-side apply,
//     kubectl apply --server-side) always, since it re-asserts its value and
//     Regiment never forces over it; an imperative writer (operation
//     Update: kubectl scale or edit, a client-side apply, a controller's
//     PUT) once Regiment claimed the field, since it then took the field
//     from Regiment (Claimed, or an apply entry of Regiment's on the
//     object). Before the first claim an imperative writer is the
//     object's creator or an old hand edit, and Regiment takes the field
//     over (adoption).
//
// A co-owner of a field Regiment owns set the same value (server-side
// apply's agreement) and is not a foreign owner. In hpa-bounds the
// kube-controller-manager's HPA controller writing the workload's
// spec.replicas is expected: the workload's fields are not looked at. Pure.
func ForeignOwner(in Ownership) Owner {
	w := in.Workload
	for _, h := range sortedTargets(in.HPAs) {
		if targets(h, w) && (in.Actuation == domains.ActuateReplicas || h.Name != w.HPA) {
			return Owner{Kind: OwnerHPA, Name: h.Name}
		}
	}
	for _, so := range sortedTargets(in.ScaledObjects) {
		if targets(so, w) {
			return Owner{Kind: OwnerKEDA, Name: so.Name}
		}
	}
	paths := [][]string{{"spec", "replicas"}}
	if in.Actuation == domains.ActuateHPABounds {
		paths = [][]string{{"spec", "minReplicas"}, {"spec", "maxReplicas"}}
	}
	// Regiment's apply of HPA bounds also owns its label and annotations,
	// which outlive the bounds taken from it. (An update by Regiment, as a
	// record of the original spec, is no claim of the field.)
	claimed := in.Claimed || slices.ContainsFunc(in.Fields, func(e metav1.ManagedFieldsEntry) bool {
		return isRegiment(e.Manager) && e.Operation == metav1.ManagedFieldsOperationApply
	})
	for _, p := range paths {
		owners := fieldOwners(in.Fields, p)
		if slices.ContainsFunc(owners, func(e metav1.ManagedFieldsEntry) bool { return isRegiment(e.Manager) }) {
			continue // co-owners agreed on Regiment's value
		}
		for _, e := range owners {
			if e.Operation == metav1.ManagedFieldsOperationApply || claimed {
				return Owner{Kind: OwnerFieldManager, Name: e.Manager, Field: "." + strings.Join(p, ".")}
			}
		}
	}
	return Owner{}
}

// isRegiment reports whether a field manager is Regiment's ("regiment",
// "regiment-soldier", ...).
func isRegiment(manager string) bool { return strings.HasPrefix(manager, fieldManager) }

// targets reports whether t scales the workload w (same kind and name, in
// the apps API group).
func targets(t ScaleTarget, w domains.WorkloadRef) bool {
	kind := cmpOr(t.Kind, string(domains.KindDeployment))
	gv, err := schema.ParseGroupVersion(cmpOr(t.APIVersion, "apps/v1"))
	return err == nil && gv.Group == "apps" && kind == string(cmpOr(w.Kind, domains.KindDeployment)) && t.TargetName == w.Name
}

func cmpOr[T ~string](a, b T) T {
	if a == "" {
		return b
	}
	return a
}

func sortedTargets(ts []ScaleTarget) []ScaleTarget {
	return slices.SortedFunc(slices.Values(ts), func(a, b ScaleTarget) int { return strings.Compare(a.Name, b.Name) })
}

// fieldOwners are the entries of fields owning path, ordered by manager.
// An entry whose FieldsV1 cannot be read owns nothing.
func fieldOwners(fields []metav1.ManagedFieldsEntry, path []string) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range fields {
		if e.FieldsV1 != nil && ownsPath(e.FieldsV1.Raw, path) {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b metav1.ManagedFieldsEntry) int { return strings.Compare(a.Manager, b.Manager) })
	return out
}

// ownsPath reports whether a FieldsV1 set ({"f:spec":{"f:replicas":{}}})
// holds path.
func ownsPath(raw []byte, path []string) bool {
	var set map[string]json.RawMessage
	if json.Unmarshal(raw, &set) != nil {
		return false
	}
	for i, p := range path {
		sub, ok := set["f:"+p]
		if !ok {
			return false
		}
		if i == len(path)-1 {
			return true
		}
		set = nil
		if json.Unmarshal(sub, &set) != nil {
			return false
		}
	}
	return false
}

// trimFields keeps of fields the entries owning one of paths, each reduced
// to those paths, and Regiment's entries (reduced alike, maybe to
// nothing): what ForeignOwner reads, at a fraction of an informer cache's
// memory.
func trimFields(fields []metav1.ManagedFieldsEntry, paths ...[]string) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range fields {
		var owned []string
		if e.FieldsV1 != nil {
			for _, p := range paths {
				if ownsPath(e.FieldsV1.Raw, p) {
					owned = append(owned, fieldsJSON(p))
				}
			}
		}
		if len(owned) == 0 && !isRegiment(e.Manager) {
			continue
		}
		raw := mergeFieldsJSON(owned)
		out = append(out, metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation, Subresource: e.Subresource,
			APIVersion: e.APIVersion, FieldsType: e.FieldsType, FieldsV1: &metav1.FieldsV1{Raw: raw}})
	}
	return out
}

// fieldsJSON is the FieldsV1 set of one path, {"f:a":{"f:b":{}}}.
func fieldsJSON(path []string) string {
	s := "{}"
	for i := len(path) - 1; i >= 0; i-- {
		s = fmt.Sprintf(`{"f:%s":%s}`, path[i], s)
	}
	return s
}

// mergeFieldsJSON merges FieldsV1 sets of paths under "f:spec" (all of
// trimFields' paths are) into one.
func mergeFieldsJSON(sets []string) []byte {
	spec := map[string]any{}
	for _, s := range sets {
		var m map[string]map[string]any
		if json.Unmarshal([]byte(s), &m) == nil {
			for k, v := range m["f:spec"] {
				spec[k] = v
			}
		}
	}
	if len(spec) == 0 {
		return []byte("{}")
	}
	b, _ := json.Marshal(map[string]any{"f:spec": spec})
	return b
}

// hpaTarget is the ScaleTarget of an HPA.
func hpaTarget(h *autoscalingv2.HorizontalPodAutoscaler) ScaleTarget {
	r := h.Spec.ScaleTargetRef
	return ScaleTarget{Name: h.Name, Kind: r.Kind, TargetName: r.Name, APIVersion: r.APIVersion}
}

// Claims are the objects Regiment wrote the replicas (or HPA bounds) of, in
// this process: an imperative writer owning such a field took it from
// Regiment (ForeignOwner). Safe for concurrent use; a nil Claims holds none.
type Claims struct {
	mu sync.Mutex
	m  map[string]bool
}

// claimKey names the object an actuation writes for t.
func claimKey(a domains.Actuation, t *Target) string {
	if a == domains.ActuateHPABounds {
		return "HorizontalPodAutoscaler/" + t.Namespace + "/" + t.HPA
	}
	return string(t.Kind) + "/" + t.Namespace + "/" + t.Name
}

func (c *Claims) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]bool{}
	}
	c.m[key] = true
}

func (c *Claims) has(key string) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// ForeignOwnerError is a change not written: another controller sets the
// app's replicas. It wraps ErrForeignOwner.
type ForeignOwnerError struct {
	App   string // "domain/app"
	Owner Owner
}

// ErrForeignOwner is wrapped by every ForeignOwnerError.
var ErrForeignOwner = errors.New("another controller sets the app's replicas")

func (e *ForeignOwnerError) Error() string {
	return fmt.Sprintf("kube: %s left alone: owned by %s", e.App, e.Owner)
}

func (e *ForeignOwnerError) Unwrap() error { return ErrForeignOwner }

// Ownership gathers, from the informer caches, what ForeignOwner decides
// from for t: the HPAs and ScaledObjects of its namespace naming its workload, and the
// managedFields of the object written (trimmed to the written fields). It
// fails before the caches' first sync. Safe for concurrent use with Observe.
func (o *Observer) Ownership(t *Target) (Ownership, error) {
	in := Ownership{Actuation: o.cfg.Actuation, Workload: t.WorkloadRef, Claimed: o.cfg.Claims.has(claimKey(o.cfg.Actuation, t))}
	if !o.Synced() {
		return in, fmt.Errorf("kube: ownership of %s/%s: informer caches not synced", t.Namespace, t.Name)
	}
	hs, err := o.hpas[t.Namespace].HorizontalPodAutoscalers(t.Namespace).List(labels.Everything())
	if err != nil {
		return in, fmt.Errorf("kube: ownership of %s/%s: list hpas: %w", t.Namespace, t.Name, err)
	}
	for _, h := range hs {
		if h.Spec.ScaleTargetRef.Name == t.Name { // only these can target it: O(HPAs) per app, no more kept
			in.HPAs = append(in.HPAs, hpaTarget(h))
		}
		if o.cfg.Actuation == domains.ActuateHPABounds && h.Name == t.HPA {
			in.Fields = h.ManagedFields
		}
	}
	sos, err := o.keda.targets(t.Namespace)
	if err != nil {
		return in, fmt.Errorf("kube: ownership of %s/%s: %w", t.Namespace, t.Name, err)
	}
	for _, so := range sos {
		if so.TargetName == t.Name {
			in.ScaledObjects = append(in.ScaledObjects, so)
		}
	}
	if o.cfg.Actuation == domains.ActuateReplicas {
		var obj metav1.Object
		if t.Kind == domains.KindStatefulSet {
			obj, err = o.sets[t.Namespace].StatefulSets(t.Namespace).Get(t.Name)
		} else {
			obj, err = o.deploys[t.Namespace].Deployments(t.Namespace).Get(t.Name)
		}
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return in, fmt.Errorf("kube: ownership of %s/%s: %w", t.Namespace, t.Name, err)
		default:
			in.Fields = obj.GetManagedFields()
		}
	}
	return in, nil
}

// observeOwner sets the app's foreign owner, if any (not in recommend
// mode, where Regiment writes nothing).
func (o *Observer) observeOwner(t *Target, a *soldier.AppObservation, st *AppStatus) error {
	a.ForeignOwner, st.Owner = "", Owner{}
	if o.cfg.Recommend {
		return nil
	}
	in, err := o.Ownership(t)
	if err != nil {
		return err
	}
	st.Owner = ForeignOwner(in)
	a.ForeignOwner = st.Owner.String()
	return nil
}

// namespaces are the namespaces the Observer watches.
func (o *Observer) namespaces() []string { return slices.Sorted(maps.Keys(o.pods)) }

// Paths of the fields Regiment writes.
var (
	replicasPath = []string{"spec", "replicas"}
	minPath      = []string{"spec", "minReplicas"}
	maxPath      = []string{"spec", "maxReplicas"}
)

// trimToOwnership is the Observer's informer transform: workloads and HPAs
// keep the managedFields ForeignOwner reads (trimFields), everything else
// none.
func trimToOwnership(obj any) (any, error) {
	switch x := obj.(type) {
	case *appsv1.Deployment:
		x.ManagedFields = trimFields(x.ManagedFields, replicasPath)
	case *appsv1.StatefulSet:
		x.ManagedFields = trimFields(x.ManagedFields, replicasPath)
	case *autoscalingv2.HorizontalPodAutoscaler:
		x.ManagedFields = trimFields(x.ManagedFields, minPath, maxPath)
	default:
		return DropManagedFields(obj)
	}
	return obj, nil
}

// scaledObjects are KEDA's ScaledObjects.
var scaledObjects = schema.GroupVersionResource{Group: "keda.sh", Version: "v1alpha1", Resource: "scaledobjects"}

// kedaWatch watches KEDA ScaledObjects per namespace, when the cluster
// serves them and the Soldier may list them.
type kedaWatch struct {
	factories []dynamicinformer.DynamicSharedInformerFactory
	listers   map[string]cache.GenericNamespaceLister
	err       error // why ScaledObjects are not watched; nil when they are or dyn is nil
}

// start starts the informers, if dyn is set, the CRD served and the list
// allowed, and returns their HasSynced.
func (k *kedaWatch) start(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, nss []string) []cache.InformerSynced {
	if dyn == nil {
		return nil
	}
	res, err := client.Discovery().ServerResourcesForGroupVersion(scaledObjects.GroupVersion().String())
	if err != nil || !slices.ContainsFunc(res.APIResources, func(r metav1.APIResource) bool { return r.Name == scaledObjects.Resource }) {
		k.err = fmt.Errorf("keda scaledobjects not served: %v", err)
		return nil
	}
	var synced []cache.InformerSynced
	k.listers = map[string]cache.GenericNamespaceLister{}
	for _, ns := range nss {
		// A forbidden list would keep the informer from ever syncing.
		if _, err := dyn.Resource(scaledObjects).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			k.err, k.listers = fmt.Errorf("list keda scaledobjects in %s: %w", ns, err), nil
			return nil
		}
	}
	for _, ns := range nss {
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
		inf := f.ForResource(scaledObjects)
		k.listers[ns] = inf.Lister().ByNamespace(ns)
		synced = append(synced, inf.Informer().HasSynced)
		f.Start(ctx.Done())
		k.factories = append(k.factories, f)
	}
	return synced
}

func (k *kedaWatch) shutdown() {
	for _, f := range k.factories {
		f.Shutdown()
	}
}

// targets are the ScaledObjects of ns and what they scale; none when not
// watched.
func (k *kedaWatch) targets(ns string) ([]ScaleTarget, error) {
	l := k.listers[ns]
	if l == nil {
		return nil, nil
	}
	objs, err := l.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list keda scaledobjects: %w", err)
	}
	var out []ScaleTarget
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "scaleTargetRef")
		out = append(out, ScaleTarget{Name: u.GetName(), Kind: ref["kind"], TargetName: ref["name"], APIVersion: ref["apiVersion"]})
	}
	return out, nil
}

// Owners are the apps ("domain/app") another controller scaled at the last
// Observe, with their owners. Not concurrently with Observe or SetTargets.
func (o *Observer) Owners() map[string]Owner {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]Owner{}
	for i, st := range o.status {
		if st.Owner.Found() && i < len(o.cfg.Targets) {
			out[o.cfg.Targets[i].App.Name] = st.Owner
		}
	}
	return out
}
