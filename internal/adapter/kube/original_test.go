package kube

import (
	"reflect"
	"strings"
	"testing"
)

func i32(n int32) *int32 { return &n }

func TestOriginalRoundTrips(t *testing.T) {
	for _, c := range []struct {
		name string
		kind ObjectKind
		spec OriginalSpec
		want string
	}{
		{"hpa bounds", KindHPA, OriginalSpec{MinReplicas: i32(2), MaxReplicas: i32(10)}, `{"minReplicas":2,"maxReplicas":10}`},
		{"hpa without a min keeps it unset", KindHPA, OriginalSpec{MaxReplicas: i32(4)}, `{"maxReplicas":4}`},
		{"deployment replicas", KindDeployment, OriginalSpec{Replicas: i32(3)}, `{"replicas":3}`},
		{"a workload scaled to zero", KindStatefulSet, OriginalSpec{Replicas: i32(0)}, `{"replicas":0}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := EncodeOriginal(c.spec)
			if s != c.want {
				t.Errorf("encoded %s, want %s", s, c.want)
			}
			back, err := DecodeOriginal(c.kind, s)
			if err != nil || !reflect.DeepEqual(back, c.spec) {
				t.Errorf("decoded %+v, %v; want %+v", back, err, c.spec)
			}
		})
	}
}

func TestDecodeOriginalRefusesWhatItCannotRestore(t *testing.T) {
	for _, c := range []struct {
		name string
		kind ObjectKind
		s    string
	}{
		{"not json", KindHPA, "2-10"},
		{"unknown field", KindHPA, `{"minReplicas":2,"maxReplicas":10,"min":1}`},
		{"hpa without max", KindHPA, `{"minReplicas":2}`},
		{"hpa min above max", KindHPA, `{"minReplicas":12,"maxReplicas":10}`},
		{"hpa negative min", KindHPA, `{"minReplicas":-1,"maxReplicas":10}`},
		{"hpa with replicas", KindHPA, `{"maxReplicas":10,"replicas":3}`},
		{"workload without replicas", KindDeployment, `{}`},
		{"workload negative replicas", KindDeployment, `{"replicas":-2}`},
		{"workload with bounds", KindStatefulSet, `{"replicas":2,"maxReplicas":3}`},
		{"unknown kind", ObjectKind("Job"), `{"replicas":2}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if o, err := DecodeOriginal(c.kind, c.s); err == nil {
				t.Errorf("DecodeOriginal(%s, %q) = %+v, want an error", c.kind, c.s, o)
			}
		})
	}
}

