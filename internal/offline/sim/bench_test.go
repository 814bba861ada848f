package sim_test

import (
	"testing"

	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// newPaymentscale builds the 1,550-app example on the diurnal scenario.
func newPaymentscale(tb testing.TB) (*sim.Sim, sim.Policy) {
	tb.Helper()
	cfg, s := simtest.World(tb, "../../../examples/paymentscale.hcl", "../../../examples/scenarios/diurnal.hcl")
	return s, baseline.NewStatic(cfg.Apps(), cfg.Soldier.TargetUtilisation, s)
}

// BenchmarkStep is one 10 s tick of the 1,550-app example with its policy
// decision. 24 h is 8,640 ticks: 10,000x real time needs under 1 ms per tick.
func BenchmarkStep(b *testing.B) {
	simtest.BenchmarkTicks(b, func() (*sim.Sim, sim.Policy) { return newPaymentscale(b) })
}

// TestStepDoesNotAllocate pins the zero-allocation steady state.
func TestStepDoesNotAllocate(t *testing.T) {
	if allocs := simtest.TickAllocs(newPaymentscale(t)); allocs != 0 {
		t.Fatalf("%.1f allocations per tick, want 0", allocs)
	}
}
