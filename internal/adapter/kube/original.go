package kube

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Labels and annotations that let Regiment give back what it took: before
// its first write to an object it records the object's own spec there.
const (
	// LabelManagedBy names the domain whose Soldier writes the object; the
	// Reverter and `regiment kube restore` list objects by it.
	LabelManagedBy = "regiment.io/managed-by"
	// AnnotationOriginal holds the spec the object had before Regiment's
	// first write, as JSON (OriginalSpec): {"minReplicas":2,"maxReplicas":10}
	// on an HPA, {"replicas":3} on a Deployment or StatefulSet. Once there
	// it is never overwritten: it is the team's value, not a previous
	// Regiment one.
	AnnotationOriginal = "regiment.io/original"
)

// regimentLabels and regimentAnnotations are every key Regiment puts on an
// object; a restore removes exactly these (a team's own regiment.io/ keys,
// such as discovery's, stay).
var (
	regimentLabels      = []string{LabelManaged, LabelManagedBy}
	regimentAnnotations = []string{AnnotationLease, AnnotationSafeBounds, AnnotationOriginal}
)

// ObjectKind is the kind of object Regiment writes.
type ObjectKind string

// The kinds Regiment writes: an HPA in hpa-bounds actuation, the workload
// in replicas actuation.
const (
	KindHPA         ObjectKind = "HorizontalPodAutoscaler"
	KindDeployment  ObjectKind = "Deployment"
	KindStatefulSet ObjectKind = "StatefulSet"
)

