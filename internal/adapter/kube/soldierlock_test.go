package kube

import (
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
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// replica is one Soldier replica of a domain: its own client, whose lease
// requests the test can cut while its other requests go through (a pod
// stuck between the apiserver and its lease), and the times of its writes
// to the apps' workloads and of its leaderships.
type replica struct {
	name     string
	cutLease atomic.Bool
	mu       sync.Mutex
	writes   []time.Time    // app workload writes that succeeded
	terms    [][2]time.Time // [start, end) of each leadership; end zero while leading
	done     chan struct{}
}

func (r *replica) client(t *testing.T, base *rest.Config) kubernetes.Interface {
	cfg := rest.CopyConfig(base)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if r.cutLease.Load() && strings.Contains(req.URL.Path, "/leases") {
				return nil, errors.New("lease unreachable")
			}
			at := time.Now()
			resp, err := rt.RoundTrip(req)
			if req.Method != http.MethodGet && err == nil && resp.StatusCode < 300 && strings.Contains(req.URL.Path, "/deployments/") {
				r.mu.Lock()
				r.writes = append(r.writes, at)
				r.mu.Unlock()
			}
			return resp, err
		})
	})
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// leading says whether r leads now.
func (r *replica) leading() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.terms) > 0 && r.terms[len(r.terms)-1][1].IsZero()
}

func (r *replica) snapshot() ([]time.Time, [][2]time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.writes...), append([][2]time.Time(nil), r.terms...)
}

// startReplica runs a Soldier of domain shop that ticks every 100 ms only
// while it holds the lease, as the soldier daemon does (Adapter.Lead).
func startReplica(t *testing.T, ctx context.Context, base *rest.Config, cfg *domains.Config, name string) *replica {
	t.Helper()
	r := &replica{name: name, done: make(chan struct{})}
	ad, err := NewAdapter(r.client(t, base), cfg, "shop", name)
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := soldier.NewConfig(cfg, "shop")
	if err != nil {
		t.Fatal(err)
	}
	s := soldier.New(scfg, &soldier.SqrtStaffing{}, ad.Observer, ad.Actuator, nil, nil)
	go func() {
		defer close(r.done)
		var wg sync.WaitGroup
		wg.Go(func() { ad.Observer.Run(ctx) })
		ad.Lead(ctx, hclog.NewNullLogger(), func(lctx context.Context, _ Leadership) {
			r.mu.Lock()
			r.terms = append(r.terms, [2]time.Time{time.Now()})
			r.mu.Unlock()
			s.Run(lctx, time.Now, nil)
			r.mu.Lock()
			r.terms[len(r.terms)-1][1] = time.Now()
			r.mu.Unlock()
		})
		wg.Wait()
	}()
	return r
}

