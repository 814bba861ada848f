package kube_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/bus/bustest"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/wire"
)

// A leading Commander process with kubernetes { pool_node_selector } shares
// out what the pool may grow to: directive cores are share x (the pool's
// max, pool_max_cores within capacity_cores, less what others request on
// its nodes). A pod not Regiment's takes its request from it; a node added
// does not add to it (the nodes there now do not bound the budgets), and a
// node removed gives back its pods' requests.
func TestCommanderSharesThePoolsNodes(t *testing.T) {
	env := testenv.RequireFull(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := testNamespace(t, env.Client, "pool")
	node := func(name string) {
		t.Helper()
		n := testenv.FakeNode(name, "8")
		n.Labels["regiment-test-pool"] = ns
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "regiment-test-pool", Value: ns, Effect: corev1.TaintEffectNoSchedule})
		if _, err := env.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { env.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	node(ns + "-a")
	src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 1000
}
commander {
  tick   = "200ms"
  policy = "forecast"
}
kubernetes {
  namespace          = %[1]q
  pool_node_selector = "regiment-test-pool=%[1]s"
  pool_max_cores     = 40
}
`+shopOnThePool, ns)
	logs, conn := startPoolCommander(t, ctx, env, src)
	var mu sync.Mutex
	var last wire.Directive
	if _, err := conn.SubscribeDirectives("shop", func(d wire.Directive, err error) {
		if err == nil {
			mu.Lock()
			last = d
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	bustest.ReportAsSoldier(t, conn, "k", "shop")
	pool := func(want float64) {
		t.Helper()
		deadline := time.Now().Add(poolWait)
		for {
			mu.Lock()
			d := last
			mu.Unlock()
			if d.Share > 0 && math.Abs(d.Cores/d.Share-want) < 1e-9 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("directive %+v: pool %g cores, want %g", d, d.Cores/d.Share, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	pool(40)
	cron := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cron", Labels: map[string]string{"app": "cron"}},
		Spec: corev1.PodSpec{NodeName: ns + "-a", Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "c", Image: "example.invalid/cron",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}}}
	if _, err := env.Client.CoreV1().Pods(ns).Create(ctx, cron, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pool(37)
	node(ns + "-b")
	waitLog(t, logs, "cores=13 nodes=2")
	pool(37)
	if err := env.Client.CoreV1().Nodes().Delete(ctx, ns+"-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pool(40)
	if l := logs.String(); !strings.Contains(l, "shared_cores=37") {
		t.Errorf("the shared capacity is not logged:\n%s", l)
	}
}

// A leading Commander process with kubernetes { balloon_pod_cores } holds
// its capacity plan on the pool: the Soldier reports 6 cores in use, the
// plan with pool_spare 0.5 is 9 cores, none of it used on the pool's nodes
// by Regiment's pods, so Deployment regiment-balloon asks for ceil(9 / 2) = 5
// pods of 2 cores of the balloon PriorityClass on the pool's nodes, with
// the tolerations of balloon_tolerations.
func TestCommanderHoldsThePlanWithBalloons(t *testing.T) {
	env := testenv.RequireFull(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := testNamespace(t, env.Client, "balloon")
	balloonPool(t, ctx, env, ns)
	src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 1000
}
commander {
  tick       = "200ms"
  policy     = "forecast"
  pool_spare = 0.5
}
kubernetes {
  namespace              = %[1]q
  pool_node_selector     = "regiment-test-pool=%[1]s"
  balloon_pod_cores      = 2
  balloon_priority_class = %[1]q
  balloon_tolerations    = ["dedicated=apps:NoSchedule", "spot"]
}
`+shopOnThePool, ns)
	logs, conn := startPoolCommander(t, ctx, env, src)

	d := waitBalloons(t, ctx, env, conn, ns, 5, logs)
	spec := d.Spec.Template.Spec
	wantTols := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps", Effect: corev1.TaintEffectNoSchedule},
		{Key: "spot", Operator: corev1.TolerationOpExists}}
	if spec.PriorityClassName != ns || spec.NodeSelector["regiment-test-pool"] != ns ||
		spec.Containers[0].Resources.Requests.Cpu().String() != "2" || !reflect.DeepEqual(spec.Tolerations, wantTols) {
		t.Errorf("balloon pod spec: priority class %q, node selector %v, cpu %v, tolerations %+v", spec.PriorityClassName, spec.NodeSelector,
			spec.Containers[0].Resources.Requests.Cpu(), spec.Tolerations)
	}
	if !strings.Contains(logs.String(), "holding the capacity plan with balloon pods") {
		t.Errorf("the balloons are not logged:\n%s", logs.String())
	}
}

