//go:build !amd64 || amd64.v3

package sim

// erlangBitExact is whether erlangCs gives Queue.ErlangC's bits: not where
// the compiler may fuse their multiply-adds differently (GOAMD64=v3 and
// above, arm64, ...), where they agree to about 1e-13 relative instead
// (the recursion's rounding, over up to a few thousand steps).
const erlangBitExact = false

// erlangGroup is erlangGroupGo off amd64, and at GOAMD64=v3 and above,
// where the compiler fuses its multiply-adds (see erlang_amd64.go).
func erlangGroup(g *erlangBatch) { erlangGroupGo(g) }
