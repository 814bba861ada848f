//go:build amd64 && !amd64.v3

package sim

// erlangGroupSSE2 is erlangGroupGo in SSE2 (amd64's baseline: no feature
// test), two lanes a register, with separate multiplies and adds rounded
// as erlangGroupGo's scalar ones: the same bits. scratch receives the
// registers as lanes finish. At GOAMD64=v3 and above the compiler fuses
// erlangGroupGo's multiply-add, and erlangGroupGo runs instead
// (erlang_other.go), so both give Queue.ErlangC's bits at every level.
//
//go:noescape
func erlangGroupSSE2(inva *[erlangLanes]float64, cs *[erlangLanes]int, scratch, invB *[erlangLanes]float64)

// erlangGroup is erlangGroupGo, in SSE2.
func erlangGroup(inva *[erlangLanes]float64, cs *[erlangLanes]int, invB *[erlangLanes]float64) {
	var scratch [erlangLanes]float64
	erlangGroupSSE2(inva, cs, &scratch, invB)
}
