package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// soldierConfig is a one-domain cluster whose n apps ("web-<i>") run in ns,
// actuated through HPAs, with metrics from the Prometheus API at url (default queries).
func soldierConfig(t *testing.T, ns, url string, n int, soldierBlock string) *domains.Config {
	t.Helper()
	src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 1000
}
soldier {
%s
}
kubernetes {
  namespace       = %q
  lease_namespace = %q
  hpa_headroom    = 0.5
}
prometheus {
  url     = %q
  max_age = "1m"
}
domain "shop" {
  floor = 0.5
  slo {
    latency_p99 = "200ms"
  }
  apps "web" {
    count           = %d
    cpu_per_replica = 0.1
    min_replicas    = 1
    max_replicas    = 40
    service_time    = "100ms"
    workload {
      name = "web-{i}"
      selector = "app=web-{i}"
    }
  }
}
`, soldierBlock, ns, ns, url, n)
	cfg, err := config.Parse([]byte(src), "k.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func directive(cfg *domains.Config, seq uint64, now time.Time) wire.Directive {
	return wire.Directive{Version: wire.Version, Cluster: cfg.Cluster.Name, Domain: "shop", Term: 1, Seq: seq,
		IssuedAt: now, TTL: wire.Duration(3 * time.Minute), Share: 0.5, Cores: 500, Policy: "test"}
}

// Steady demand must not turn into a stream of writes: over N Soldier ticks
// the Kubernetes writes stay under 10% of one write per app per tick.
func TestSoldierSteadyStateWritesLittle(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	const apps, ticks = 20, 30
	prom := promtest.New(t, "load 15s\n")
	rng := rand.New(rand.NewPCG(1, 2))
	t.Logf("seed 1,2")
	for i := range apps {
		name := fmt.Sprintf("web-%d", i)
		deployment(t, env.Client, ns, name, 1, false)
		hpa(t, env.Client, ns, name, 1, 100)
	}
	cfg := soldierConfig(t, ns, prom.URL, apps, `  actuation = "hpa-bounds"
  target_utilisation = 0.5`)

	var w writeCounter
	client := w.client(t, env.Config)
	ad, err := NewAdapter(client, cfg, "shop", "soldier-0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ad.Run(ctx, hclog.NewNullLogger())
	}()
	defer func() {
		cancel()
		<-done
	}()
	scfg, err := soldier.NewConfig(cfg, "shop")
	if err != nil {
		t.Fatal(err)
	}
	s := soldier.New(scfg, &soldier.SqrtStaffing{}, ad.Observer, ad.Actuator, nil, nil)

	// Demand: each app needs 10.5 replicas' worth (rps 52.5 at capacity 10
	// and utilisation 0.5), +-3% noise per tick: ceil keeps 11.
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ad.Observer.clock = func() time.Time { return now } // metric ages in tick time
	for tick := range ticks {
		var series []fmt.Stringer
		for i := range apps {
			series = append(series, appSeries{ns: ns, pod: fmt.Sprintf("web-%d-6d4cf-x2k4p", i), ok: 52.5 * (1 + 0.03*(2*rng.Float64()-1)), cpu: 0.5, mem: 100})
		}
		prom.Load(t, promtest.Script(series...))
		if tick%6 == 0 {
			if ok, reason := s.OnDirective(directive(cfg, uint64(tick+1), now), now); !ok {
				t.Fatalf("directive rejected: %s", reason)
			}
		}
		if _, err := s.Tick(ctx, now); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		now = now.Add(10 * time.Second)
	}
	actuation := w.total("horizontalpodautoscalers", "/scale")
	leases := w.total("leases")
	budget := apps * ticks / 10
	t.Logf("%d ticks x %d apps: %d actuation writes (budget %d), %d lease writes, actuator %+v, all writes %s",
		ticks, apps, actuation, budget, leases, ad.Actuator.Stats(), &w)
	if actuation > budget {
		t.Errorf("%d actuation writes over %d ticks of steady demand, want <= %d (10%% of one per app per tick)", actuation, ticks, budget)
	}
	if actuation+leases > budget {
		t.Errorf("%d writes in all, want <= %d", actuation+leases, budget)
	}
	h, _ := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web-0", metav1.GetOptions{})
	if *h.Spec.MinReplicas != 11 || h.Spec.MaxReplicas != 17 {
		t.Errorf("web-0 bounds [%d, %d], want [11, 17]", *h.Spec.MinReplicas, h.Spec.MaxReplicas)
	}

	// Prometheus goes away for 5 minutes: metrics go stale (last values
	// held for max_age, 1m), then missing (apps blind, targets held). No
	// write either way. From 2 minutes in the directives ask for 20%
	// headroom: sized from the size-holding stand-ins that would ratchet
	// every app up each tick; blind apps hold instead.
	prom.Fail(true)
	before := w.total("horizontalpodautoscalers", "/scale")
	for tick := range 30 {
		if tick%6 == 0 {
			d := directive(cfg, uint64(31+tick), now) // after the first loop's 1-30: a seq jump past the ticks elapsed is refused
			if tick >= 12 {
				d.Headroom = 0.2
			}
			if ok, reason := s.OnDirective(d, now); !ok {
				t.Fatalf("directive rejected: %s", reason)
			}
		}
		res, err := s.Tick(ctx, now)
		if err != nil {
			t.Fatalf("outage tick %d: %v", tick, err)
		}
		if tick == 29 && res.Guards != apps {
			t.Errorf("last outage tick: %d guards, want one blind guard per app", res.Guards)
		}
		now = now.Add(10 * time.Second)
	}
	if st := ad.Observer.Status()[0].Metrics[MetricRPS]; st.Freshness != Missing {
		t.Errorf("after 5 minutes of outage rps is %v, want missing", st.Freshness)
	}
	if got := w.total("horizontalpodautoscalers", "/scale") - before; got != 0 {
		t.Errorf("%d writes during the outage, want 0", got)
	}
}

// fakeNode registers a kwok-managed node with cpu cores.
func fakeNode(t *testing.T, c kubernetes.Interface, name string, cpu string) {
	t.Helper()
	if _, err := c.CoreV1().Nodes().Create(context.Background(), testenv.FakeNode(name, cpu), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// End to end: a Soldier driven by directives over NATS sets an HPA's bounds
// from the demand it observes; the real HPA controller clamps the
// Deployment's replicas to them, and the pods run on kwok's fake nodes.
//
// There is no metrics server here, so the HPA controller cannot compute CPU
// utilisation (its ScalingActive condition is False). Clamping to
// [minReplicas, maxReplicas] happens before it needs metrics, which is what
// is asserted: replicas below the new min are raised to it, replicas above
// the new max are cut to it.
func TestSoldierOverNATSBoundsAnHPAOnFakeNodes(t *testing.T) {
	env := testenv.RequireFull(t)
	ns := testenv.Namespace(t, env.Client)
	fakeNode(t, env.Client, "fake-"+ns, "32")
	deployment(t, env.Client, ns, "web-0", 1, true)
	hpa(t, env.Client, ns, "web-0", 1, 10)
	// 30 rps at 10/replica and 50%: 6 replicas
	prom := promtest.New(t, promtest.Script(appSeries{ns: ns, pod: "web-0-6d4cf-x2k4p", ok: 30, cpu: 0.5, mem: 100}))
	cfg := soldierConfig(t, ns, prom.URL, 1, `  tick = "500ms"
  actuation = "hpa-bounds"
  target_utilisation = 0.5
  scale_down_cooldown = "1ms"`)

	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sconn, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Cluster: cfg.Cluster.Name, Name: "soldier-shop"})
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close()
	cconn, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Cluster: cfg.Cluster.Name, Name: "commander"})
	if err != nil {
		t.Fatal(err)
	}
	defer cconn.Close()

	ad, err := NewAdapter(env.Client, cfg, "shop", "soldier-0")
	if err != nil {
		t.Fatal(err)
	}
	scfg, _ := soldier.NewConfig(cfg, "shop")
	var rec lastRecord
	s := soldier.New(scfg, &soldier.SqrtStaffing{}, ad.Observer, ad.Actuator, sconn, &rec)
	log := hclog.NewNullLogger()
	// Directives reach the Soldier as daemon.AttachSoldier feeds them; daemon
	// assembles the processes around this adapter, so kube cannot import it.
	if _, err := sconn.SubscribeDirectives("shop", func(d wire.Directive, err error) {
		if err == nil {
			s.OnDirective(d, time.Now())
		}
	}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 2)
	go func() { ad.Run(ctx, log); done <- struct{}{} }()
	var tickErr atomic.Value // the last tick error, as a string
	tickErr.Store("none")
	go func() {
		s.Run(ctx, time.Now, func(res soldier.TickResult, err error) {
			if err != nil {
				tickErr.Store(err.Error())
			} else {
				tickErr.Store(fmt.Sprintf("none (rps %g)", res.Report.RPS))
			}
		})
		done <- struct{}{}
	}()
	defer func() {
		cancel()
		<-done
		<-done
	}()
	if err := cconn.PublishDirective(ctx, directive(cfg, 1, time.Now())); err != nil {
		t.Fatal(err)
	}

	pods := map[string]int{} // live pods by phase@node, for failure messages
	state := func() (*autoscalingv2.HorizontalPodAutoscaler, *appsv1.Deployment, int) {
		h, _ := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web-0", metav1.GetOptions{})
		d, _ := env.Client.AppsV1().Deployments(ns).Get(ctx, "web-0", metav1.GetOptions{})
		list, _ := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web-0"})
		running := 0
		clear(pods)
		for _, p := range list.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			pods[fmt.Sprintf("%s@%s", p.Status.Phase, p.Spec.NodeName)]++
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == "fake-"+ns {
				running++
			}
		}
		return h, d, running
	}
	describe := func() string {
		h, d, running := state()
		return fmt.Sprintf("hpa [%d, %d] current %d, deployment spec %d ready %d, running on the fake node %d (pods %v), last tick error %s, last tick %s, metrics %+v",
			*h.Spec.MinReplicas, h.Spec.MaxReplicas, h.Status.CurrentReplicas, *d.Spec.Replicas, d.Status.ReadyReplicas, running, pods, tickErr.Load(), &rec, ad.Observer.Status())
	}

	// Up: demand for 6 replicas sets the bounds to [6, 9]; the HPA
	// controller raises the Deployment from 1 to its new min.
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		h, d, running := state()
		return *h.Spec.MinReplicas == 6 && h.Spec.MaxReplicas == 9 && *d.Spec.Replicas == 6 && running == 6, describe()
	})
	t.Logf("up: %s", describe())

	// Down: demand for 2 replicas (by requests, and by 6 pods' CPU at 15%
	// for a 50% target) sets the bounds to [2, 3]; the HPA
	// controller cuts the Deployment from 6 to its new max.
	prom.Load(t, promtest.Script(appSeries{ns: ns, pod: "web-0-6d4cf-x2k4p", ok: 10, cpu: 0.15, mem: 100})) // 10 rps; the pods at 15% CPU
	if err := cconn.PublishDirective(ctx, directive(cfg, 2, time.Now())); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		h, d, running := state()
		return *h.Spec.MinReplicas == 2 && h.Spec.MaxReplicas == 3 && *d.Spec.Replicas == 3 && running == 3, describe()
	})
	t.Logf("down: %s", describe())

	// What the HPA controller says about metrics, for the record.
	h, _, _ := state()
	for _, c := range h.Status.Conditions {
		if c.Type == autoscalingv2.ScalingActive {
			t.Logf("hpa ScalingActive=%s (%s): %s", c.Status, c.Reason, strings.TrimSpace(c.Message))
		}
	}
}

// lastRecord keeps the Soldier's last tick record, for failure messages.
type lastRecord struct {
	mu sync.Mutex
	r  soldier.Record
}

func (l *lastRecord) Record(r soldier.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r = r
}

func (l *lastRecord) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("{rung %v fallback %v reason %q changes %v guards %v}", l.r.Rung, l.r.Fallback, l.r.Reason, l.r.Changes, l.r.Guards)
}
