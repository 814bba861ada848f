package kube

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/regimentd/regiment/domains"
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
//     from Regiment. Before the first claim an imperative writer is the
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
	claimed := in.Claimed
	if in.Actuation == domains.ActuateHPABounds {
		// Regiment's label and annotations on the HPA outlive its bounds.
		claimed = claimed || slices.ContainsFunc(in.Fields, func(e metav1.ManagedFieldsEntry) bool { return isRegiment(e.Manager) })
	}
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