// A calendar event within its lead is held by the same balloons: the
// Soldier reports 6 cores in use and the config's calendar has a sale on
// shop at 3x starting in ten minutes (lead 20 minutes, ramp 1 s), so the
// plan is 18 cores and Deployment regiment-balloon asks for ceil(18 / 2) = 9
// pods; without the event it would be 3. The Commander calls no cloud API:
// the pods are the whole of it.
func TestCommanderHoldsTheCalendarsEventWithBalloons(t *testing.T) {
	env := testenv.RequireFull(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := testNamespace(t, env.Client, "calendar")
	balloonPool(t, ctx, env, ns)
	start := time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)
	src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 1000
}
commander {
  tick   = "200ms"
  policy = "forecast"
}
kubernetes {
  namespace              = %[1]q
  pool_node_selector     = "regiment-test-pool=%[1]s"
  pool_max_cores         = 40
  balloon_pod_cores      = 2
  balloon_priority_class = %[1]q
}
calendar {
  lead = "20m"
  ramp = "1s"
  event "sale" {
    domain   = "shop"
    start    = %[2]q
    duration = "1h"
    load     = 3
  }
}
`+shopOnThePool, ns, start)
	logs, conn := startPoolCommander(t, ctx, env, src)

	d := waitBalloons(t, ctx, env, conn, ns, 9, logs)
	if got := d.Spec.Template.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "2" {
		t.Errorf("balloon pods of %s cores, want 2", got)
	}
}

// balloonPool makes the pool of the balloon tests: one node of 8 cores
// labelled regiment-test-pool=ns and a balloon PriorityClass named ns.
func balloonPool(t *testing.T, ctx context.Context, env *testenv.Env, ns string) {
	t.Helper()
	n := testenv.FakeNode(ns+"-a", "8")
	n.Labels["regiment-test-pool"] = ns
	if _, err := env.Client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Client.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
	never := corev1.PreemptNever
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns}, Value: -1000, PreemptionPolicy: &never}
	if _, err := env.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		env.Client.SchedulingV1().PriorityClasses().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
}

// waitBalloons reports 6 cores in use for shop on conn until Deployment
// regiment-balloon in ns asks for want pods, and returns it; it fails t
// after poolWait, naming the replicas it saw.
func waitBalloons(t *testing.T, ctx context.Context, env *testenv.Env, conn *bus.Conn, ns string, want int32, logs *syncBuffer) *appsv1.Deployment {
	t.Helper()
	deadline := time.Now().Add(poolWait)
	for seq := uint64(1); ; seq++ {
		r := wire.DomainReport{Version: wire.Version, Cluster: "k", Domain: "shop", Seq: seq, SentAt: time.Now(), Mode: "active", CoresUsed: 6, DemandCores: 6}
		if err := conn.PublishReport(ctx, r); err != nil {
			t.Fatal(err)
		}
		d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, "regiment-balloon", metav1.GetOptions{})
		if err == nil && *d.Spec.Replicas == want {
			return d
		}
		if time.Now().After(deadline) {
			got := "none"
			if err == nil {
				got = fmt.Sprint(*d.Spec.Replicas)
			}
			t.Fatalf("balloon replicas %s (%v), want %d; log:\n%s", got, err, want, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startPoolCommander runs a Commander process of config src on env until
// ctx ends (then closed, in t's cleanup), with a bus of its own, and
// returns its log and a connection to that bus as the shop domain's
// Soldier.
func startPoolCommander(t *testing.T, ctx context.Context, env *testenv.Env, src string) (*syncBuffer, *bus.Conn) {
	t.Helper()
	cfg := parseConfig(t, src)
	srv := startBus(t)
	logs := &syncBuffer{}
	p := daemon.NewCommanderProcess(cfg, daemon.CommanderOptions{Kubeconfig: env.Kubeconfig, NATSURL: srv.ClientURL(), DataDir: t.TempDir()},
		daemon.Deps{}, hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info}))
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	t.Cleanup(func() { <-done; p.Close() })
	conn, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Cluster: "k", Name: "soldier-shop"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return logs, conn
}

// poolWait is how long the pool tests wait for the Commander to see a node
// change: kwok marks a new node Ready within a second on an idle machine,
// but took over 24 s in CI with other packages' tests beside it.
const poolWait = 2 * time.Minute

// waitLog waits until logs hold want.
func waitLog(t *testing.T, logs *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(poolWait); !strings.Contains(logs.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("no %q logged:\n%s", want, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shopOnThePool is the one-app domain the pool Commander tests share out.
const shopOnThePool = `domain "shop" {
  floor = 0.5
  slo { latency_p99 = "200ms" }
  apps "web" {
    cpu_per_replica = 1
    service_time    = "20ms"
  }
}
`
