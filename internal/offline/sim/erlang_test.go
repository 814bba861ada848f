package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestErlangGroupIsErlangGroupGo pins erlangGroup, SSE2 on amd64, to its Go
// reference, bit for bit, and both to Queue.ErlangC (SameErlangC), over random groups with
// equal and large server counts (1/B overflowing to +Inf), offered loads
// from 1e-3 to 1e4 (at most 0.98 of the servers), and loads underflowing
// to 0.
func TestErlangGroupIsErlangGroupGo(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for n := range 2000 {
		var g erlangBatch
		for j := range g.cs {
			g.cs[j] = 1 + r.IntN(3000)
			if r.IntN(4) == 0 && j > 0 {
				g.cs[j] = g.cs[j-1]
			}
		}
		slices.Sort(g.cs[:])
		for j, c := range g.cs {
			g.servers[j] = float64(c)
			// Offered loads up to 0.98 c, as Sim.steadyQueues caps them.
			g.mu[j] = 0.5 + 20*r.Float64()
			g.lambda[j] = g.mu[j] * min(math.Pow(10, -3+7*r.Float64()), 0.98*float64(c))
		}
		if n%10 == 0 {
			j := r.IntN(erlangLanes)
			g.lambda[j], g.mu[j] = 1e-300, 1e300 // a = 0
		}
		want := g
		erlangGroupGo(&want)
		erlangGroup(&g)
		for j := range g.out {
			q := Queue{Lambda: g.lambda[j], Mu: g.mu[j], C: g.cs[j]}
			if math.Float64bits(g.out[j]) != math.Float64bits(want.out[j]) || !SameErlangC(g.out[j], q.ErlangC()) {
				t.Fatalf("lane %d, %+v: %v, Go %v, ErlangC %v", j, q, g.out[j], want.out[j], q.ErlangC())
			}
		}
	}
}

// TestErlangCsIsErlangCOnRandomQueues pins erlangCs to Queue.ErlangC
// (SameErlangC: bit for bit on amd64) over random queues, idle and serverless ones among them, in an order
// mostly by servers with some out of place.
func TestErlangCsIsErlangCOnRandomQueues(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for range 20 {
		qs := make([]Queue, 500)
		order := make([]int32, len(qs))
		for i := range qs {
			order[i] = int32(i)
			c := r.IntN(400)
			if c == 0 {
				continue // Queue{}, as steadyQueues leaves a serverless app
			}
			mu := 0.5 + 20*r.Float64()
			lambda := r.Float64() * 0.98 * float64(c) * mu
			if r.IntN(20) == 0 {
				lambda = 0
			}
			qs[i] = Queue{Lambda: lambda, Mu: mu, C: c}
		}
		slices.SortFunc(order, func(x, y int32) int { return qs[x].C - qs[y].C })
		for range 5 {
			i, j := r.IntN(len(order)), r.IntN(len(order))
			order[i], order[j] = order[j], order[i]
		}
		out := make([]float64, len(qs))
		erlangCs(qs, order, out)
		for _, id := range order {
			want := qs[id].ErlangC()
			if !SameErlangC(out[id], want) {
				t.Fatalf("queue %+v: %v, want %v", qs[id], out[id], want)
			}
		}
	}
}
