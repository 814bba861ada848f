package sim

import (
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// world is a one-domain cluster for tests: apps "a" (count n) calling "b".
func world(capacityCores float64, peakRPS float64, flat bool) (*domains.Config, *domains.Scenario, map[string][]trace.Series) {
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: capacityCores, NodeCores: 8, NodeProvisionTime: 2 * time.Minute},
		Domains: []domains.Domain{{
			Name: "d", SLO: domains.SLO{LatencyP99: 300 * time.Millisecond},
			AppSets: []domains.AppSet{
				{Name: "a", Count: 2, CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 100, ServiceTime: 20 * time.Millisecond, Concurrency: 2, DependsOn: []string{"d/b"}},
				{Name: "b", Count: 1, CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 100, ServiceTime: 10 * time.Millisecond, Concurrency: 2},
			},
		}},
	}
	cfg.Defaults()
	sc := &domains.Scenario{Name: "t", Duration: time.Hour, Seed: 7, Noise: 0.05,
		Traffic: []domains.Traffic{{Domain: "d", Trace: "mem", Format: domains.FormatTimeseries, PeakRPS: peakRPS}}}
	sc.Defaults()
	vals := make([]float64, 120)
	for i := range vals {
		vals[i] = 100
		if !flat && i >= 20 {
			vals[i] = 400 // a step up 20 minutes in
		}
	}
	return cfg, sc, map[string][]trace.Series{"d": {{Name: "mem", Values: vals}}}
}

type hold struct{}

func (hold) Decide(time.Time, *Telemetry, []int32) {}

type fixed int32

func (f fixed) Decide(_ time.Time, _ *Telemetry, targets []int32) {
	for i := range targets {
		targets[i] = int32(f)
	}
}

