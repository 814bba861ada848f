//go:build amd64 && !amd64.v3

package sim

// erlangGroupSSE2 is erlangGroupGo in SSE2 (amd64's baseline: no feature
// test), two lanes a register, with separate multiplies, adds and divides
// rounded as erlangGroupGo's scalar ones: the same bits. At GOAMD64=v3 and
// above the compiler fuses erlangGroupGo's multiply-adds, and
// erlangGroupGo runs instead (erlang_other.go), so that both give
// Queue.ErlangC's bits at every level.
//
//go:noescape
func erlangGroupSSE2(batch *erlangBatch)

// erlangGroup is erlangGroupGo, in SSE2.
func erlangGroup(g *erlangBatch) { erlangGroupSSE2(g) }
