package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// hpaSpecs is each HPA's spec in ns as JSON, by name.
func hpaSpecs(t *testing.T, c kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	l, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, h := range l.Items {
		b, _ := json.Marshal(h.Spec)
		out[h.Name] = string(b)
	}
	return out
}

// marksLeft lists the HPAs and Deployments of ns that still carry a
// regiment.io/ label or annotation.
func marksLeft(t *testing.T, c kubernetes.Interface, ns string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	hpas, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hpas.Items {
		if keys := regimentKeys(h.ObjectMeta); len(keys) > 0 {
			out = append(out, fmt.Sprintf("hpa %s: %v", h.Name, keys))
		}
	}
	deps, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps.Items {
		if keys := regimentKeys(d.ObjectMeta); len(keys) > 0 {
			out = append(out, fmt.Sprintf("deployment %s: %v", d.Name, keys))
		}
	}
	return out
}

// twentyHPAs creates 20 apps in ns, app-i with an HPA of distinct bounds
// [1+i%4, 10+i], and an Actuator bounding them for domain "pay" under
// lease, with targets and app bounds that differ from every HPA's own.
func twentyHPAs(t *testing.T, c kubernetes.Interface, ns, lease string) (*Actuator, []soldier.Change) {
	t.Helper()
	var targets []Target
	var changes []soldier.Change
	for i := range 20 {
		name := fmt.Sprintf("app-%d", i)
		deployment(t, c, ns, name, 1, false)
		hpa(t, c, ns, name, int32(1+i%4), int32(10+i))
		targets = append(targets, target(i, ns, name, domains.KindDeployment, 2, 60))
		changes = append(changes, soldier.Change{App: i, Replicas: int32(30 + i)})
	}
	act, err := NewActuator(c, ActuatorConfig{Actuation: domains.ActuateHPABounds, HPAHeadroom: 0.5, Lease: lease, Domain: "pay", Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	return act, changes
}

// TestRestoreGivesBackTwentyHPAsExactly: 20 HPAs with distinct bounds are
// bounded by a Soldier, its lease lapses and the Reverter gives every HPA
// its spec back byte for byte, with no regiment.io/ key left; the Soldier
// comes back, bounds them again (recording the originals again), and a
// Restorer for its domain gives them back byte for byte once more, while a
// second domain's HPA is left alone.
func TestRestoreGivesBackTwentyHPAsExactly(t *testing.T) {
	env := testenv.Require(t)
	ctx := context.Background()
	ns := testenv.Namespace(t, env.Client)
	lease := NewLease(env.Client, ns, SoldierLeaseName("pay"), "soldier-0", time.Second)
	if err := lease.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	act, changes := twentyHPAs(t, env.Client, ns, lease.Ref())
	before := hpaSpecs(t, env.Client, ns)

	// Another domain's app in the same namespace, its Soldier alive.
	deployment(t, env.Client, ns, "other", 1, false)
	hpa(t, env.Client, ns, "other", 3, 7)
	otherLease := NewLease(env.Client, ns, SoldierLeaseName("fraud"), "soldier-1", time.Hour)
	if err := otherLease.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	other, _ := NewActuator(env.Client, ActuatorConfig{Actuation: domains.ActuateHPABounds, Lease: otherLease.Ref(),
		Domain: "fraud", Targets: []Target{target(0, ns, "other", domains.KindDeployment, 1, 20)}})
	if err := other.Apply(ctx, []soldier.Change{{App: 0, Replicas: 12}}); err != nil {
		t.Fatal(err)
	}
	otherBounded := hpaSpecs(t, env.Client, ns)["other"]

	bounded := func() {
		t.Helper()
		if err := act.Apply(ctx, changes); err != nil {
			t.Fatal(err)
		}
		now := hpaSpecs(t, env.Client, ns)
		for i := range 20 {
			name := fmt.Sprintf("app-%d", i)
			if now[name] == before[name] {
				t.Fatalf("%s not bounded: %s", name, now[name])
			}
		}
	}
	same := func(when string) {
		t.Helper()
		after := hpaSpecs(t, env.Client, ns)
		if after["other"] != otherBounded {
			t.Errorf("%s: the other domain's hpa changed: %s, want %s", when, after["other"], otherBounded)
		}
		for i := range 20 {
			name := fmt.Sprintf("app-%d", i)
			if after[name] != before[name] {
				t.Errorf("%s: %s spec\n%s\nwant the original\n%s", when, name, after[name], before[name])
			}
		}
		for _, m := range marksLeft(t, env.Client, ns) {
			if m[:9] != "hpa other" {
				t.Errorf("%s: marks left on %s", when, m)
			}
		}
	}

	// (1) The lease lapses (1 s, no renewal): the Reverter restores all 20.
	bounded()
	rev := NewReverter(env.Client, []string{ns})
	rev.Grace = 0
	var reverts []Restored
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		var err error
		reverts, err = rev.RevertOnce(ctx)
		return len(reverts) > 0, fmt.Sprintf("%d reverts, %v", len(reverts), err)
	})
	if len(reverts) != 20 {
		t.Errorf("%d reverts, want 20 (the live domain's hpa left alone): %+v", len(reverts), reverts)
	}
	same("after the lease lapsed")
	t.Logf("reverter: %d objects restored, e.g. %s %s to %s", len(reverts), reverts[0].Kind, reverts[0].Object, EncodeOriginal(reverts[0].Spec))

	// (2) The Soldier is back (its marks forgotten on reassertion):
	// bounded again, then a Restorer for its domain gives them back.
	if err := lease.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if err := act.Reassert(ctx); err != nil {
		t.Fatal(err)
	}
	bounded()
	done, err := NewRestorer(env.Client, []string{ns}).Restore(ctx, "pay")
	if err != nil || len(done) != 20 {
		t.Fatalf("restored %d, %v; want 20", len(done), err)
	}
	same("after a restore of domain pay")
	if again, err := NewRestorer(env.Client, []string{ns}).Restore(ctx, "pay"); err != nil || len(again) != 0 {
		t.Errorf("second restore: %+v, %v; want nothing", again, err)
	}
}

