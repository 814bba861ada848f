//go:build !amd64

package rl

// useAVX is false off amd64; it exists for the tests.
var useAVX = false

// rows4 is rows4Go off amd64.
func rows4(w, x, b, y []float64, nin int) { rows4Go(w, x, b, y, nin) }
