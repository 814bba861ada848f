package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

func TestReverterRevertsHPAsOfALapsedSoldier(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "api", 2, false)
	hpa(t, env.Client, ns, "api", 1, 10)
	bounds := func() string {
		h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(context.Background(), "api", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("[%d, %d]", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}

	// The Soldier's lease goes through a client the test can cut off.
	var cut atomic.Bool
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if cut.Load() {
				return nil, errors.New("partitioned")
			}
			return rt.RoundTrip(r)
		})
	})
	leaseClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lease := NewLease(leaseClient, ns, SoldierLeaseName("d"), "soldier-0", 2*time.Second)
	act, _ := NewActuator(env.Client, ActuatorConfig{Actuation: domains.ActuateHPABounds, HPAHeadroom: 0.5, Lease: lease.Ref(),
		Targets: []Target{target(0, ns, "api", domains.KindDeployment, 2, 40)}})
	rev := NewReverter(env.Client, []string{ns})
	rev.Grace = 0

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var regained atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		lease.Run(ctx, nil, func(ctx context.Context) {
			regained.Add(1)
			if err := act.Reassert(ctx); err != nil {
				t.Errorf("reassert: %v", err)
			}
		})
	}()
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		_, err := env.Client.CoordinationV1().Leases(ns).Get(ctx, lease.name, metav1.GetOptions{})
		return err == nil, fmt.Sprint("lease not created: ", err)
	})
	if err := act.Apply(ctx, []soldier.Change{{App: 0, Replicas: 8}}); err != nil {
		t.Fatal(err)
	}

	// While the Soldier renews, nothing is reverted (over 1.5 lease durations).
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); {
		if done, err := rev.RevertOnce(ctx); err != nil || len(done) > 0 {
			t.Fatalf("reverted a live Soldier's hpa: %v, %v", done, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := bounds(); got != "[8, 12]" {
		t.Fatalf("bounds %s, want [8, 12]", got)
	}

	// The Soldier is partitioned: once its lease lapses the HPA goes back to
	// its own bounds as the team had them, recorded before the first write,
	// exactly once, and Regiment's marks go.
	cut.Store(true)
	var reverts []Restored
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		var err error
		reverts, err = rev.RevertOnce(ctx)
		return len(reverts) > 0, fmt.Sprint("no revert yet: ", err)
	})
	lo, hi := int32(1), int32(10)
	want := Restored{Kind: KindHPA, Object: ns + "/api", Lease: lease.Ref(), From: FromOriginal,
		Spec: OriginalSpec{MinReplicas: &lo, MaxReplicas: &hi}, Wrote: true}
	if len(reverts) != 1 || !reflect.DeepEqual(reverts[0], want) {
		t.Errorf("reverts %+v, want %+v", reverts, want)
	}
	if got := bounds(); got != "[1, 10]" {
		t.Errorf("bounds after revert %s, want the original [1, 10]", got)
	}
	if h, _ := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "api", metav1.GetOptions{}); len(regimentKeys(h.ObjectMeta)) > 0 {
		t.Errorf("marks left after the revert: %v", regimentKeys(h.ObjectMeta))
	}
	if again, err := rev.RevertOnce(ctx); err != nil || len(again) != 0 {
		t.Errorf("second pass: %v, %v; want nothing written", again, err)
	}

	// The partition heals: the lease renews after its lapse and the Soldier
	// reasserts its target.
	cut.Store(false)
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		return regained.Load() == 1 && bounds() == "[8, 12]", fmt.Sprintf("regained %d, bounds %s", regained.Load(), bounds())
	})
	cancel()
	<-done
}

func TestReverterTreatsAMissingLeaseAsLapsed(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "api", 2, false)
	hpa(t, env.Client, ns, "api", 1, 10)
	act, _ := NewActuator(env.Client, ActuatorConfig{Actuation: domains.ActuateHPABounds, HPAHeadroom: 0, Lease: ns + "/never-created",
		Targets: []Target{target(0, ns, "api", domains.KindDeployment, 1, 9)}})
	if err := act.Apply(context.Background(), []soldier.Change{{App: 0, Replicas: 5}}); err != nil {
		t.Fatal(err)
	}
	reverts, err := NewReverter(env.Client, []string{ns}).RevertOnce(context.Background())
	if err != nil || len(reverts) != 1 || *reverts[0].Spec.MinReplicas != 1 || *reverts[0].Spec.MaxReplicas != 10 {
		t.Errorf("reverts %+v, %v", reverts, err)
	}
}

// An HPA an older Regiment bounded carries no original: the Reverter puts it
// back to its safe bounds and leaves its marks for the Soldier's next write.
// A bad annotation is reported, not guessed at.
func TestReverterPutsLegacyHPAsToTheirSafeBounds(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	hpa(t, env.Client, ns, "api", 5, 6)
	hpas := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)
	patch := func(labels, annotations string) {
		t.Helper()
		p := []byte(`{"metadata":{"labels":` + labels + `,"annotations":` + annotations + `}}`)
		if _, err := hpas.Patch(context.Background(), "api", types.MergePatchType, p, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch(`{"`+LabelManaged+`":"true"}`, `{"`+AnnotationLease+`":"`+ns+`/gone","`+AnnotationSafeBounds+`":"1-9"}`)
	rev := NewReverter(env.Client, []string{ns})
	reverts, err := rev.RevertOnce(context.Background())
	if err != nil || len(reverts) != 1 || reverts[0].From != FromSafeBounds || *reverts[0].Spec.MinReplicas != 1 || *reverts[0].Spec.MaxReplicas != 9 {
		t.Errorf("reverts %+v, %v; want the safe bounds [1, 9]", reverts, err)
	}
	h, _ := hpas.Get(context.Background(), "api", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 1 || h.Spec.MaxReplicas != 9 || h.Labels[LabelManaged] != "true" {
		t.Errorf("hpa [%d, %d] labels %v", *h.Spec.MinReplicas, h.Spec.MaxReplicas, h.Labels)
	}
	patch(`{}`, `{"`+AnnotationSafeBounds+`":"lots"}`)
	if _, err := rev.RevertOnce(context.Background()); err == nil || !strings.Contains(err.Error(), "safe bounds") {
		t.Errorf("bad safe bounds: %v", err)
	}
	patch(`{"`+LabelManagedBy+`":"d"}`, `{"`+AnnotationOriginal+`":"{\"replicas\":3}"}`)
	if _, err := rev.RevertOnce(context.Background()); err == nil || !strings.Contains(err.Error(), "original spec") {
		t.Errorf("bad original: %v", err)
	}
}

// regimentKeys are the labels and annotations of m that Regiment writes.
func regimentKeys(m metav1.ObjectMeta) []string {
	var out []string
	for _, kv := range []map[string]string{m.Labels, m.Annotations} {
		for k := range kv {
			if strings.HasPrefix(k, "regiment.io/") {
				out = append(out, k)
			}
		}
	}
	return out
}
