package baseline

import (
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// paymentscale builds the 1,550-app example on the diurnal scenario with the
// named baseline, (the traces ship in traces/).
func paymentscale(tb testing.TB, name string) (*sim.Sim, sim.Policy) {
	tb.Helper()
	cfg, s := simtest.WorldOf(tb, "../../../examples/paymentscale.hcl", "../../../examples/scenarios/diurnal.hcl", 0, worldOf(name))
	p, err := New(name, cfg, s)
	if err != nil {
		tb.Fatal(err)
	}
	return s, p
}

// BenchmarkTick is one 10 s tick of the 1,550-app example, policy decision
// and simulator step, per baseline; compare sim's BenchmarkStep for the step
// alone.
func BenchmarkTick(b *testing.B) { benchPolicies(b, Names, paymentscale) }

// TestDecideDoesNotAllocate pins every baseline's zero-allocation steady
// state on the 1,550-app example.
func TestDecideDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the 1,550-app example once per policy")
	}
	pinNoAllocs(t, Names, paymentscale)
}

// benchPolicies benchmarks one tick of the world that world builds, under
// each policy of names.
func benchPolicies(b *testing.B, names []string, world func(testing.TB, string) (*sim.Sim, sim.Policy)) {
	for _, name := range names {
		b.Run("policy="+name, func(b *testing.B) {
			simtest.BenchmarkTicks(b, func() (*sim.Sim, sim.Policy) { return world(b, name) })
		})
	}
}

// pinNoAllocs fails t for each policy of names whose steady-state tick on
// the world that world builds allocates.
func pinNoAllocs(t *testing.T, names []string, world func(testing.TB, string) (*sim.Sim, sim.Policy)) {
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if allocs := simtest.TickAllocs(world(t, name)); allocs != 0 {
				t.Fatalf("%.1f allocations per tick, want 0", allocs)
			}
		})
	}
}

// worldOf is the world the named policy runs in, for simtest.WorldOf.
func worldOf(name string) func(*domains.Config) *domains.Config {
	return func(cfg *domains.Config) *domains.Config { return World(name, cfg) }
}