func mustNew(t testing.TB, cfg *domains.Config, sc *domains.Scenario, tr map[string][]trace.Series) *Sim {
	t.Helper()
	s, err := New(cfg, sc, tr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSameSeedSameRun(t *testing.T) {
	cfg, sc, tr := world(400, 400, false)
	run := func() (Metrics, AppTelemetry) {
		s := mustNew(t, cfg, sc, tr)
		m := s.Run(hold{})
		return m, s.tel[s.step%len(s.tel)].Apps[0]
	}
	a, lastA := run()
	b, lastB := run()
	if a.CostCoreHours != b.CostCoreHours || a.BreachAppMinutes != b.BreachAppMinutes || a.SLOCompliance != b.SLOCompliance || lastA != lastB {
		t.Fatalf("same seed, different runs:\n%+v %+v\n%+v %+v", a, lastA, b, lastB)
	}
	sc.Seed = 8
	if _, lastC := run(); lastC == lastA {
		t.Fatalf("a different seed gave the same last tick: %+v", lastC)
	}
}

func TestInitialReplicasMeetDemand(t *testing.T) {
	cfg, sc, tr := world(400, 400, true)
	s := mustNew(t, cfg, sc, tr)
	m := s.Run(hold{})
	if m.SLOCompliance < 0.99 {
		t.Fatalf("flat demand at sized replicas: compliance %.3f, want >= 0.99", m.SLOCompliance)
	}
}

func TestOverloadBuildsBacklogAndTimeouts(t *testing.T) {
	cfg, sc, tr := world(400, 400, false)
	s := mustNew(t, cfg, sc, tr)
	for s.Now().Sub(s.sc.Start) < 40*time.Minute {
		s.Step() // replicas stay as sized for 100 while demand steps to 400
	}
	a := s.tel[s.step%len(s.tel)].Apps[0]
	if a.Backlog <= 0 || a.ErrorRate < 0.5 || a.P99 < 1 {
		t.Fatalf("4x overload for 20 minutes: backlog %.0f, error rate %.2f, p99 %.2fs; want a backlog, timeouts and p99 near the 5s timeout", a.Backlog, a.ErrorRate, a.P99)
	}
}

func TestCalleeLatencyAndErrorsReachCallers(t *testing.T) {
	cfg, sc, tr := world(400, 400, true)
	s := mustNew(t, cfg, sc, tr)
	s.Step()
	tel := s.tel[s.step%len(s.tel)]
	a, b := tel.Apps[0], tel.Apps[2]
	own := Queue{Lambda: a.RPS, Mu: 50, C: int(a.Ready) * 2}.P99()
	if math.Abs(a.P99-(own+b.P99)) > 1e-9 {
		t.Fatalf("caller p99 %.4f, want own %.4f + callee %.4f", a.P99, own, b.P99)
	}
	if b.RPS < tel.Apps[0].RPS+tel.Apps[1].RPS-1e-9 {
		t.Fatalf("callee arrivals %.1f below its callers' %.1f", b.RPS, tel.Apps[0].RPS+tel.Apps[1].RPS)
	}
	// Starve the callee: its timeouts become the callers' errors.
	s.targets[2] = 0
	s.Step()
	tel = s.tel[s.step%len(s.tel)]
	if tel.Apps[2].ErrorRate != 1 || tel.Apps[0].ErrorRate != 1 {
		t.Fatalf("callee with no replicas: callee errors %.2f, caller errors %.2f; want 1 and 1", tel.Apps[2].ErrorRate, tel.Apps[0].ErrorRate)
	}
}

func TestStartupDelayAndPendingPods(t *testing.T) {
	cfg, sc, tr := world(64, 100, true) // 8 nodes of 8 cores
	s := mustNew(t, cfg, sc, tr)
	before := s.tel[0].Apps[0].Ready
	s.targets[0] = before + 4
	s.Step()
	a := s.tel[s.step%len(s.tel)].Apps[0]
	if a.Ready != before || a.Starting != 4 {
		t.Fatalf("after one tick: ready %d starting %d, want %d and 4", a.Ready, a.Starting, before)
	}
	for range 3 { // 30s startup at 10s ticks
		s.Step()
	}
	if a = s.tel[s.step%len(s.tel)].Apps[0]; a.Ready != before+4 {
		t.Fatalf("after the startup delay: ready %d, want %d", a.Ready, before+4)
	}
	// Ask for more than the pool holds: the rest stays pending.
	s.targets[0] = 100
	s.Step()
	c := s.tel[s.step%len(s.tel)].Cluster
	if c.PendingPods == 0 || c.FreeCores >= 1 {
		t.Fatalf("pool full: pending %d, free cores %.1f", c.PendingPods, c.FreeCores)
	}
}

func TestProvisionerQueuesBursts(t *testing.T) {
	cfg, sc, tr := world(4000, 100, true)
	cfg.Cluster.ProvisionerRate = 6 // one node per 10 s tick
	s := mustNew(t, cfg, sc, tr)
	nodes := s.pool.nodes
	s.targets[0] = 200 // needs ~25 more nodes of 8 cores
	s.Step()
	if s.pool.queued+s.pool.provisioning < 20 {
		t.Fatalf("burst of pending pods requested %d nodes", s.pool.queued+s.pool.provisioning)
	}
	for range 12 { // requested at tick 1, started at tick 2, 2 minutes of provisioning
		s.Step()
	}
	if got := s.pool.nodes - nodes; got != 0 {
		t.Fatalf("nodes ready before the 2m provision time: %d", got)
	}
	s.Step()
	if got := s.pool.nodes - nodes; got != 1 {
		t.Fatalf("after 2m at 1 start per tick: %d new nodes, want 1", got)
	}
	if s.pool.queued == 0 {
		t.Fatal("no requests left queued: the provisioner rate did not bind")
	}
}

func TestIdleNodesScaleDown(t *testing.T) {
	cfg, sc, tr := world(400, 400, true)
	s := mustNew(t, cfg, sc, tr)
	s.targets[0] = 40
	for range 10 {
		s.Step()
	}
	peak := s.pool.nodes + s.pool.provisioning + s.pool.queued
	s.targets[0] = 1
	for range 6 * 11 { // idle timeout 10 minutes
		s.Step()
	}
	if s.pool.nodes >= peak {
		t.Fatalf("nodes %d after 11 idle minutes, peak %d: no scale-down", s.pool.nodes, peak)
	}
}

func TestFlashSaleMultipliesDemand(t *testing.T) {
	cfg, sc, tr := world(400, 400, true)
	sc.Noise = 1e-12
	sc.Events = []domains.Event{{Kind: domains.EventFlashSale, Domain: "d", At: 10 * time.Minute, Ramp: time.Minute, Hold: 5 * time.Minute, Multiplier: 3}}
	s := mustNew(t, cfg, sc, tr)
	peak := s.PeakRPS()
	base := s.tel[0].Apps[0].RPS
	if math.Abs(peak[0]/base-3) > 1e-6 {
		t.Fatalf("peak/base = %.3f, want 3", peak[0]/base)
	}
}
