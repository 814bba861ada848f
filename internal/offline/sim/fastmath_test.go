package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLog1pAccuracy pins log1p's series to math.Log1p within 4.4e-16
// relative (math.Log1p: under 1 ulp), and its other side to math.Log(1 + x).
func TestLog1pAccuracy(t *testing.T) {
	const seed = 5
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 6))
	worst, at := 0.0, 0.0
	for range 1_000_000 {
		x := math.Pow(10, -12*r.Float64()) * 1e-2 // 1e-14 to 1e-2
		if r.IntN(2) == 0 {
			x = -x
		}
		want := math.Log1p(x)
		if rel := math.Abs(log1p(x)-want) / math.Abs(want); rel > worst {
			worst, at = rel, x
		}
	}
	t.Logf("largest relative difference %.2g at x = %v", worst, at)
	if worst > 4.4e-16 {
		t.Errorf("log1p differs from math.Log1p by %.2g relative at x = %v", worst, at)
	}
	for _, x := range []float64{1e-2, -1e-2, 0.5, -0.5, 3, 1e10} {
		if got, want := log1p(x), math.Log(1+x); got != want {
			t.Errorf("log1p(%v) = %v, want math.Log(1 + x) = %v", x, got, want)
		}
	}
}
