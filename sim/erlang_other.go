//go:build !amd64 || amd64.v3

package sim

// erlangGroup is erlangGroupGo off amd64, and at GOAMD64=v3 and above,
// where the compiler fuses its multiply-adds (see erlang_amd64.go).
func erlangGroup(g *erlangBatch) { erlangGroupGo(g) }
