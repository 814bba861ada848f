package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/storage"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// loadProm serves the Prometheus HTTP API's instant queries from the real
// PromQL engine over per-pod request and CPU series of apps, at a request
// rate per pod the test sets (the same for every app), evaluated at a fixed
// time.
type loadProm struct {
	*httptest.Server
	t    *testing.T
	ns   string
	apps []string
	eng  *promql.Engine
	mu   sync.Mutex
	st   storage.Queryable
}

var promAt = time.Unix(600, 0)

func newLoadProm(t *testing.T, ns string, apps []string, rps float64) *loadProm {
	p := &loadProm{t: t, ns: ns, apps: apps,
		eng: promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})}
	p.set(rps)
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// set makes every app serve rps requests per second from its pod.
func (p *loadProm) set(rps float64) {
	var b strings.Builder
	b.WriteString("load 15s\n")
	for _, app := range p.apps {
		l := fmt.Sprintf(`namespace=%q,pod="%s-6d4cf-x2k4p"`, p.ns, app)
		fmt.Fprintf(&b, "  http_requests_total{%s,code=\"200\"} 0+%gx40\n", l, rps*15)
		fmt.Fprintf(&b, "  http_request_duration_seconds_bucket{%s,le=\"0.05\"} 0+%gx40\n", l, rps*15)
		fmt.Fprintf(&b, "  http_request_duration_seconds_bucket{%s,le=\"+Inf\"} 0+%gx40\n", l, rps*15)
		fmt.Fprintf(&b, "  container_cpu_usage_seconds_total{%s,container=\"app\"} 0+%gx40\n", l, 0.5*15)
		fmt.Fprintf(&b, "  kube_pod_container_resource_requests{%s,container=\"app\",resource=\"cpu\",unit=\"core\"} 1+0x40\n", l)
	}
	st := promqltest.LoadedStorage(p.t, b.String())
	p.mu.Lock()
	p.st = st
	p.mu.Unlock()
}

func (p *loadProm) serve(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	st := p.st
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	q, err := p.eng.NewInstantQuery(r.Context(), st, nil, r.FormValue("query"), promAt)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": "bad_data", "error": err.Error()})
		return
	}
	defer q.Close()
	res := q.Exec(r.Context())
	vec, ok := res.Value.(promql.Vector)
	if res.Err != nil || !ok {
		w.WriteHeader(http.StatusUnprocessableEntity)
		json.NewEncoder(w).Encode(map[string]string{"status": "error", "errorType": "execution", "error": fmt.Sprint(res.Err)})
		return
	}
	out := make([]map[string]any, len(vec))
	for i, s := range vec {
		out[i] = map[string]any{"metric": s.Metric.Map(), "value": [2]any{float64(s.T) / 1000, strconv.FormatFloat(s.F, 'f', -1, 64)}}
	}
	json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": out}})
}

// restartConfig is one domain of two apps on Deployments of namespace ns,
// actuated through their replicas, with a 20 s scale-down cooldown and
// 200 ms ticks.
func restartConfig(ns, promURL string) string {
	return fmt.Sprintf(`cluster "restart" {
  capacity_cores = 1000
}
soldier {
  tick                = "200ms"
  scale_down_cooldown = "20s"
  actuation           = "replicas"
  mode                = "active"
}
kubernetes {
  namespace       = %q
  lease_namespace = %q
  lease_duration  = "4s"
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
    count           = 2
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
`, ns, ns, promURL)
}

// replicaLog polls the apps' Deployments and keeps every change of their
// replicas with the time it was seen.
type replicaLog struct {
	mu      sync.Mutex
	last    map[string]int32
	changes []replicaChange
}

type replicaChange struct {
	app      string
	from, to int32
	at       time.Time
}

func (l *replicaLog) run(ctx context.Context, c kubernetes.Interface, ns string, apps []string) {
	for ctx.Err() == nil {
		for _, app := range apps {
			d, err := c.AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
			if err != nil {
				continue
			}
			n := *d.Spec.Replicas
			l.mu.Lock()
			if prev, ok := l.last[app]; ok && prev != n {
				l.changes = append(l.changes, replicaChange{app, prev, n, time.Now()})
			}
			l.last[app] = n
			l.mu.Unlock()
		}
		time.Sleep(20 * time.Millisecond) // the polling period
	}
}

