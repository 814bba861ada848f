package rl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// tanhRelTol is tanh's error bound against math.Tanh, relative to
// max(|math.Tanh(x)|, smallest normal): a few ulp.
const tanhRelTol = 1e-15

// tanhErr returns the error of tanh(x) against math.Tanh(x), relative to
// |math.Tanh(x)| (absolute below the smallest normal number).
func tanhErr(x float64) float64 {
	want, got := math.Tanh(x), tanh(x)
	return math.Abs(got-want) / max(math.Abs(want), 0x1p-1022)
}

func TestTanh(t *testing.T) {
	t.Run("matches math.Tanh on a dense sweep of [-25, 25]", func(t *testing.T) {
		worst, at := 0.0, 0.0
		for i := -2_500_000; i <= 2_500_000; i++ {
			x := float64(i) * 1e-5
			if e := tanhErr(x); e > worst {
				worst, at = e, x
			}
		}
		t.Logf("worst relative error %.3g at x = %v", worst, at)
		if worst > tanhRelTol {
			t.Fatalf("relative error %.3g at x = %v, want <= %g", worst, at, tanhRelTol)
		}
	})
	t.Run("matches math.Tanh on random float64 bit patterns and log-spaced magnitudes", func(t *testing.T) {
		const seed = 7
		r := rand.New(rand.NewPCG(seed, 1))
		t.Logf("seed %d", seed)
		worst, at := 0.0, 0.0
		for range 1_000_000 {
			x := math.Float64frombits(r.Uint64())
			if math.IsNaN(x) {
				continue
			}
			// Half of the draws: magnitudes 10^-310 .. 10^3, log-uniform.
			if r.IntN(2) == 0 {
				x = math.Copysign(math.Pow(10, -310+313*r.Float64()), x)
			}
			if e := tanhErr(x); e > worst {
				worst, at = e, x
			}
		}
		t.Logf("worst relative error %.3g at x = %v", worst, at)
		if worst > tanhRelTol {
			t.Fatalf("relative error %.3g at x = %v, want <= %g", worst, at, tanhRelTol)
		}
	})
	for _, tc := range []struct {
		name string
		x    float64
		want float64
	}{
		{"tanh(+0) is +0", 0, 0},
		{"tanh(-0) is -0", math.Copysign(0, -1), math.Copysign(0, -1)},
		{"tanh(+Inf) is 1", math.Inf(1), 1},
		{"tanh(-Inf) is -1", math.Inf(-1), -1},
		{"tanh of the largest float64 is 1", math.MaxFloat64, 1},
		{"tanh of the most negative float64 is -1", -math.MaxFloat64, -1},
		{"tanh at the clamp is exactly 1", tanhClamp, 1},
		{"tanh just below the clamp is 1", 19.9, math.Tanh(19.9)},
		{"tanh of the smallest subnormal is itself", math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64},
		{"tanh of the smallest normal is itself", 0x1p-1022, 0x1p-1022},
		{"tanh of a tiny negative number is itself", -1e-200, -1e-200},
		{"tanh(1e-9) is 1e-9 to the last bit", 1e-9, math.Tanh(1e-9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tanh(tc.x)
			if got != tc.want || math.Signbit(got) != math.Signbit(tc.want) {
				t.Fatalf("tanh(%v) = %v, want %v", tc.x, got, tc.want)
			}
		})
	}
	t.Run("tanhSlice is tanh element by element, over chunk boundaries", func(t *testing.T) {
		y := make([]float64, 64*3+17)
		for i := range y {
			y[i] = float64(i-len(y)/2) * 0.173
		}
		y[5], y[70], y[200] = math.NaN(), math.Inf(-1), math.Copysign(0, -1)
		want := make([]float64, len(y))
		for i, x := range y {
			want[i] = tanh(x)
		}
		tanhSlice(y)
		for i := range y {
			if math.Float64bits(y[i]) != math.Float64bits(want[i]) {
				t.Fatalf("tanhSlice[%d] = %v, tanh = %v", i, y[i], want[i])
			}
		}
	})
	t.Run("tanh(NaN) is NaN", func(t *testing.T) {
		if got := tanh(math.NaN()); !math.IsNaN(got) {
			t.Fatalf("tanh(NaN) = %v", got)
		}
	})
	t.Run("tanh is odd", func(t *testing.T) {
		for i := range 100_000 {
			x := float64(i) * 2.1e-4
			if tanh(-x) != -tanh(x) {
				t.Fatalf("tanh(-%v) = %v, -tanh(%v) = %v", x, tanh(-x), x, -tanh(x))
			}
		}
	})
	t.Run("tanh is non-decreasing to within two ulps across the table's grid", func(t *testing.T) {
		const ulp = 0x1p-53 // of values in [1/2, 1)
		prev := -1.0
		for i := -2_100_000; i <= 2_100_000; i++ {
			x := float64(i) * 1e-5
			y := tanh(x)
			if y < prev-2*ulp {
				t.Fatalf("tanh(%v) = %v below tanh of the previous point %v", x, y, prev)
			}
			prev = y
		}
	})
}
