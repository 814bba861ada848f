package sim_test

import (
	"testing"

	"github.com/regimentd/regiment/baseline"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/simtest"
)

// newPaymentscale builds the 1,550-app example on the diurnal scenario.
func newPaymentscale(tb testing.TB) (*sim.Sim, sim.Policy) {
	tb.Helper()
	cfg, s := simtest.World(tb, "../examples/paymentscale.hcl", "../examples/scenarios/diurnal.hcl")
	return s, baseline.NewStatic(cfg.Apps(), cfg.Soldier.TargetUtilisation, s)
}

// BenchmarkStep is one 10 s tick of the 1,550-app example with its policy
// decision. 24 h is 8,640 ticks: 10,000x real time needs under 1 ms per tick.
func BenchmarkStep(b *testing.B) {
	s, p := newPaymentscale(b)
	for range 360 { // an hour in: steady state, buffers grown
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	b.ReportAllocs()
	for b.Loop() {
		if s.Done() {
			b.StopTimer()
			s, p = newPaymentscale(b)
			b.StartTimer()
		}
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	b.ReportMetric(float64(s.Tick().Nanoseconds())*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "x-realtime")
}

// TestStepDoesNotAllocate pins the zero-allocation steady state.
func TestStepDoesNotAllocate(t *testing.T) {
	s, p := newPaymentscale(t)
	for range 60 {
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	allocs := testing.AllocsPerRun(100, func() {
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per tick, want 0", allocs)
	}
}