// OriginalSpec is the part of an object's spec Regiment writes: an HPA's
// minReplicas and maxReplicas, or a workload's replicas (counts). A nil
// field is one the object did not set; it stays unset on restore.
type OriginalSpec struct {
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`
	Replicas    *int32 `json:"replicas,omitempty"`
}

// EncodeOriginal is the value of AnnotationOriginal for spec.
func EncodeOriginal(spec OriginalSpec) string {
	b, _ := json.Marshal(spec) // three *int32: cannot fail
	return string(b)
}

// DecodeOriginal parses AnnotationOriginal of an object of kind. An HPA's
// needs maxReplicas >= 1 and 0 <= minReplicas <= maxReplicas and no
// replicas; a workload's needs replicas >= 0 and no bounds.
func DecodeOriginal(kind ObjectKind, s string) (OriginalSpec, error) {
	var o OriginalSpec
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return OriginalSpec{}, fmt.Errorf("original spec %q: %w", s, err)
	}
	bad := func(want string) (OriginalSpec, error) {
		return OriginalSpec{}, fmt.Errorf("original spec %q of a %s: want %s", s, kind, want)
	}
	switch kind {
	case KindHPA:
		if o.Replicas != nil || o.MaxReplicas == nil || *o.MaxReplicas < 1 ||
			(o.MinReplicas != nil && (*o.MinReplicas < 0 || *o.MinReplicas > *o.MaxReplicas)) {
			return bad(`{"minReplicas":N,"maxReplicas":M} with 0 <= N <= M and M >= 1`)
		}
	case KindDeployment, KindStatefulSet:
		if o.Replicas == nil || *o.Replicas < 0 || o.MinReplicas != nil || o.MaxReplicas != nil {
			return bad(`{"replicas":N} with N >= 0`)
		}
	default:
		return OriginalSpec{}, fmt.Errorf("original spec of unknown kind %q", kind)
	}
	return o, nil
}

// Marks are an object's labels and annotations (read only).
type Marks struct {
	Labels, Annotations map[string]string
}

// RecordOriginal says which labels and annotations to add to an object with
// marks and spec before Regiment's first write for domain: the original
// (unless one is there already: it is never overwritten), the domain's
// LabelManagedBy and lease (AnnotationLease, "namespace/name"). An HPA an
// older Regiment bounded (LabelManaged, valid AnnotationSafeBounds) holds
// Regiment's bounds, not its team's: its safe bounds are recorded as its
// original, the closest known. Nil maps: nothing to add.
func RecordOriginal(m Marks, spec OriginalSpec, domain, lease string) (labels, annotations map[string]string) {
	if m.Labels[LabelManagedBy] != domain {
		labels = map[string]string{LabelManagedBy: domain}
	}
	add := map[string]string{}
	if _, ok := m.Annotations[AnnotationOriginal]; !ok {
		if lo, hi, err := parseSafeBounds(m.Annotations[AnnotationSafeBounds]); err == nil && m.Labels[LabelManaged] == "true" {
			spec = OriginalSpec{MinReplicas: &lo, MaxReplicas: &hi}
		}
		add[AnnotationOriginal] = EncodeOriginal(spec)
	}
	if lease != "" && m.Annotations[AnnotationLease] != lease {
		add[AnnotationLease] = lease
	}
	if len(add) > 0 {
		annotations = add
	}
	return labels, annotations
}

// RestoreSource is where a restore's spec comes from.
type RestoreSource string

const (
	FromOriginal   RestoreSource = "original"    // AnnotationOriginal
	FromSafeBounds RestoreSource = "safe-bounds" // AnnotationSafeBounds: an HPA bounded by an older Regiment
	FromNothing    RestoreSource = "none"        // no record: only Regiment's marks go
)

// RestorePlan is what restoring one object does.
type RestorePlan struct {
	From RestoreSource
	// Spec is the spec to restore (From original or safe-bounds); Write is
	// true when it differs from the object's.
	Spec  OriginalSpec
	Write bool
	// DropLabels and DropAnnotations are Regiment's keys on the object, to
	// remove (sorted as regimentLabels, regimentAnnotations).
	DropLabels, DropAnnotations []string
}

// Changes reports whether the plan writes anything.
func (p RestorePlan) Changes() bool {
	return p.Write || len(p.DropLabels) > 0 || len(p.DropAnnotations) > 0
}

// PlanRestore decides how to give an object of kind with marks and current
// spec back to its team. With AnnotationOriginal the original spec is
// restored and every Regiment label and annotation removed. Without it, an
// HPA an older Regiment bounded (LabelManaged, AnnotationSafeBounds) goes to
// its safe bounds, the app's configured min and max; its marks are removed
// only when keepLegacyMarks is false (the Reverter keeps them, so that the
// Soldier's next write takes the HPA back under the same safe bounds).
// Otherwise the spec is left alone and only Regiment's marks go. A bad
// annotation is an error: nothing is guessed.
func PlanRestore(kind ObjectKind, m Marks, cur OriginalSpec, keepLegacyMarks bool) (RestorePlan, error) {
	var p RestorePlan
	switch s, hasOriginal := m.Annotations[AnnotationOriginal]; {
	case hasOriginal:
		o, err := DecodeOriginal(kind, s)
		if err != nil {
			return RestorePlan{}, err
		}
		p.From, p.Spec = FromOriginal, o
	case kind == KindHPA && m.Labels[LabelManaged] == "true" && m.Annotations[AnnotationSafeBounds] != "":
		lo, hi, err := parseSafeBounds(m.Annotations[AnnotationSafeBounds])
		if err != nil {
			return RestorePlan{}, err
		}
		p.From, p.Spec = FromSafeBounds, OriginalSpec{MinReplicas: &lo, MaxReplicas: &hi}
		if keepLegacyMarks {
			p.Write = !sameSpec(p.Spec, cur)
			return p, nil
		}
	default:
		p.From = FromNothing
	}
	p.Write = p.From != FromNothing && !sameSpec(p.Spec, cur)
	for _, k := range regimentLabels {
		if _, ok := m.Labels[k]; ok {
			p.DropLabels = append(p.DropLabels, k)
		}
	}
	for _, k := range regimentAnnotations {
		if _, ok := m.Annotations[k]; ok {
			p.DropAnnotations = append(p.DropAnnotations, k)
		}
	}
	return p, nil
}

// sameSpec reports whether a and b set the same fields to the same values.
func sameSpec(a, b OriginalSpec) bool {
	eq := func(x, y *int32) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.MinReplicas, b.MinReplicas) && eq(a.MaxReplicas, b.MaxReplicas) && eq(a.Replicas, b.Replicas)
}
