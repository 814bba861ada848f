package eval

import (
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

func newSmallSim(t testing.TB) *sim.Sim {
	t.Helper()
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../../../cmd/regiment/testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestObserveDoesNotAllocate pins the per-tick accounting at zero
// allocations, sampling included.
func TestObserveDoesNotAllocate(t *testing.T) {
	s := newSmallSim(t)
	cfg, _ := config.LoadFile("../../../examples/small.hcl")
	p, err := baseline.New("static", cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	m := newMeter(cfg, s, true)
	allocs := testing.AllocsPerRun(200, func() {
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
		m.observe(s)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per tick, want 0", allocs)
	}
}

func TestOverprovision(t *testing.T) {
	s := newSmallSim(t)
	cfg, _ := config.LoadFile("../../../examples/small.hcl")
	m := newMeter(cfg, s, false)
	apps := cfg.Apps()
	target := cfg.Soldier.TargetUtilisation
	// Every app has demand for 9.5 replicas at the target utilisation, so it
	// needs 10 (within min and max in the small example). Per tier, P0 has 10
	// ready and 5 starting (+50%), P1 10 ready (0%), P2 5 ready and 3 pending
	// (-50%: pending replicas are not scheduled), P3 20 ready (+100%).
	ready := map[int][2]int32{0: {10, 5}, 1: {10, 0}, 2: {5, 0}, 3: {20, 0}}
	tel := &sim.Telemetry{Apps: make([]sim.AppTelemetry, len(apps))}
	var need, sched float64
	for i, a := range apps {
		r := ready[cfg.Domains[a.Domain].Priority]
		tel.Apps[i] = sim.AppTelemetry{RPS: 9.5 * s.Capacity(i) * target, Ready: r[0], Starting: r[1]}
		if cfg.Domains[a.Domain].Priority == 2 {
			tel.Apps[i].Pending = 3
		}
		need += 10 * a.CPUPerReplica
		sched += float64(r[0]+r[1]) * a.CPUPerReplica
	}
	m.overprovision(tel)
	want := []float64{50, 0, -50, 100, 100 * (sched - need) / need}
	for ti, w := range want {
		if got := m.overMean(ti); math.Abs(got-w) > 1e-9 {
			t.Errorf("tier index %d: overprovision %.6f%%, want %.6f%%", ti, got, w)
		}
	}
}

// The meter accounts the ticks sim.Metrics accounts: none of the
// scenario's warm-up.
func TestObserveSkipsTheWarmup(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../../../cmd/regiment/testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc.Warmup = 5 * time.Minute
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	m := newMeter(cfg, s, false)
	const steps = 90 // 15 minutes of 10 s ticks
	for range steps {
		s.Step()
		m.observe(s)
	}
	want := int(s.Metrics().SimSeconds / s.Tick().Seconds())
	if m.ticks != want || want != steps-int(sc.Warmup/s.Tick()) {
		t.Errorf("the meter accounted %d ticks, sim.Metrics %d, want %d (%d less the 5 m warm-up)", m.ticks, want, steps-30, steps)
	}
}