// TestTwoSoldiersOfOneDomainNeverBothWrite runs two Soldier replicas of
// one domain on a real apiserver, each with its own client counting its
// writes to the apps' Deployments, under a load that changes the targets
// every few ticks. The first leads and writes; the second waits and writes
// nothing. Then the first loses its lease's requests only (its writes would
// still go through): it stops acting before the second takes over, which
// then writes. No write of either falls in the other's leadership, and the
// leaderships never overlap. The lease the Reverter reads stays fresh
// throughout, and after a clean stop it is handed over (no holder, its
// duration kept) rather than left to lapse at once.
func TestTwoSoldiersOfOneDomainNeverBothWrite(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	const apps = 3
	prom := promtest.New(t, "load 15s\n")
	for i := range apps {
		deployment(t, env.Client, ns, fmt.Sprintf("web-%d", i), 1, false)
	}
	cfg := soldierConfig(t, ns, prom.URL, apps, `  actuation = "replicas"
  tick = "100ms"`)
	cfg.Kubernetes.LeaseDuration = 2 * time.Second // renewals every 250ms, leadership lost after 1s without one

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A sawtooth of demand: 10 to 255 rps per app over 5 s, then back.
	var wg sync.WaitGroup
	wg.Go(func() {
		for k := 0; ctx.Err() == nil; k++ {
			var series []fmt.Stringer
			for i := range apps {
				series = append(series, appSeries{ns: ns, pod: fmt.Sprintf("web-%d-6d4cf-x2k4p", i), ok: 10 + 5*float64(k%50), cpu: 0.5, mem: 100})
			}
			prom.Load(t, promtest.Script(series...))
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	defer wg.Wait()
	defer cancel()

	a := startReplica(t, ctx, env.Config, cfg, "soldier-a")
	testenv.Eventually(t, 10*time.Second, func() (bool, string) { return a.leading(), "soldier-a does not lead" })
	b := startReplica(t, ctx, env.Config, cfg, "soldier-b")
	lease := func() *coordinationv1.Lease {
		le, err := env.Client.CoordinationV1().Leases(ns).Get(context.Background(), SoldierLeaseName("shop"), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return le
	}
	for range 30 { // 3 s: the lease stays fresh for the Reverter
		if le := lease(); expired(le, time.Now(), 0) || *le.Spec.HolderIdentity != "soldier-a" {
			t.Fatalf("lease %+v while soldier-a leads", le.Spec)
		}
		time.Sleep(100 * time.Millisecond) // sampling the lease, not synchronising
	}
	aw, _ := a.snapshot()
	bw, _ := b.snapshot()
	if len(aw) == 0 || len(bw) != 0 || b.leading() {
		t.Fatalf("with soldier-a leading: %d writes by soldier-a, %d by soldier-b (leading %v); want some and none", len(aw), len(bw), b.leading())
	}

	a.cutLease.Store(true) // soldier-a is stuck: its writes would still go through
	testenv.Eventually(t, 15*time.Second, func() (bool, string) { return b.leading(), "soldier-b does not take over" })
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		bw, _ := b.snapshot()
		return len(bw) > 0, "soldier-b leads but writes nothing"
	})
	a.cutLease.Store(false)     // back: soldier-a campaigns again and must wait
	time.Sleep(2 * time.Second) // soldier-a's chance to write wrongly; the check below is on what it did
	cancel()
	<-a.done
	<-b.done

	aw, at := a.snapshot()
	bw, bt := b.snapshot()
	t.Logf("soldier-a: %d writes, leaderships %v; soldier-b: %d writes, leaderships %v", len(aw), spans(at), len(bw), spans(bt))
	if len(at) != 1 || len(bt) != 1 {
		t.Fatalf("leaderships: soldier-a %d, soldier-b %d; want one each", len(at), len(bt))
	}
	if !at[0][1].Before(bt[0][0]) {
		t.Fatalf("leaderships overlap: soldier-a until %s, soldier-b from %s", at[0][1].Format(time.StampMilli), bt[0][0].Format(time.StampMilli))
	}
	for _, w := range aw {
		if w.After(at[0][1]) {
			t.Errorf("soldier-a wrote at %s, after it stopped leading at %s", w.Format(time.StampMilli), at[0][1].Format(time.StampMilli))
		}
	}
	for _, w := range bw {
		if w.Before(bt[0][0]) {
			t.Errorf("soldier-b wrote at %s, before it led from %s", w.Format(time.StampMilli), bt[0][0].Format(time.StampMilli))
		}
	}
	le := lease()
	if h := le.Spec.HolderIdentity; (h != nil && *h != "") || expired(le, time.Now(), 0) || *le.Spec.LeaseDurationSeconds != 2 {
		t.Errorf("after a clean stop the lease is %+v; want no holder, its 2 s duration, not lapsed", le.Spec)
	}
}

// spans formats leaderships for a log line.
func spans(terms [][2]time.Time) string {
	var b strings.Builder
	for _, tt := range terms {
		fmt.Fprintf(&b, "[%s, %s) ", tt[0].Format("15:04:05.000"), tt[1].Format("15:04:05.000"))
	}
	return b.String()
}
