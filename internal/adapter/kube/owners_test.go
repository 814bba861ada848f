package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/core/domains"
)

// entry is a managedFields entry of manager, by op, owning the given
// FieldsV1 set.
func entry(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

const (
	replicasSet = `{"f:spec":{"f:replicas":{}}}`
	boundsSet   = `{"f:spec":{"f:maxReplicas":{},"f:minReplicas":{}}}`
	labelSet    = `{"f:metadata":{"f:labels":{"f:regiment.io/managed":{}}}}`
	creatorSet  = `{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{}}}`
)

func TestForeignOwner(t *testing.T) {
	web := domains.WorkloadRef{Kind: domains.KindDeployment, Namespace: "shop", Name: "web", HPA: "web"}
	db := domains.WorkloadRef{Kind: domains.KindStatefulSet, Namespace: "shop", Name: "db", HPA: "db"}
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	rep, hb := domains.ActuateReplicas, domains.ActuateHPABounds
	cases := []struct {
		name string
		in   Ownership
		want string
	}{
		{"nothing else: none", Ownership{Actuation: rep, Workload: web}, ""},
		{"replicas: an HPA targeting the workload owns it",
			Ownership{Actuation: rep, Workload: web, HPAs: []ScaleTarget{{Name: "web-hpa", Kind: "Deployment", TargetName: "web", APIVersion: "apps/v1"}}}, "hpa/web-hpa"},
		{"replicas: an HPA of another workload does not",
			Ownership{Actuation: rep, Workload: web, HPAs: []ScaleTarget{{Name: "api", Kind: "Deployment", TargetName: "api", APIVersion: "apps/v1"}}}, ""},
		{"replicas: an HPA of a StatefulSet of the same name does not",
			Ownership{Actuation: rep, Workload: web, HPAs: []ScaleTarget{{Name: "x", Kind: "StatefulSet", TargetName: "web", APIVersion: "apps/v1"}}}, ""},
		{"replicas: an HPA of a StatefulSet app owns it",
			Ownership{Actuation: rep, Workload: db, HPAs: []ScaleTarget{{Name: "x", Kind: "StatefulSet", TargetName: "db", APIVersion: "apps/v1"}}}, "hpa/x"},
		{"replicas: an HPA of another API group's kind does not",
			Ownership{Actuation: rep, Workload: web, HPAs: []ScaleTarget{{Name: "r", Kind: "Deployment", TargetName: "web", APIVersion: "argoproj.io/v1alpha1"}}}, ""},
		{"hpa-bounds: the app's own HPA is Regiment's",
			Ownership{Actuation: hb, Workload: web, HPAs: []ScaleTarget{{Name: "web", Kind: "Deployment", TargetName: "web", APIVersion: "apps/v1"}}}, ""},
		{"hpa-bounds: a second HPA on the workload owns it",
			Ownership{Actuation: hb, Workload: web, HPAs: []ScaleTarget{{Name: "web", Kind: "Deployment", TargetName: "web"}, {Name: "web-2", Kind: "Deployment", TargetName: "web"}}}, "hpa/web-2"},
		{"a KEDA ScaledObject with the default kind owns it",
			Ownership{Actuation: rep, Workload: web, ScaledObjects: []ScaleTarget{{Name: "web-so", TargetName: "web"}}}, "keda/web-so"},
		{"KEDA in hpa-bounds too",
			Ownership{Actuation: hb, Workload: web, ScaledObjects: []ScaleTarget{{Name: "web-so", TargetName: "web"}}}, "keda/web-so"},
		{"the creator (update) before Regiment's first write: adopted",
			Ownership{Actuation: rep, Workload: web, Fields: []metav1.ManagedFieldsEntry{entry("kubectl-create", update, creatorSet)}}, ""},
		{"an imperative writer after Regiment claimed the field took it",
			Ownership{Actuation: rep, Workload: web, Claimed: true, Fields: []metav1.ManagedFieldsEntry{entry("kubectl", update, replicasSet)}},
			"field-manager/kubectl:.spec.replicas"},
		{"an applier owns it before any claim",
			Ownership{Actuation: rep, Workload: web, Fields: []metav1.ManagedFieldsEntry{entry("argocd-controller", apply, creatorSet)}},
			"field-manager/argocd-controller:.spec.replicas"},
		{"an applier sharing Regiment's value agrees",
			Ownership{Actuation: rep, Workload: web, Claimed: true, Fields: []metav1.ManagedFieldsEntry{
				entry("argocd-controller", apply, replicasSet), entry("regiment", apply, replicasSet)}}, ""},
		{"Regiment alone owns it",
			Ownership{Actuation: rep, Workload: web, Claimed: true, Fields: []metav1.ManagedFieldsEntry{entry("regiment", apply, replicasSet)}}, ""},
		{"a hand-back through kubectl patch --field-manager=regiment is Regiment's",
			Ownership{Actuation: rep, Workload: web, Claimed: true, Fields: []metav1.ManagedFieldsEntry{entry("regiment", update, replicasSet)}}, ""},
		{"replicas: other fields of an applier are not looked at",
			Ownership{Actuation: rep, Workload: web, Fields: []metav1.ManagedFieldsEntry{entry("flux", apply, `{"f:spec":{"f:template":{}}}`)}}, ""},
		{"hpa-bounds: the HPA's creator before Regiment's label: adopted",
			Ownership{Actuation: hb, Workload: web, Fields: []metav1.ManagedFieldsEntry{entry("kubectl-client-side-apply", update, boundsSet)}}, ""},
		{"hpa-bounds: Regiment's label shows its claim, the hand edit took minReplicas",
			Ownership{Actuation: hb, Workload: web, Fields: []metav1.ManagedFieldsEntry{
				entry("kubectl-edit", update, `{"f:spec":{"f:minReplicas":{}}}`), entry("regiment", apply, `{"f:metadata":{}, "f:spec":{"f:maxReplicas":{}}}`)}},
			"field-manager/kubectl-edit:.spec.minReplicas"},
		{"hpa-bounds: Regiment's marks by update (an original-spec record) are no claim",
			Ownership{Actuation: hb, Workload: web, Fields: []metav1.ManagedFieldsEntry{
				entry("kubectl-client-side-apply", update, boundsSet), entry("regiment", update, `{"f:metadata":{"f:annotations":{}}}`)}}, ""},
		{"replicas: Regiment's apply entry on the workload is a claim",
			Ownership{Actuation: rep, Workload: web, Fields: []metav1.ManagedFieldsEntry{
				entry("kubectl", update, replicasSet), entry("regiment", apply, `{"f:metadata":{"f:labels":{}}}`)}},
			"field-manager/kubectl:.spec.replicas"},
		{"hpa-bounds: an applier of maxReplicas",
			Ownership{Actuation: hb, Workload: web, Fields: []metav1.ManagedFieldsEntry{
				entry("kustomize-controller", apply, `{"f:spec":{"f:maxReplicas":{}}}`), entry("regiment", apply, `{"f:spec":{"f:minReplicas":{}}}`)}},
			"field-manager/kustomize-controller:.spec.maxReplicas"},
		{"hpa-bounds: the HPA controller's status writes own no bound",
			Ownership{Actuation: hb, Workload: web, Claimed: true, Fields: []metav1.ManagedFieldsEntry{
				entry("kube-controller-manager", update, `{"f:status":{"f:currentReplicas":{}}}`), entry("regiment", apply, boundsSet)}}, ""},
		{"an HPA comes before a field manager",
			Ownership{Actuation: rep, Workload: web, HPAs: []ScaleTarget{{Name: "h", TargetName: "web", Kind: "Deployment"}},
				Fields: []metav1.ManagedFieldsEntry{entry("argocd-controller", apply, replicasSet)}}, "hpa/h"},
		{"unreadable FieldsV1 owns nothing",
			Ownership{Actuation: rep, Workload: web, Claimed: true, Fields: []metav1.ManagedFieldsEntry{entry("x", apply, `not json`)}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ForeignOwner(c.in).String(); got != c.want {
				t.Errorf("ForeignOwner = %q, want %q", got, c.want)
			}
		})
	}
}

func TestTrimFieldsKeepsWhatForeignOwnerReads(t *testing.T) {
	in := []metav1.ManagedFieldsEntry{
		entry("kube.test", metav1.ManagedFieldsOperationUpdate, creatorSet),
		entry("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, `{"f:status":{"f:replicas":{}}}`),
		entry("regiment", metav1.ManagedFieldsOperationApply, labelSet),
	}
	out := trimFields(in, []string{"spec", "replicas"})
	if len(out) != 2 || out[0].Manager != "kube.test" || string(out[0].FieldsV1.Raw) != replicasSet ||
		out[1].Manager != "regiment" || string(out[1].FieldsV1.Raw) != "{}" {
		t.Fatalf("trimmed %+v", out)
	}
	for _, claimed := range []bool{false, true} {
		a := ForeignOwner(Ownership{Actuation: domains.ActuateReplicas, Workload: domains.WorkloadRef{Name: "w"}, Fields: in, Claimed: claimed})
		b := ForeignOwner(Ownership{Actuation: domains.ActuateReplicas, Workload: domains.WorkloadRef{Name: "w"}, Fields: out, Claimed: claimed})
		if a != b {
			t.Errorf("claimed %v: %v on the object, %v on the trimmed fields", claimed, a, b)
		}
	}
	bounds := trimFields([]metav1.ManagedFieldsEntry{entry("x", metav1.ManagedFieldsOperationApply, boundsSet)},
		[]string{"spec", "minReplicas"}, []string{"spec", "maxReplicas"})
	if got := string(bounds[0].FieldsV1.Raw); got != boundsSet {
		t.Errorf("bounds trimmed to %s", got)
	}
}

// What a tick costs per app: the decision over a workload's trimmed
// managedFields (the creator's and Regiment's) and two HPAs.
func BenchmarkForeignOwner(b *testing.B) {
	fields := trimFields([]metav1.ManagedFieldsEntry{
		entry("kube.test", metav1.ManagedFieldsOperationUpdate, creatorSet),
		entry("regiment", metav1.ManagedFieldsOperationApply, replicasSet),
	}, replicasPath)
	in := Ownership{Actuation: domains.ActuateReplicas, Workload: domains.WorkloadRef{Kind: domains.KindDeployment, Name: "web"},
		HPAs: []ScaleTarget{{Name: "a", TargetName: "api"}, {Name: "b", TargetName: "db"}}, Fields: fields, Claimed: true}
	b.ReportAllocs()
	for b.Loop() {
		if ForeignOwner(in).Found() {
			b.Fatal("found an owner")
		}
	}
}
