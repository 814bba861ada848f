package rl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkGradient compares analytic[i] with the central difference
// (f(x + h e_i) - f(x - h e_i)) / 2h for every i, perturbing x in place and
// restoring it. The error is relative to max(1, |analytic| + |numeric|).
func checkGradient(t *testing.T, what string, x, analytic []float64, f func() float64, tol float64) {
	t.Helper()
	const h = 1e-6
	worst := 0.0
	for i := range x {
		xi := x[i]
		x[i] = xi + h
		fp := f()
		x[i] = xi - h
		fm := f()
		x[i] = xi
		num := (fp - fm) / (2 * h)
		err := math.Abs(num-analytic[i]) / max(1, math.Abs(num)+math.Abs(analytic[i]))
		worst = max(worst, err)
		if err > tol {
			t.Errorf("%s: d/dx[%d]: analytic %.10g, finite difference %.10g (relative error %.2g > %.2g)", what, i, analytic[i], num, err, tol)
		}
	}
	t.Logf("%s: %d partial derivatives, worst relative error %.2g", what, len(x), worst)
}

// seeded returns a generator for seed and logs the seed.
func seeded(t testing.TB, seed uint64) *rand.Rand {
	t.Helper()
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func randomize(x []float64, scale float64, r *rand.Rand) {
	for i := range x {
		x[i] = scale * r.NormFloat64()
	}
}
