package rl

import "golang.org/x/sys/cpu"

// useAVX selects rows4AVX; tests clear it to check the portable path.
var useAVX = cpu.X86.HasAVX

// rows4AVX is rows4Go with 256-bit AVX vectors: the four lanes of a row in
// one register, four rows at a time, separate multiplies and adds (no FMA),
// so the same bits as rows4Go. len(b) must be a multiple of 4, nin >= 1.
//
//go:noescape
func rows4AVX(w, x, b, y *float64, nin, nrows int)

// rows4 is rows4Go, with AVX where the CPU has it.
func rows4(w, x, b, y []float64, nin int) {
	if !useAVX || len(b) == 0 {
		rows4Go(w, x, b, y, nin)
		return
	}
	// The bounds rows4AVX relies on, checked here once.
	_ = w[len(b)*nin-1]
	_ = x[nin*batchRows-1]
	_ = y[len(b)*batchRows-1]
	rows4AVX(&w[0], &x[0], &b[0], &y[0], nin, len(b))
}
