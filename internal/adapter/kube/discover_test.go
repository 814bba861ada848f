package kube_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/wire"
)

// A Soldier process whose domain discovers its apps finds the labelled
// Deployments of two namespaces without a list of them, takes one added and
// drops one deleted while it runs, keeps the app written in HCL over the
// workload it maps to, and sizes each discovered app by its pods' CPU
// requests.
func TestSoldierDiscoversAppsWithoutRestart(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := testNamespace(t, env.Client, "disc-a"), testNamespace(t, env.Client, "disc-b")
	labelled := func(ns, name, domain string, cpus ...string) {
		t.Helper()
		createDeployment(t, env.Client, ns, name, map[string]string{"regiment.io/domain": domain}, cpus...)
	}
	labelled(a, "api", "shop", "100m")
	labelled(a, "web", "shop", "500m")
	labelled(b, "auth", "shop", "200m")
	labelled(b, "ledger", "batch", "1")

	src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 100
}
soldier {
  tick      = "200ms"
  actuation = "replicas"
}
kubernetes {
  namespace       = %[1]q
  lease_namespace = %[1]q
}
domain "shop" {
  slo { latency_p99 = "200ms" }
  discover {
    namespaces   = [%[1]q, %[2]q]
    selector     = "regiment.io/domain=shop"
    service_time = "50ms"
    max_replicas = 20
  }
  apps "api" {
    cpu_per_replica = 1
    min_replicas    = 3
    max_replicas    = 7
    service_time    = "20ms"
  }
}
`, a, b)
	cfg := parseConfig(t, src)
	srv := startBus(t)
	var logs syncBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
	p := daemon.NewSoldierProcess(cfg, daemon.SoldierOptions{Domain: "shop", Kubeconfig: env.Kubeconfig, DataDir: t.TempDir(),
		NATSURL: srv.ClientURL()}, daemon.Deps{}, nil, log)
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; p.Close() }()

	// apps is "name cpu min-max" per app, in order.
	apps := func() string {
		var out []string
		for _, x := range p.Apps() {
			out = append(out, fmt.Sprintf("%s %g %d-%d", x.Name, x.CPU, x.Min, x.Max))
		}
		return strings.Join(out, "; ")
	}
	// Searching two namespaces, a discovered app is "<namespace>_<name>".
	want := fmt.Sprintf("shop/api 1 3-7; shop/%s_web 0.5 1-20; shop/%s_auth 0.2 1-20", a, b)
	if got := apps(); got != want {
		t.Fatalf("apps at open:\n got %s\nwant %s", got, want)
	}
	// One added (two containers: 0.1 + 0.15 cores a pod), one deleted.
	labelled(b, "pay", "shop", "100m", "150m")
	if err := env.Client.AppsV1().Deployments(a).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("shop/api 1 3-7; shop/%[1]s_auth 0.2 1-20; shop/%[1]s_pay 0.25 1-20", b)
	deadline := time.Now().Add(10 * time.Second)
	for apps() != want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := apps(); got != want {
		t.Fatalf("apps after adding pay and deleting web:\n got %s\nwant %s\nlog:\n%s", got, want, logs.String())
	}
	// The Soldier keeps ticking over the new apps: observer and core agree.
	time.Sleep(600 * time.Millisecond) // three ticks
	if l := logs.String(); strings.Contains(l, "tick failed") || !strings.Contains(l, "discovered apps changed") {
		t.Errorf("want the change logged and no failed tick:\n%s", l)
	}
}

func testNamespace(t *testing.T, c kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}) })
	return ns.Name
}

// createDeployment creates a Deployment of one pod labelled app=name with
// one container per CPU request given.
func createDeployment(t *testing.T, c kubernetes.Interface, ns, name string, labels map[string]string, cpus ...string) {
	t.Helper()
	pods := map[string]string{"app": name}
	var spec corev1.PodSpec
	for i, cpu := range cpus {
		spec.Containers = append(spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "example.invalid/app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}})
	}
	one := int32(1)
	_, err := c.AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: pods},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pods}, Spec: spec}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An operator's replica pin on an app the Soldier found by label, sent as
// `regiment override replicas` sends it (the config it reads lists no such
// app), is taken by the running Soldier and written to the workload; a pin
// on an app the Soldier does not run is refused by the Soldier, which
// names it.
func TestOverridePinsDiscoveredApp(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := testNamespace(t, env.Client, "disc-pin")
	createDeployment(t, env.Client, ns, "cart", map[string]string{"regiment.io/domain": "shop"}, "100m")
	src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 100
}
soldier {
  tick      = "200ms"
  actuation = "replicas"
}
kubernetes {
  namespace       = %[1]q
  lease_namespace = %[1]q
}
domain "shop" {
  slo { latency_p99 = "200ms" }
  discover {
    namespaces   = [%[1]q]
    selector     = "regiment.io/domain=shop"
    service_time = "50ms"
    max_replicas = 20
  }
}
`, ns)
	cfg := parseConfig(t, src)
	srv := startBus(t)
	var logs syncBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
	p := daemon.NewSoldierProcess(cfg, daemon.SoldierOptions{Domain: "shop", Kubeconfig: env.Kubeconfig, DataDir: t.TempDir(),
		NATSURL: srv.ClientURL()}, daemon.Deps{}, nil, log)
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; p.Close() }()
	if apps := p.Apps(); len(apps) != 1 || apps[0].Name != "shop/cart" {
		t.Fatalf("apps %+v, want shop/cart discovered", apps)
	}

	pin := func(app string) wire.OverrideAck {
		t.Helper()
		o, err := daemon.BuildOverride(cfg, "replicas", daemon.OverrideRequest{App: app, Replicas: 4, For: 10 * time.Minute,
			Reason: "INC-1: hold", By: "alice", Share: -1}, time.Now().UTC())
		if err != nil {
			t.Fatalf("build the override of %s from a config without it: %v", app, err)
		}
		conn, _, err := daemon.ConnectOperator(ctx, cfg, srv.ClientURL(), "", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		defer rcancel()
		a, err := conn.RequestOverride(rctx, o)
		if err != nil {
			t.Fatalf("pin %s: %v", app, err)
		}
		return a
	}
	if a := pin("shop/cart"); !a.Accepted || a.From != "soldier" {
		t.Fatalf("pin of the discovered shop/cart: %+v, want accepted by the Soldier\nlog:\n%s", a, logs.String())
	}
	if a := pin("shop/nope"); a.Accepted || !strings.Contains(a.Reason, "shop/nope is not an app of domain shop") {
		t.Errorf("pin of an app the Soldier does not run: %+v, want refused by the Soldier naming it", a)
	}
	deadline := time.Now().Add(15 * time.Second)
	var replicas int32
	for time.Now().Before(deadline) {
		d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, "cart", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if replicas = *d.Spec.Replicas; replicas == 4 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("cart has %d replicas, want the pinned 4\nlog:\n%s", replicas, logs.String())
}
