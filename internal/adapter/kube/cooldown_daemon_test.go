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

// TestRestartInTheCooldownScalesDownNoEarlier: a Soldier process scales an
// app up, its demand falls at once, and the process restarts on the same
// data directory in the middle of the scale-down cooldown. The restarted
// Soldier keeps the original spec Regiment recorded, writes no scale-down
// before the cooldown counted from the scale-up before the restart has
// passed, scales down once it has, and in mode off gives the app its
// original spec back.
//
// The cooldown (15 s) is longer than the stabilisation window (30 ticks of
// 200 ms, 6 s), so a Soldier that forgot its last scale-up at the restart
// would scale down about 6 s after it, held by the window alone, and one
// that restored no state at its first tick.
func TestRestartInTheCooldownScalesDownNoEarlier(t *testing.T) {
	const (
		tick     = 200 * time.Millisecond
		cooldown = 15 * time.Second
		restart  = 3 * time.Second // after the scale-up, well within the cooldown
		// slack covers the time between a tick's clock reading, which
		// starts the cooldown, and its write, which the test sees.
		slack = time.Second
	)
	env := testenv.Require(t)
	for _, c := range []struct {
		name      string
		actuation string
		up, down  int32  // the replicas written: the HPA's minReplicas, or the Deployment's replicas
		original  string // the spec Regiment records to restore
	}{
		{"hpa bounds", "hpa-bounds", 6, 2, `{"minReplicas":1,"maxReplicas":10}`},
		{"replicas", "replicas", 6, 2, `{"replicas":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ns := testenv.Namespace(t, env.Client)
			kube.CreateDeployment(t, env.Client, ns, "web-0", 1)
			hpas := c.actuation == "hpa-bounds"
			if hpas {
				kube.CreateHPA(t, env.Client, ns, "web-0", 1, 10)
			}
			prom := kube.NewPromServer(t)
			prom.SetApps(t, ns, []string{"web-0"}, 30, 0.5) // 6 replicas at 10 rps per replica and 50%

			// app reads what the Soldier writes: the level it sets, the
			// object's spec, its recorded original and its regiment.io/ keys.
			type app struct {
				level    int32
				spec     string
				original string
				marks    int
			}
			read := func() app {
				t.Helper()
				var (
					a      app
					spec   any
					labels map[string]string
					notes  map[string]string
				)
				if hpas {
					h, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web-0", metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					a.level, spec, labels, notes = *h.Spec.MinReplicas, h.Spec, h.Labels, h.Annotations
				} else {
					d, err := env.Client.AppsV1().Deployments(ns).Get(ctx, "web-0", metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					a.level, spec, labels, notes = *d.Spec.Replicas, d.Spec, d.Labels, d.Annotations
				}
				b, _ := json.Marshal(spec)
				a.spec, a.original = string(b), notes[kube.AnnotationOriginal]
				for _, m := range []map[string]string{labels, notes} {
					for k := range m {
						if strings.HasPrefix(k, "regiment.io/") {
							a.marks++
						}
					}
				}
				return a
			}
			before := read()

			path := filepath.Join(t.TempDir(), "k.hcl")
			write := func(mode string) {
				t.Helper()
				src := fmt.Sprintf(`cluster "k" {
  capacity_cores = 1000
}
soldier {
  actuation           = %q
  target_utilisation  = 0.5
  tick                = %q
  scale_down_cooldown = %q
  mode                = %q
}
kubernetes {
  namespace       = %[5]q
  lease_namespace = %[5]q
  hpa_headroom    = 0.5
}
prometheus {
  url     = %[6]q
  max_age = "1m"
}
domain "shop" {
  floor = 0.5
  slo {
    latency_p99 = "200ms"
  }
  apps "web" {
    count           = 1
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
`, c.actuation, tick, cooldown, mode, ns, prom.URL())
				if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("active")
			srv := startBus(t)
			data := t.TempDir() // the store, soldier-shop.db, both processes open
			var logs syncBuffer // both processes'
			// start opens and runs a Soldier process on data; stop stops and
			// closes it, as a SIGTERM would.
			start := func() (p *daemon.SoldierProcess, stop func()) {
				t.Helper()
				cfg, err := config.LoadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				p = daemon.NewSoldierProcess(cfg, daemon.SoldierOptions{ConfigPath: path, Domain: "shop", Kubeconfig: env.Kubeconfig, DataDir: data,
					NATSURL: srv.ClientURL()}, daemon.Deps{}, nil, hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info}))
				if err := p.Open(ctx); err != nil {
					t.Fatal(err)
				}
				pctx, stopRun := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() { p.Run(pctx); close(done) }()
				stopped := false
				stop = func() {
					if !stopped {
						stopped = true
						stopRun()
						<-done
						p.Close()
					}
				}
				t.Cleanup(stop)
				return p, stop
			}
			// poll reads the app every 50 ms until ok says it is done, and
			// fails past deadline.
			poll := func(what string, deadline time.Time, ok func(a app, at time.Time) bool) {
				t.Helper()
				for {
					at := time.Now() // before the read: what it sees was written after at, or before the read ended
					a := read()
					if ok(a, at) {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: not by the deadline: %+v\nlog:\n%s", what, a, logs.String())
					}
					time.Sleep(50 * time.Millisecond)
				}
			}

			_, stop := start()
			// Up. notUp is the last read that did not see the scale-up, begun
			// before the write: the tick that wrote it read its clock at most
			// slack earlier.
			var notUp time.Time
			poll("the scale-up", time.Now().Add(30*time.Second), func(a app, at time.Time) bool {
				if a.level != c.up {
					notUp = at
					return false
				}
				return true
			})
			if notUp.IsZero() {
				t.Fatal("scaled up before the first read")
			}
			cooledAt := notUp.Add(cooldown - slack) // no scale-down seen before this
			t.Logf("scaled up to %d within %s of %s", c.up, time.Since(notUp).Round(time.Millisecond), notUp.Format("15:04:05.000"))

			// Down: the demand falls to 2 replicas (10 rps, 15% CPU), held
			// by the cooldown. The process restarts in its middle.
			prom.SetApps(t, ns, []string{"web-0"}, 10, 0.15)
			poll("the restart", notUp.Add(restart+5*time.Second), func(a app, at time.Time) bool {
				if a.level != c.up {
					t.Fatalf("scaled to %d %s after the scale-up, before the restart: the cooldown is %s\nlog:\n%s", a.level, at.Sub(notUp), cooldown, logs.String())
				}
				return time.Since(notUp) >= restart
			})
			stop()
			if a := read(); a.original != c.original {
				t.Fatalf("original %q recorded after the first process, want %q", a.original, c.original)
			}
			restarted := time.Now()
			q, _ := start()
			var down time.Time
			poll("the scale-down after the cooldown", cooledAt.Add(20*time.Second), func(a app, at time.Time) bool {
				if a.original != c.original {
					t.Fatalf("original %q recorded after the restart, want %q", a.original, c.original)
				}
				if a.level == c.up {
					return false
				}
				if seen := time.Now(); down.IsZero() {
					down = seen
					if seen.Before(cooledAt) {
						t.Fatalf("scaled down to %d %s after the scale-up (restarted %s after it), before the %s cooldown ended\nlog:\n%s",
							a.level, seen.Sub(notUp).Round(time.Millisecond), restarted.Sub(notUp).Round(time.Millisecond), cooldown, logs.String())
					}
				}
				return a.level == c.down
			})
			t.Logf("restarted %s after the scale-up, scaled down to %d %s after it (cooldown %s)",
				restarted.Sub(notUp).Round(time.Millisecond), c.down, down.Sub(notUp).Round(time.Millisecond), cooldown)
			if l := logs.String(); !strings.Contains(l, "decision state restored") {
				t.Errorf("the restarted Soldier did not restore its decision state:\n%s", l)
			}

			// Mode off: the app gets the spec it had before Regiment, and no
			// regiment.io/ key is left.
			write("off")
			q.Reload()
			poll("mode off gives the app back", time.Now().Add(20*time.Second), func(a app, _ time.Time) bool {
				return a.spec == before.spec && a.marks == 0
			})
		})
	}
}
