//go:build !amd64 || amd64.v3

package sim

// erlangGroup is erlangGroupGo off amd64, and at GOAMD64=v3 and above,
// where the compiler fuses its multiply-add (see erlang_amd64.go).
func erlangGroup(inva *[erlangLanes]float64, cs *[erlangLanes]int, invB *[erlangLanes]float64) {
	erlangGroupGo(inva, cs, invB)
}
