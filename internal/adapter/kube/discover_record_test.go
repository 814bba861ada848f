package kube_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/daemon"
)

// A discovering Soldier describes in its episode every app it decided for
// (recording.AppMeta), for `regiment report`: the apps found at start, one
// found while it runs, and one deleted meanwhile (its last description
// kept), each with its namespace, workload and pods' CPU request, and the
// app written in HCL with the config's.
func TestSoldierRecordsItsDiscoveredAppsInTheEpisode(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := testNamespace(t, env.Client, "rec-a")
	createDeployment(t, env.Client, a, "api", map[string]string{"regiment.io/domain": "shop"}, "100m")
	createDeployment(t, env.Client, a, "web", map[string]string{"regiment.io/domain": "shop"}, "500m")
	cfg := parseConfig(t, fmt.Sprintf(`cluster "k" {
  capacity_cores = 100
}
soldier {
  tick      = "200ms"
  actuation = "replicas"
  mode      = "recommend"
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
  apps "api" {
    cpu_per_replica = 1
    service_time    = "20ms"
  }
}
`, a))
	srv := startBus(t)
	var logs syncBuffer
	dir := t.TempDir()
	p := daemon.NewSoldierProcess(cfg, daemon.SoldierOptions{Domain: "shop", Kubeconfig: env.Kubeconfig, DataDir: dir,
		NATSURL: srv.ClientURL()}, daemon.Deps{}, nil, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}))
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	stop := func() { cancel(); <-done; p.Close() }
	defer stop()

	createDeployment(t, env.Client, a, "pay", map[string]string{"regiment.io/domain": "shop"}, "100m", "150m")
	if err := env.Client.AppsV1().Deployments(a).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "discovered apps changed") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	stop()

	st, err := store.Open(filepath.Join(dir, "soldier-shop.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eps, err := st.Episodes()
	if err != nil || len(eps) != 1 {
		t.Fatalf("episodes %v, %v; want one", eps, err)
	}
	got := recording.AppsOf(eps[0].Meta)
	want := map[string]recording.AppMeta{
		"shop/api": {Kind: "Deployment", Namespace: a, Workload: "api", HPA: "api", CPUPerReplica: 1, ServiceTimeSeconds: 0.02, Concurrency: 1, MinReplicas: 1, MaxReplicas: 100},
		"shop/web": {Kind: "Deployment", Namespace: a, Workload: "web", HPA: "web", Discovered: true, CPUPerReplica: 0.5, ServiceTimeSeconds: 0.05, Concurrency: 1, MinReplicas: 1, MaxReplicas: 20},
		"shop/pay": {Kind: "Deployment", Namespace: a, Workload: "pay", HPA: "pay", Discovered: true, CPUPerReplica: 0.25, ServiceTimeSeconds: 0.05, Concurrency: 1, MinReplicas: 1, MaxReplicas: 20},
	}
	if len(got) != len(want) {
		t.Errorf("the episode describes %d apps, want %d: %+v\nlog:\n%s", len(got), len(want), got, logs.String())
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s described as %+v, want %+v", name, got[name], w)
		}
	}
}