// TestRevertRestoresReplicas: in replicas actuation the Soldier records a
// Deployment's replicas before its first write; once its lease lapses the
// Reverter puts them back (nothing was reverted in replicas mode before),
// and a Restorer does after the Soldier's next write.
func TestRevertRestoresReplicas(t *testing.T) {
	env := testenv.Require(t)
	ctx := context.Background()
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "web", 3, false)
	deps := env.Client.AppsV1().Deployments(ns)
	spec := func() string {
		d, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(d.Spec)
		return string(b)
	}
	before := spec()
	act, _ := NewActuator(env.Client, ActuatorConfig{Actuation: domains.ActuateReplicas, Lease: ns + "/" + SoldierLeaseName("pay"), Domain: "pay",
		Targets: []Target{target(0, ns, "web", domains.KindDeployment, 1, 50)}})
	scaled := func() {
		t.Helper()
		if err := act.Apply(ctx, []soldier.Change{{App: 0, Replicas: 17}}); err != nil {
			t.Fatal(err)
		}
		d, _ := deps.Get(ctx, "web", metav1.GetOptions{})
		if *d.Spec.Replicas != 17 || d.Annotations[AnnotationOriginal] != `{"replicas":3}` || d.Labels[LabelManagedBy] != "pay" {
			t.Fatalf("replicas %d, labels %v, annotations %v", *d.Spec.Replicas, d.Labels, d.Annotations)
		}
	}
	scaled()
	reverts, err := NewReverter(env.Client, []string{ns}).RevertOnce(ctx) // the lease was never created
	if err != nil || len(reverts) != 1 || reverts[0].Kind != KindDeployment || *reverts[0].Spec.Replicas != 3 {
		t.Errorf("reverts %+v, %v", reverts, err)
	}
	if got := spec(); got != before {
		t.Errorf("after the revert the spec is\n%s\nwant\n%s", got, before)
	}
	if m := marksLeft(t, env.Client, ns); len(m) > 0 {
		t.Errorf("marks left: %v", m)
	}

	act.ForgetMarks()
	scaled()
	if done, err := NewRestorer(env.Client, []string{ns}).Restore(ctx, "pay"); err != nil || len(done) != 1 {
		t.Errorf("restore: %+v, %v", done, err)
	}
	if got := spec(); got != before {
		t.Errorf("after the restore the spec is\n%s\nwant\n%s", got, before)
	}
	if m := marksLeft(t, env.Client, ns); len(m) > 0 {
		t.Errorf("marks left: %v", m)
	}
}
