package sim_test

import (
	"slices"
	"testing"

	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// seedQueues is the seed-scale world's steady-state queues and their order
// by servers, an hour into its diurnal day under hpa.
func seedQueues(tb testing.TB) ([]sim.Queue, []int32) {
	tb.Helper()
	cfg, s := simtest.World(tb, "../../../examples/seedscale.hcl", "../../../examples/scenarios/seed/eval/diurnal.hcl")
	p, err := baseline.New("hpa", cfg, s)
	if err != nil {
		tb.Fatal(err)
	}
	for range 360 {
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	qs, order := s.SteadyQueues()
	return slices.Clone(qs), slices.Clone(order)
}

// TestErlangCsIsErlangC pins the batched Erlang C of the seed-scale world's
// 1,550 queues to Queue.ErlangC, bit for bit on amd64 (SameErlangC).
func TestErlangCsIsErlangC(t *testing.T) {
	qs, order := seedQueues(t)
	out := make([]float64, len(qs))
	sim.ErlangCs(qs, order, out)
	for _, id := range order {
		if q := qs[id]; !sim.SameErlangC(out[id], q.ErlangC()) {
			t.Fatalf("queue %d %+v: erlangCs %v, ErlangC %v", id, q, out[id], q.ErlangC())
		}
	}
}

// BenchmarkErlangCs is the seed-scale world's Erlang C recursions of one
// tick, an hour into its diurnal day (about 53,000 steps).
func BenchmarkErlangCs(b *testing.B) {
	qs, order := seedQueues(b)
	out := make([]float64, len(qs))
	for b.Loop() {
		sim.ErlangCs(qs, order, out)
	}
}
