package baseline

import (
	"slices"
	"testing"

	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// seedScale builds the seed-scale world (1,550 apps, ~75,000 pods at the
// peak, ~2,000 nodes) on its evaluation diurnal day with the named baseline.
func seedScale(tb testing.TB, name string) (*sim.Sim, sim.Policy) {
	tb.Helper()
	cfg, s := simtest.WorldOf(tb, "../../../examples/seedscale.hcl", "../../../examples/scenarios/seed/eval/diurnal.hcl", 0, worldOf(name))
	p, err := New(name, cfg, s)
	if err != nil {
		tb.Fatal(err)
	}
	return s, p
}

// seedScalePolicies are the baselines benchmarked at seed scale: hpa, the
// one the seed runs, and oracle, the floor training is measured against.
var seedScalePolicies = []string{"hpa", "oracle"}

// BenchmarkSeedScaleTick is one 10 s tick of the seed-scale world, policy
// decision and simulator step, an hour into its diurnal day. 40,000x real
// time, what training at seed scale needs under hpa, is 0.25 ms per tick.
func BenchmarkSeedScaleTick(b *testing.B) { benchPolicies(b, seedScalePolicies, seedScale) }

// TestSeedScaleTickDoesNotAllocate pins the zero-allocation steady state of
// the seed-scale world under each benchmarked baseline.
func TestSeedScaleTickDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the seed-scale world once per policy")
	}
	pinNoAllocs(t, append(slices.Clone(seedScalePolicies), HPAPriority), seedScale) // hpa-priority: the scheduler's priority path
}
