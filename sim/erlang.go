package sim

// erlangLanes is how many Erlang-B recursions erlangGroup runs side by
// side: twelve, six 2-lane SSE2 registers on amd64, enough independent
// chains to keep the multipliers busy through a step's multiply-add
// latency.
const erlangLanes = 12

// erlangGroupGo runs erlangLanes inverse Erlang-B recursions side by side,
// the loop of Queue.ErlangC written lane by lane,
//
//	1/B(0) = 1
//	1/B(k) = 1 + k*inva[j]*(1/B(k-1))
//
// for lane j's offered load 1/inva[j], and sets invB[j] to lane j's 1/B at
// cs[j] servers. cs must be ascending and non-negative: the lanes step
// together up to cs[0], lane 0 is read, on to cs[1], and so on. It is the
// reference erlangGroup must match bit for bit.
func erlangGroupGo(inva *[erlangLanes]float64, cs *[erlangLanes]int, invB *[erlangLanes]float64) {
	var b [erlangLanes]float64
	for j := range b {
		b[j] = 1
	}
	k := 1
	for j, c := range cs {
		for ; k <= c; k++ {
			fk := float64(k)
			for l := range b {
				b[l] = 1 + fk*inva[l]*b[l]
			}
		}
		invB[j] = b[j]
	}
}
