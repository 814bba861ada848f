package kube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/wire"
)

// reportsSent is a hand-written Publisher that keeps the last report.
type reportsSent struct {
	n    int
	last wire.DomainReport
}

func (r *reportsSent) PublishReport(_ context.Context, rep wire.DomainReport) error {
	r.n, r.last = r.n+1, rep
	return nil
}

// TestRecommendModeWritesNothingToTheAPIServer runs a Soldier in recommend
// mode (and in shadow, its alias) for 36 ticks over four Deployments with
// HPAs on a real kube-apiserver, through a client that counts every write
// request: none reaches a Deployment, a scale subresource, an HPA or a
// StatefulSet (the Soldier's lease is renewed as in every mode: its writes
// are counted and logged, not forbidden). The Soldier still reports, and the
// daemon's per-app gauges hold the real observations (each Deployment's
// replicas, each HPA's bounds) beside the recommendation and the baseline's
// sizing (11 replicas for 52.5 rps at 10 per replica and 50%). In active mode
// the same setup writes the HPAs, so the counter can fail.
func TestRecommendModeWritesNothingToTheAPIServer(t *testing.T) {
	env := testenv.Require(t)
	for _, tc := range []struct {
		mode   string
		writes bool
	}{{"recommend", false}, {"shadow", false}, {"active", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			ns := testenv.Namespace(t, env.Client)
			const apps, ticks = 4, 36
			prom := kube.NewPromServer(t)
			var names []string
			for i := range apps {
				name := fmt.Sprintf("web-%d", i)
				kube.CreateDeployment(t, env.Client, ns, name, int32(3+i))
				kube.CreateHPA(t, env.Client, ns, name, 2, int32(20+i))
				names = append(names, name)
			}
			prom.SetApps(t, ns, names, 52.5, 0.5) // 11 replicas at 10 rps each and 50%
			cfg := kube.SoldierTestConfig(t, ns, prom.URL(), apps, fmt.Sprintf(`  actuation = "hpa-bounds"
  target_utilisation = 0.5
  mode = %q`, tc.mode))
			w := kube.NewWriteAttempts()
			ad, err := kube.NewAdapter(w.Client(t, env.Config), cfg, "shop", "soldier-0")
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
			pub := &reportsSent{}
			s := soldier.New(scfg, &soldier.SqrtStaffing{}, ad.Observer, ad.Actuator, pub, nil)
			reg := prometheus.NewPedanticRegistry()
			m := daemon.NewMetrics(reg, "soldier")

			now := time.Now()
			for tick := range ticks {
				if tick%6 == 0 {
					acceptDirective(t, s, cfg, uint64(tick+1), now)
				}
				res, err := s.Tick(ctx, now)
				if err != nil {
					t.Fatalf("tick %d: %v", tick, err)
				}
				m.SoldierTick(res, nil, 0)
				now = now.Add(10 * time.Second)
			}
			workloads := w.Of("deployments", "statefulsets", "horizontalpodautoscalers")
			t.Logf("%s: %d ticks x %d apps: %d workload and HPA write requests, %d lease writes; all writes %s",
				tc.mode, ticks, apps, workloads, w.Of("leases"), w)
			if pub.n != ticks || pub.last.Mode != tc.mode {
				t.Errorf("%d reports, the last in mode %q; want %d in mode %s", pub.n, pub.last.Mode, ticks, tc.mode)
			}
			if tc.writes {
				if workloads == 0 {
					t.Fatalf("active mode made no write request: the counter sees nothing")
				}
				if got := gauges(t, reg); len(got) != 0 {
					t.Errorf("active mode exports the recommend gauges %v, want none", got)
				}
				return
			}
			if workloads != 0 {
				t.Fatalf("%s mode made %d write requests to workloads and HPAs: %s", tc.mode, workloads, w)
			}
			g := gauges(t, reg)
			for i := range apps {
				app := fmt.Sprintf("web-%d", i)
				at := func(name string) float64 { return g["regiment_soldier_"+name+"{domain=shop,app="+app+"}"] }
				live, lo, hi := at("live_replicas"), at("live_hpa_min_replicas"), at("live_hpa_max_replicas")
				if rec, base := at("recommended_replicas"), at("baseline_replicas"); rec != 11 || base != 11 {
					t.Errorf("%s: recommended %g, baseline %g; want 11 both", app, rec, base)
				}
				if live != float64(3+i) || lo != 2 || hi != float64(20+i) {
					t.Errorf("%s: live %g, hpa [%g, %g]; want the Deployment's %d and the HPA's [2, %d]", app, live, lo, hi, 3+i, 20+i)
				}
			}
		})
	}
}

// gauges is every per-app recommend-mode gauge of reg, as
// "name{domain=d,app=a}" -> value.
func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var domain, app string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "domain":
					domain = l.GetValue()
				case "app":
					app = l.GetValue()
				}
			}
			if app != "" && m.Gauge != nil {
				out[mf.GetName()+"{domain="+domain+",app="+app+"}"] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}