func TestRecordOriginal(t *testing.T) {
	spec := OriginalSpec{MinReplicas: i32(2), MaxReplicas: i32(10)}
	const lease = "regiment/regiment-soldier-pay"
	for _, c := range []struct {
		name              string
		marks             Marks
		labels, annotated map[string]string
	}{
		{"first write records everything", Marks{},
			map[string]string{LabelManagedBy: "pay"},
			map[string]string{AnnotationOriginal: `{"minReplicas":2,"maxReplicas":10}`, AnnotationLease: lease}},
		{"an original there is never overwritten",
			Marks{Labels: map[string]string{LabelManagedBy: "pay"}, Annotations: map[string]string{AnnotationOriginal: `{"minReplicas":1,"maxReplicas":3}`, AnnotationLease: lease}},
			nil, nil},
		{"an original there stays; the lease is set",
			Marks{Labels: map[string]string{LabelManagedBy: "pay"}, Annotations: map[string]string{AnnotationOriginal: `{"minReplicas":1,"maxReplicas":3}`}},
			nil, map[string]string{AnnotationLease: lease}},
		{"another domain's label is taken over, its original kept",
			Marks{Labels: map[string]string{LabelManagedBy: "old"}, Annotations: map[string]string{AnnotationOriginal: `{"minReplicas":1,"maxReplicas":3}`, AnnotationLease: lease}},
			map[string]string{LabelManagedBy: "pay"}, nil},
		{"an older Regiment's hpa records its safe bounds, not Regiment's bounds",
			Marks{Labels: map[string]string{LabelManaged: "true"}, Annotations: map[string]string{AnnotationSafeBounds: "1-40", AnnotationLease: lease}},
			map[string]string{LabelManagedBy: "pay"}, map[string]string{AnnotationOriginal: `{"minReplicas":1,"maxReplicas":40}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, a := RecordOriginal(c.marks, spec, "pay", lease)
			if !reflect.DeepEqual(l, c.labels) || !reflect.DeepEqual(a, c.annotated) {
				t.Errorf("labels %v annotations %v, want %v %v", l, a, c.labels, c.annotated)
			}
		})
	}
}

func TestPlanRestore(t *testing.T) {
	all := Marks{
		Labels:      map[string]string{LabelManaged: "true", LabelManagedBy: "pay", "app": "api", "regiment.io/domain": "pay"},
		Annotations: map[string]string{AnnotationLease: "r/l", AnnotationSafeBounds: "2-40", AnnotationOriginal: `{"minReplicas":3,"maxReplicas":9}`, domainsAnnotationHPA: "api"},
	}
	legacy := Marks{Labels: map[string]string{LabelManaged: "true"}, Annotations: map[string]string{AnnotationLease: "r/l", AnnotationSafeBounds: "2-40"}}
	bounded := OriginalSpec{MinReplicas: i32(8), MaxReplicas: i32(12)}
	for _, c := range []struct {
		name       string
		kind       ObjectKind
		marks      Marks
		cur        OriginalSpec
		keepLegacy bool
		want       RestorePlan
		err        string
	}{
		{"the original is restored and only Regiment's keys go", KindHPA, all, bounded, true,
			RestorePlan{From: FromOriginal, Spec: OriginalSpec{MinReplicas: i32(3), MaxReplicas: i32(9)}, Write: true,
				DropLabels: []string{LabelManaged, LabelManagedBy}, DropAnnotations: []string{AnnotationLease, AnnotationSafeBounds, AnnotationOriginal}}, ""},
		{"an object at its original only loses the marks", KindHPA, all, OriginalSpec{MinReplicas: i32(3), MaxReplicas: i32(9)}, false,
			RestorePlan{From: FromOriginal, Spec: OriginalSpec{MinReplicas: i32(3), MaxReplicas: i32(9)},
				DropLabels: []string{LabelManaged, LabelManagedBy}, DropAnnotations: []string{AnnotationLease, AnnotationSafeBounds, AnnotationOriginal}}, ""},
		{"replicas mode restores the workload's replicas", KindDeployment,
			Marks{Labels: map[string]string{LabelManagedBy: "pay"}, Annotations: map[string]string{AnnotationOriginal: `{"replicas":3}`, AnnotationLease: "r/l"}},
			OriginalSpec{Replicas: i32(17)}, true,
			RestorePlan{From: FromOriginal, Spec: OriginalSpec{Replicas: i32(3)}, Write: true,
				DropLabels: []string{LabelManagedBy}, DropAnnotations: []string{AnnotationLease, AnnotationOriginal}}, ""},
		{"an older Regiment's hpa goes to its safe bounds, marks kept for the Reverter", KindHPA, legacy, bounded, true,
			RestorePlan{From: FromSafeBounds, Spec: OriginalSpec{MinReplicas: i32(2), MaxReplicas: i32(40)}, Write: true}, ""},
		{"an older Regiment's hpa loses its marks on uninstall", KindHPA, legacy, bounded, false,
			RestorePlan{From: FromSafeBounds, Spec: OriginalSpec{MinReplicas: i32(2), MaxReplicas: i32(40)}, Write: true,
				DropLabels: []string{LabelManaged}, DropAnnotations: []string{AnnotationLease, AnnotationSafeBounds}}, ""},
		{"no record: the spec is left alone", KindDeployment, Marks{Labels: map[string]string{LabelManagedBy: "pay"}}, OriginalSpec{Replicas: i32(4)}, true,
			RestorePlan{From: FromNothing, DropLabels: []string{LabelManagedBy}}, ""},
		{"an unmarked object: nothing to do", KindHPA, Marks{Labels: map[string]string{"app": "x"}}, bounded, false,
			RestorePlan{From: FromNothing}, ""},
		{"a bad original is reported, not guessed at", KindHPA,
			Marks{Annotations: map[string]string{AnnotationOriginal: `{"replicas":3}`}}, bounded, true, RestorePlan{}, "original spec"},
		{"bad safe bounds are reported", KindHPA,
			Marks{Labels: map[string]string{LabelManaged: "true"}, Annotations: map[string]string{AnnotationSafeBounds: "lots"}}, bounded, true, RestorePlan{}, "safe bounds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PlanRestore(c.kind, c.marks, c.cur, c.keepLegacy)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one about %q", err, c.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(p, c.want) {
				t.Errorf("plan %+v, %v\nwant %+v", p, err, c.want)
			}
			if p.Changes() != (c.want.Write || len(c.want.DropLabels)+len(c.want.DropAnnotations) > 0) {
				t.Errorf("Changes() = %v", p.Changes())
			}
		})
	}
}

// domainsAnnotationHPA is a team's own regiment.io/ annotation (discovery's
// domains.AnnotationHPA), which a restore must leave.
const domainsAnnotationHPA = "regiment.io/hpa"
