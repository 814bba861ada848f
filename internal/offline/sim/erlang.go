package sim

// erlangLanes is how many Erlang C computations erlangGroup runs side by
// side: twelve, six 2-lane SSE2 registers on amd64, enough independent
// recursions to keep the multipliers busy through a step's multiply-add
// latency.
const erlangLanes = 12

// erlangBatch is erlangGroup's input, work and output, one lane a queue.
// The assembly reads its fields at fixed offsets (erlang_amd64.s).
type erlangBatch struct {
	lambda, mu [erlangLanes]float64 // the queues' Lambda and Mu, each > 0
	servers    [erlangLanes]float64 // float64(C)
	cs         [erlangLanes]int     // C, ascending, each >= 1
	a, scratch [erlangLanes]float64 // work
	out        [erlangLanes]float64 // Erlang C
}

// erlangGroupGo sets g.out[j] to Queue{g.lambda[j], g.mu[j], g.cs[j]}.ErlangC()
// for every lane j, bit for bit: the same operations, lane by lane, the
// recursions run side by side,
//
//	1/B(0) = 1
//	1/B(k) = 1 + k*inva*(1/B(k-1))
//
// with inva = 1/a, a = lambda/mu: the lanes step together up to cs[0],
// lane 0's 1/B is read, on to cs[1], and so on. It is the reference
// erlangGroup must match bit for bit.
func erlangGroupGo(g *erlangBatch) {
	var inva, b [erlangLanes]float64
	for j := range b {
		g.a[j] = g.lambda[j] / g.mu[j]
		inva[j], b[j] = 1/g.a[j], 1
	}
	k := 1
	for j, c := range g.cs {
		for ; k <= c; k++ {
			fk := float64(k)
			for l := range b {
				b[l] = 1 + fk*inva[l]*b[l]
			}
		}
		g.out[j] = b[j]
	}
	for j, invB := range g.out {
		b := 1 / invB
		rho := g.a[j] / g.servers[j]
		g.out[j] = b / (1 - rho*(1-b))
	}
}
