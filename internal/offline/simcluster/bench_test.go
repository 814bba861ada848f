package simcluster_test

import (
	"testing"

	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// seedScale builds the seed-scale world (1,550 apps, ~75,000 pods at the
// peak, ~2,000 nodes) on its evaluation diurnal day with Regiment's
// hierarchy, as `regiment sim --policy regiment` runs it.
func seedScale(tb testing.TB) (*sim.Sim, *simcluster.Policy) {
	tb.Helper()
	cfg, s := simtest.World(tb, "../../../examples/seedscale.hcl", "../../../examples/scenarios/seed/eval/diurnal.hcl")
	p, err := simcluster.NewPolicy(cfg, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return s, p
}

// BenchmarkSeedScaleTick is one 10 s tick of the seed-scale world under the
// regiment policy (Commander every sixth tick, five Soldiers every tick) and
// the simulator step, an hour into its diurnal day. 25,000x real time is
// 0.4 ms per tick.
func BenchmarkSeedScaleTick(b *testing.B) {
	b.Run("policy=regiment", func(b *testing.B) {
		var p *simcluster.Policy
		simtest.BenchmarkTicks(b, func() (*sim.Sim, sim.Policy) {
			var s *sim.Sim
			s, p = seedScale(b)
			return s, p
		})
		if p.Err() != nil {
			b.Fatal(p.Err())
		}
	})
}

// TestSeedScaleTickDoesNotAllocate pins the zero-allocation steady state of
// the seed-scale world under the regiment policy, over ten Commander ticks.
func TestSeedScaleTickDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an hour of the seed-scale world")
	}
	s, p := seedScale(t)
	allocs := simtest.TickAllocs(s, p)
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if allocs != 0 {
		t.Fatalf("%.1f allocations per tick, want 0", allocs)
	}
}
