package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestErlangGroupIsErlangGroupGo pins erlangGroup, SSE2 on amd64, to its Go
// reference bit for bit, over random groups with equal, zero and large
// server counts (1/B overflowing to +Inf) and loads from 1e-3 to 1e4.
func TestErlangGroupIsErlangGroupGo(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for n := range 2000 {
		var inva, want, got [erlangLanes]float64
		var cs [erlangLanes]int
		for j := range cs {
			inva[j] = 1 / math.Pow(10, -3+7*r.Float64())
			cs[j] = r.IntN(3000)
			if r.IntN(4) == 0 && j > 0 {
				cs[j] = cs[j-1]
			}
		}
		if n%10 == 0 {
			cs[0] = 0
		}
		slices.Sort(cs[:])
		erlangGroupGo(&inva, &cs, &want)
		erlangGroup(&inva, &cs, &got)
		for j := range want {
			if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
				t.Fatalf("lane %d of cs %v inva %v: %v, want %v", j, cs, inva, got[j], want[j])
			}
		}
	}
}

// TestErlangCsIsErlangCOnRandomQueues pins erlangCs to Queue.ErlangC bit for
// bit over random queues, idle and serverless ones among them, in an order
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
			if math.Float64bits(out[id]) != math.Float64bits(want) {
				t.Fatalf("queue %+v: %v, want %v", qs[id], out[id], want)
			}
		}
	}
}
