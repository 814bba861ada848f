package kube_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/daemon"
)

// TestSoldierInModeOffGivesItsAppsBack: a Soldier process in active mode
// (on its baseline: no Commander) bounds its four apps' HPAs; its config is
// reloaded with mode "off" and at its next tick it gives every HPA its
// spec back byte for byte, with no regiment.io/ key left.
func TestSoldierInModeOffGivesItsAppsBack(t *testing.T) {
	env := testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := testNamespace(t, env.Client, "off")
	prom := kube.NewPromServer(t)
	var names []string
	for i := range 4 {
		name := fmt.Sprintf("web-%d", i)
		kube.CreateDeployment(t, env.Client, ns, name, 1)
		kube.CreateHPA(t, env.Client, ns, name, int32(2+i), int32(20+i))
		names = append(names, name)
	}
	prom.SetApps(t, ns, names, 52.5, 0.5) // 11 replicas each at 10 rps per replica and 50%
	hpas := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)
	state := func() (map[string]string, int) {
		l, err := hpas.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		specs, marks := map[string]string{}, 0
		for _, h := range l.Items {
			b, _ := json.Marshal(h.Spec)
			specs[h.Name] = string(b)
			for k := range h.Annotations {
				if strings.HasPrefix(k, "regiment.io/") {
					marks++
				}
			}
			for k := range h.Labels {
				if strings.HasPrefix(k, "regiment.io/") {
					marks++
				}
			}
		}
		return specs, marks
	}
	original, _ := state()

	path := filepath.Join(t.TempDir(), "k.hcl")
	write := func(mode string) {
		t.Helper()
		src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 1000
}
soldier {
  actuation          = "hpa-bounds"
  target_utilisation = 0.5
  tick               = "200ms"
  mode               = %q
}
kubernetes {
  namespace       = %[2]q
  lease_namespace = %[2]q
}
prometheus {
  url     = %[3]q
  max_age = "1m"
}
domain "shop" {
  floor = 0.5
  slo {
    latency_p99 = "200ms"
  }
  apps "web" {
    count           = 4
    cpu_per_replica = 0.1
    min_replicas    = 1
    max_replicas    = 40
    service_time    = "100ms"
    workload {
      name     = "web-{i}"
      selector = "app=web-{i}"
    }
  }
}
`, mode, ns, prom.URL())
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("active")
	cfg, err := config.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := startBus(t)
	var logs syncBuffer
	p := daemon.NewSoldierProcess(cfg, daemon.SoldierOptions{ConfigPath: path, Domain: "shop", Kubeconfig: env.Kubeconfig, DataDir: t.TempDir(),
		NATSURL: srv.ClientURL()}, daemon.Deps{}, nil, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}))
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; p.Close() }()

	poll := func(what string, ok func(specs map[string]string, marks int) bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			specs, marks := state()
			if ok(specs, marks) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20s: marks %d, specs %v\nlog:\n%s", what, marks, specs, logs.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	poll("active mode bounds every hpa", func(specs map[string]string, marks int) bool {
		for n, s := range specs {
			if s == original[n] {
				return false
			}
		}
		return marks > 0
	})
	write("off")
	p.Reload()
	poll("mode off gives every hpa back", func(specs map[string]string, marks int) bool {
		for n, s := range specs {
			if s != original[n] {
				return false
			}
		}
		return marks == 0
	})
	if l := logs.String(); !strings.Contains(l, "mode off: apps given back: restored=4") {
		t.Errorf("the restore is not logged:\n%s", l)
	}
}
