package kube

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	corev1 "k8s.io/api/core/v1"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// learnRecords keeps what a Soldier learned at each tick.
type learnRecords struct{ got [][]soldier.LearnedApp }

func (r *learnRecords) Record(rec soldier.Record) { r.got = append(r.got, rec.Learned) }

// A discovered app whose discover block sets no service_time is sized, once
// the Soldier has seen soldier.EstimateMinSamples busy ticks, from the
// service time its pods' CPU and load imply, read through the real
// Observer from the API server and PromQL: two ready pods at 30 requests/s
// each, using 0.3 of their 1-core request together (0.6 cores of 2), give
// 1 x 0.3 x 2 / 60 = 10 ms, a capacity of 100 requests/s a replica; its
// pods' startup is the median of creation to ready.
func TestDiscoveredAppLearnsItsServiceTime(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	prom := promtest.New(t, "load 15s\n")
	d := deployment(t, env.Client, ns, "cart", 2, false)
	for i, startup := range []time.Duration{8 * time.Second, 12 * time.Second} {
		name := fmt.Sprintf("cart-6d4cf-%d", i)
		pod(t, env.Client, ns, name, "cart", "node-x", corev1.PodRunning, true, 0)
		readyAfter(t, env.Client, ns, name, startup)
	}
	cfg, err := config.Parse(fmt.Appendf(nil, `cluster "k" {
  capacity_cores = 1000
}
soldier {
  actuation = "replicas"
  mode      = "recommend"
}
kubernetes {
  namespace       = %[1]q
  lease_namespace = %[1]q
}
prometheus {
  url     = %[2]q
  max_age = "1m"
}
domain "shop" {
  slo { latency_p99 = "200ms" }
  discover {
    namespaces = [%[1]q]
    selector   = "app=cart"
  }
}
`, ns, prom.URL), "k.hcl")
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := cfg.WithDiscovered(0, []domains.FoundWorkload{Found(domains.KindDeployment, d.ObjectMeta, d.Spec.Selector, &d.Spec.Template.Spec)})
	if len(problems) > 0 || len(cfg.Apps()) != 1 || !cfg.Apps()[0].Learn {
		t.Fatalf("discovered %+v, problems %q; want shop/cart learning its service time", cfg.Apps(), problems)
	}
	ad, err := NewAdapter(env.Client, cfg, "shop", "soldier-0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ad.Run(ctx, hclog.NewNullLogger()) }()
	defer func() { cancel(); <-done }()
	scfg, err := soldier.NewConfig(cfg, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var rec learnRecords
	s := soldier.New(scfg, &soldier.SqrtStaffing{}, ad.Observer, ad.Actuator, nil, &rec)
	prom.Load(t, promtest.Script(
		appSeries{ns: ns, pod: "cart-6d4cf-0", ok: 30, cpu: 0.3, mem: 100},
		appSeries{ns: ns, pod: "cart-6d4cf-1", ok: 30, cpu: 0.3, mem: 100},
	))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ad.Observer.clock = func() time.Time { return now } // metric ages in tick time
	prior := 1 / domains.PriorServiceTime.Seconds()
	for tick := range soldier.EstimateMinSamples {
		if _, err := s.Tick(ctx, now); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		l := rec.got[len(rec.got)-1]
		if len(l) != 1 {
			t.Fatalf("tick %d learned %+v, want shop/cart", tick, l)
		}
		if capacity := s.Apps()[0].Capacity; tick < soldier.EstimateMinSamples-1 && (capacity != prior || l[0].ServiceTime != 0) {
			t.Errorf("tick %d: capacity %g, learned %g after %d samples; want the prior's %g", tick, capacity, l[0].ServiceTime, l[0].Samples, prior)
		}
		now = now.Add(10 * time.Second)
	}
	l := rec.got[len(rec.got)-1][0]
	if math.Abs(l.ServiceTime-0.010) > 1e-9 || math.Abs(s.Apps()[0].Capacity-100) > 1e-6 || l.Startup != 10 {
		t.Errorf("after %d busy ticks: learned %+v, capacity %g; want 10 ms, 100/s and a 10 s startup (median of 8 s and 12 s)",
			soldier.EstimateMinSamples, l, s.Apps()[0].Capacity)
	}
}
