//go:build amd64 && !amd64.v3

package sim

// erlangGroupSSE2 is erlangGroupGo in SSE2 (amd64's baseline: no feature
// test), two lanes a register, with separate multiplies, adds and divides
// rounded as erlangGroupGo's scalar ones: the same bits, and
// Queue.ErlangC's. At GOAMD64=v3 and above the compiler fuses multiply-adds,
// in Queue.ErlangC and erlangGroupGo alike but not always the same ones,
// and erlangGroupGo runs instead (erlang_other.go).
//
//go:noescape
func erlangGroupSSE2(batch *erlangBatch)

// erlangBitExact is whether erlangCs gives Queue.ErlangC's bits: here, yes.
const erlangBitExact = true

// erlangGroup is erlangGroupGo, in SSE2.
func erlangGroup(g *erlangBatch) { erlangGroupSSE2(g) }
