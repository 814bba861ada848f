package baseline

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/trace"
)

// smallSample is the small example on the trace samples in the repository.
func smallSample(t testing.TB) (*domains.Config, *domains.Scenario, map[string][]trace.Series) {
	t.Helper()
	cfg, err := config.LoadFile("../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, sc, traces
}

// runAll runs every baseline on fresh simulations of one world.
func runAll(t *testing.T, cfg *domains.Config, sc *domains.Scenario, traces map[string][]trace.Series) map[string]sim.Metrics {
	t.Helper()
	out := map[string]sim.Metrics{}
	for _, name := range Names {
		s, err := sim.New(cfg, sc, traces)
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(name, cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = s.Run(p)
	}
	return out
}

func TestOracleIsCheapestAtFullCompliance(t *testing.T) {
	cfg, sc, traces := smallSample(t)
	m := runAll(t, cfg, sc, traces)
	o := m["oracle"]
	if o.SLOCompliance < 0.999 {
		t.Errorf("oracle SLO compliance %.4f, want >= 0.999", o.SLOCompliance)
	}
	for name, x := range m {
		t.Logf("%-12s cost %.1f core-hours, compliance %.4f, breach %.1f app-minutes, %d actions", name, x.CostCoreHours, x.SLOCompliance, x.BreachAppMinutes, x.ScalingActions)
		if name != "oracle" && x.CostCoreHours <= o.CostCoreHours {
			t.Errorf("%s costs %.1f core-hours, the oracle %.1f: the oracle should be cheapest", name, x.CostCoreHours, o.CostCoreHours)
		}
	}
}

// stepWorld is one domain of one app whose demand steps from 200 to 800
// requests/s at minute 30, on a pool with free nodes.
func stepWorld() (*domains.Config, *domains.Scenario, map[string][]trace.Series) {
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: 400, NodeCores: 8, NodeProvisionTime: 2 * time.Minute},
		Domains: []domains.Domain{{
			Name: "d", SLO: domains.SLO{LatencyP99: 150 * time.Millisecond},
			AppSets: []domains.AppSet{{Name: "a", CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 100, ServiceTime: 20 * time.Millisecond, Concurrency: 2}},
		}},
	}
	cfg.Defaults()
	sc := &domains.Scenario{Name: "step", Duration: time.Hour, Seed: 5,
		Traffic: []domains.Traffic{{Domain: "d", Trace: "mem", Format: domains.FormatTimeseries, PeakRPS: 800}}}
	sc.Defaults()
	vals := make([]float64, 120)
	for i := range vals {
		vals[i] = 1
		if i >= 30 {
			vals[i] = 4
		}
	}
	return cfg, sc, map[string][]trace.Series{"d": {{Name: "mem", Values: vals}}}
}

func TestOracle(t *testing.T) {
	t.Run("replicas rise a lead time before the demand does", func(t *testing.T) {
		cfg, sc, tr := stepWorld()
		s, err := sim.New(cfg, sc, tr)
		if err != nil {
			t.Fatal(err)
		}
		o := NewOracle(cfg, s)
		lead := o.leads[0]
		stepTick := 30 * 6 // minute 30; demand interpolates up over the minute before
		var before, after int32
		for !s.Done() {
			o.Decide(s.Now(), s.Telemetry(), s.Targets())
			switch s.StepsDone() {
			case stepTick - 6 - lead - 1:
				before = s.Targets()[0]
			case stepTick - 6 - 1:
				after = s.Targets()[0]
			}
			s.Step()
		}
		if after < 3*before {
			t.Fatalf("%d replicas a lead time before the step, %d just before: want the step's need already", before, after)
		}
		if m := s.Metrics(); m.SLOCompliance != 1 {
			t.Fatalf("SLO compliance %.4f, want 1", m.SLOCompliance)
		}
	})
	t.Run("each replica count is the fewest within the SLO", func(t *testing.T) {
		cfg, sc, tr := stepWorld()
		sc.Noise = 1e-9 // as good as none, so that the need is flat
		s, err := sim.New(cfg, sc, tr)
		if err != nil {
			t.Fatal(err)
		}
		o := NewOracle(cfg, s)
		for range 60 * 6 {
			o.Decide(s.Now(), s.Telemetry(), s.Targets())
			s.Step()
		}
		n := s.Targets()[0]
		slo := cfg.Domains[0].SLO.LatencyP99.Seconds()
		q := func(r int32) float64 { return sim.Queue{Lambda: 800, Mu: 50, C: int(r * 2)}.P99() }
		if q(n) > slo || q(n-1) <= slo {
			t.Fatalf("%d replicas: p99 %.1f ms with them, %.1f ms with one fewer; SLO %.0f ms", n, q(n)*1e3, q(n-1)*1e3, slo*1e3)
		}
	})
}

