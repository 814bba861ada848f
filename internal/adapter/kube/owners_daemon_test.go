package kube_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/daemon"
)

// A Soldier process in replicas actuation says which app it leaves alone,
// and why: an HPA someone made on "web" is logged once and exported as
// regiment_soldier_app_foreign_owner; once the HPA is deleted the log says
// the Soldier acts on the app again and the gauge is gone.
func TestSoldierProcessReportsAppsWithAnotherOwner(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := testNamespace(t, env.Client, "owners")
	createDeployment(t, env.Client, ns, "web", nil, "100m")
	createDeployment(t, env.Client, ns, "api", nil, "100m")
	hpas := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)
	if _, err := hpas.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web-cpu"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
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
  apps "web" {
    cpu_per_replica = 0.1
    service_time    = "20ms"
  }
  apps "api" {
    cpu_per_replica = 0.1
    service_time    = "20ms"
  }
}
`, ns)
	cfg := parseConfig(t, src)
	srv := startBus(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var logs syncBuffer
	p := daemon.NewSoldierProcess(cfg, daemon.SoldierOptions{Domain: "shop", Kubeconfig: env.Kubeconfig, DataDir: t.TempDir(),
		NATSURL: srv.ClientURL(), Listen: addr}, daemon.Deps{}, nil, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}))
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; p.Close() }()

	gauge := `regiment_soldier_app_foreign_owner{app="web",domain="shop",owner="hpa/web-cpu"} 1`
	waitFor(t, func() (bool, string) {
		m := scrape(t, addr)
		return strings.Contains(m, gauge) && strings.Contains(logs.String(), "app left alone: another controller sets its replicas: app=shop/web owner=hpa/web-cpu"),
			"metrics:\n" + grep(m, "foreign_owner") + "\nlog:\n" + logs.String()
	})
	if strings.Contains(scrape(t, addr), `app="api"`+",domain=\"shop\",owner=") {
		t.Errorf("api has no other owner, yet a gauge")
	}
	if err := hpas.Delete(ctx, "web-cpu", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() (bool, string) {
		m := scrape(t, addr)
		return !strings.Contains(m, "regiment_soldier_app_foreign_owner{") && strings.Contains(logs.String(), "app no longer has another owner"),
			"metrics:\n" + grep(m, "foreign_owner") + "\nlog:\n" + logs.String()
	})
	if n := strings.Count(logs.String(), "app left alone"); n != 1 {
		t.Errorf("left alone logged %d times, want once:\n%s", n, logs.String())
	}
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func waitFor(t *testing.T, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ok, msg := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within 15s: %s", msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
