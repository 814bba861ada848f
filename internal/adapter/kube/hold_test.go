package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// lockedBuffer is a log sink safe for the adapter's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHeldAdapterReassertsNothing: a Soldier that bounded an HPA and was
// then reloaded into a mode that writes nothing (Hold) is partitioned past
// its lease; the HPA is reverted meanwhile. When the lease renews after the
// lapse the adapter says so and leaves the HPA alone, where an active
// Soldier would reassert its bounds.
func TestHeldAdapterReassertsNothing(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "web-0", 1, false)
	hpa(t, env.Client, ns, "web-0", 1, 10)
	prom := promtest.New(t, "load 15s\n")
	cfg := soldierConfig(t, ns, prom.URL, 1, `  actuation = "hpa-bounds"`)
	cfg.Kubernetes.LeaseDuration = 2 * time.Second

	var cut atomic.Bool
	rc := rest.CopyConfig(env.Config)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			if cut.Load() {
				return nil, errors.New("partitioned")
			}
			return rt.RoundTrip(r)
		})
	})
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := NewAdapter(client, cfg, "shop", "soldier-0")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ad.Run(ctx, hclog.New(&hclog.LoggerOptions{Output: &logs})) }()
	defer func() { cancel(); <-done }()
	bounds := func() string {
		h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web-0", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("[%d, %d]", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		_, err := env.Client.CoordinationV1().Leases(ns).Get(ctx, SoldierLeaseName("shop"), metav1.GetOptions{})
		return err == nil, fmt.Sprint("lease not created: ", err)
	})
	testenv.Eventually(t, 10*time.Second, func() (bool, string) { return ad.Observer.Synced(), "the observer's caches have not synced" })
	if err := ad.Actuator.Apply(ctx, []soldier.Change{{App: 0, Replicas: 6}}); err != nil {
		t.Fatal(err)
	}
	if got := bounds(); got != "[6, 9]" {
		t.Fatalf("bounds %s, want [6, 9]", got)
	}

	ad.Hold(true) // reloaded into recommend mode
	cut.Store(true)
	lapsed := time.Now().Add(3 * time.Second) // past the 2 s lease
	// As the Commander's reverter does once the lease lapsed (a merge patch:
	// the HPA controller may write its status meanwhile).
	revert := []byte(`{"spec":{"minReplicas":1,"maxReplicas":10}}`)
	if _, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Patch(ctx, "web-0", types.MergePatchType, revert, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) { return time.Now().After(lapsed), "the lease has not lapsed" })
	cut.Store(false)
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		return strings.Contains(logs.String(), "soldier lease regained: writing nothing"), "no renewal after the lapse logged:\n" + logs.String()
	})
	if got := bounds(); got != "[1, 10]" {
		t.Fatalf("bounds %s after the lease came back, want the reverted [1, 10] left alone", got)
	}
}