func TestOracleLetsALateReplicaGoFirst(t *testing.T) {
	// Two one-app domains: a (P0) steps up at minute 30, b (P1) is flat.
	cfg, sc, tr := stepWorld()
	b := cfg.Domains[0]
	b.Name, b.Priority = "b", 1
	b.AppSets = []domains.AppSet{b.AppSets[0]}
	cfg.Domains = append(cfg.Domains, b)
	cfg.Domains[0].Name = "a"
	cfg.Defaults()
	sc.Traffic = []domains.Traffic{
		{Domain: "a", Trace: "step", Format: domains.FormatTimeseries, PeakRPS: 800},
		{Domain: "b", Trace: "flat", Format: domains.FormatTimeseries, PeakRPS: 400},
	}
	flat := make([]float64, 120)
	for i := range flat {
		flat[i] = 1
	}
	tr = map[string][]trace.Series{"a": tr["d"], "b": {{Name: "flat", Values: flat}}}
	s, err := sim.New(cfg, sc, tr)
	if err != nil {
		t.Fatal(err)
	}
	o := NewOracle(cfg, s)
	// Decide where a's step is beyond a's near look-ahead but within ahead.
	k := 29*6 - o.near[0] - 2
	now := s.Now().Add(time.Duration(k) * s.Tick())
	tel := &sim.Telemetry{Apps: make([]sim.AppTelemetry, 2), Cluster: sim.ClusterTelemetry{Nodes: 100}}
	targets := []int32{0, 0}
	o.Decide(now, tel, targets)
	early := targets[0]

	// b has a pending replica it needs now: a looks only near ahead.
	tel.Apps[1] = sim.AppTelemetry{Pending: 1}
	tel.Cluster.PendingPods = 1
	o.Decide(now, tel, targets)
	if targets[0] >= early {
		t.Fatalf("a keeps %d replicas (%d before b was late): want fewer, its step is beyond near", targets[0], early)
	}
	// b's pending replica is not late when b already has what it needs.
	tel.Apps[1].Ready = targets[1]
	o.Decide(now, tel, targets)
	if targets[0] != early {
		t.Fatalf("a has %d replicas, want %d: b's pending replica is not late", targets[0], early)
	}
}

func TestOracleDecideDoesNotAllocate(t *testing.T) {
	cfg, sc, traces := smallSample(t)
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	o := NewOracle(cfg, s)
	for range 10 {
		o.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	allocs := testing.AllocsPerRun(100, func() {
		o.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per Decide and Step, want 0", allocs)
	}
}

// BenchmarkOracleDecide is the oracle alone on the 1,550-app example, a
// tick at a time: one new future tick's needs for every app, then targets.
func BenchmarkOracleDecide(b *testing.B) {
	s, p := paymentscale(b, "oracle")
	o := p.(*Oracle)
	o.Decide(s.Now(), s.Telemetry(), s.Targets())
	now := s.Now()
	b.ReportAllocs()
	for b.Loop() {
		now = now.Add(s.Tick())
		o.Decide(now, s.Telemetry(), s.Targets())
	}
}