func (l *replicaLog) snapshot() []replicaChange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]replicaChange(nil), l.changes...)
}

// TestKill9InsideACooldownScalesNothingDown runs a Soldier process on a
// real apiserver: under high load it scales its two apps up; the load then
// drops, and the Soldier is killed with SIGKILL 5 s into the 20 s
// scale-down cooldown and started again on the same data directory. The
// restarted Soldier must take its lease back at once, restore its decision
// state and scale no app down before the cooldown that began with its
// scale-up ends; it must scale them down after (or the test proves
// nothing). A Soldier that lost its state would scale down at its first
// tick, 15 s early.
func TestKill9InsideACooldownScalesNothingDown(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test; skipped with -short")
	}
	env := testenv.Require(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "restart"
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apps := []string{"web-0", "web-1"}
	for _, app := range apps {
		one := int32(1)
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Replicas: &one,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
						NodeSelector: map[string]string{"regiment.test/none": "true"}}}}} // pods stay pending: the test reads replicas only
		if _, err := env.Client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	prom := newLoadProm(t, ns, apps, 140) // 20 replicas each at 70% of 10 rps
	srv := startNATS(t)
	data := t.TempDir()
	cfgPath := filepath.Join(data, "restart.hcl")
	writeFile(t, cfgPath, restartConfig(ns, prom.URL))
	log := &replicaLog{last: map[string]int32{}}
	go log.run(ctx, env.Client, ns, apps)
	run := func() *proc {
		return start(t, "soldier-shop", "soldier", "--config", cfgPath, "--domain", "shop", "--nats", srv.ClientURL(),
			"--kubeconfig", env.Kubeconfig, "--data", data)
	}

	s := run()
	var up time.Time // when the last scale-up was seen: the cooldown ends 20 s after it at the latest
	waitFor(t, 30*time.Second, "both apps scaled up", func() (bool, string) {
		ups := map[string]bool{}
		for _, c := range log.snapshot() {
			if c.to > c.from {
				ups[c.app], up = true, c.at
			}
		}
		return len(ups) == len(apps), fmt.Sprint(log.snapshot())
	})
	prom.set(7)             // one replica's worth: the Soldier wants to scale both down
	time.Sleep(time.Second) // any further scale-up step has landed
	for _, c := range log.snapshot() {
		if c.to > c.from {
			up = c.at
		}
	}
	// The cooldown runs from the tick that decided the scale-up, which
	// came before the write was seen: by a tick and the poll, and on a
	// loaded machine by the API server's latency too (350 ms seen). A
	// Soldier that forgot the cooldown scales down at its restart, 15 s
	// early; one second of slack keeps that failure far outside it.
	cooldownEnd := up.Add(20*time.Second - time.Second)
	time.Sleep(time.Until(up.Add(5 * time.Second))) // the kill moment is the point of the test
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	killed := time.Now()
	s = run()
	s.waitLog(`decision state restored`, 15*time.Second)
	s.waitLog(`leading: this soldier acts`, 15*time.Second)
	restarted := time.Now()
	waitFor(t, 40*time.Second, "both apps scaled down after the cooldown", func() (bool, string) {
		downs := map[string]bool{}
		for _, c := range log.snapshot() {
			if c.to < c.from {
				downs[c.app] = true
			}
		}
		return len(downs) == len(apps), fmt.Sprint(log.snapshot())
	})
	for _, c := range log.snapshot() {
		if c.to < c.from && c.at.Before(cooldownEnd) {
			t.Errorf("%s scaled down %d -> %d at %s, before its cooldown ended at %s", c.app, c.from, c.to,
				c.at.Format(time.StampMilli), cooldownEnd.Format(time.StampMilli))
		}
		if c.to < c.from {
			t.Logf("%s scaled down %d -> %d %s after the cooldown's end (killed %s into it, acting again %s after the kill)",
				c.app, c.from, c.to, c.at.Sub(cooldownEnd).Round(time.Millisecond), killed.Sub(up).Round(time.Millisecond),
				restarted.Sub(killed).Round(time.Millisecond))
		}
	}
}
