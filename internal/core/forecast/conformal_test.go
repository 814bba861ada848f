package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestResidualQuantile(t *testing.T) {
	held := func(vs ...float64) *residuals {
		r := newResiduals(make([]float64, 2*len(vs)), len(vs))
		for _, v := range vs {
			r.add(v)
		}
		return &r
	}
	nine := held(9, 1, 8, 2, 7, 3, 6, 4, 5) // 1..9, n = 9
	for _, tc := range []struct {
		name string
		r    *residuals
		q    float64
		want float64
	}{
		{"no residuals give 0", held(), 0.9, 0},
		{"upper quantile is r_(ceil((n+1)q)): q80 of 1..9 is r_(8)", nine, 0.8, 8},
		{"upper quantile: q90 of 1..9 is r_(9)", nine, 0.9, 9},
		{"median is r_(ceil((n+1)/2)) = r_(5)", nine, 0.5, 5},
		{"lower quantile is r_(floor((n+1)q)): q10 of 1..9 is r_(1)", nine, 0.1, 1},
		{"lower quantile: q30 of 1..9 is r_(3)", nine, 0.3, 3},
		{"rank above n clips to the largest", held(1, 2, 3), 0.9, 3},
		{"rank below 1 clips to the smallest", held(1, 2, 3), 0.1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.quantile(tc.q); got != tc.want {
				t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

// The sorted view always holds exactly the last cap values added.
func TestResidualRingKeepsLastN(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 4))
	for _, n := range []int{1, 2, 7, 64} {
		r := newResiduals(make([]float64, 2*n), n)
		var all []float64
		for range 500 {
			v := math.Round(rng.NormFloat64()*4) / 4 // ties are common
			r.add(v)
			all = append(all, v)
			want := slices.Clone(all[max(0, len(all)-n):])
			slices.Sort(want)
			if !slices.Equal(r.sorted, want) {
				t.Fatalf("cap %d after %d adds: sorted %v, want %v", n, len(all), r.sorted, want)
			}
		}
		r.reset()
		if r.len() != 0 {
			t.Errorf("cap %d: %d residuals after reset", n, r.len())
		}
	}
}

// Split-conformal coverage: with exchangeable residuals the upper quantile of
// level q is exceeded by the next residual at most 1-q of the time.
func TestResidualCoverage(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	r := newResiduals(make([]float64, 2*200), 200)
	for range 200 {
		r.add(rng.ExpFloat64())
	}
	const trials = 20000
	exceed := 0
	for range trials {
		v := rng.ExpFloat64()
		if v > r.quantile(q80) {
			exceed++
		}
		r.add(v)
	}
	if got := float64(exceed) / trials; got < 0.18 || got > 0.215 {
		t.Errorf("next residual above q80 %.3f of the time, want at most 0.20 and close to it", got)
	}
}
