package soldier

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKthMatchesSorting pins the quickselect to the element sorting would
// put at k, over runs of equal values, NaNs and lengths around the cutoff.
func TestKthMatchesSorting(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 16, 17, 18, 100, 501} {
		for trial := range 50 {
			xs := make([]float64, n)
			for i := range xs {
				switch r.IntN(8) {
				case 0:
					xs[i] = 0
				case 1:
					xs[i] = 1
				case 2:
					if trial%5 == 0 {
						xs[i] = math.NaN()
					}
				default:
					xs[i] = r.Float64()
				}
			}
			sorted := slices.Clone(xs)
			slices.Sort(sorted)
			k := r.IntN(n)
			got, want := kth(slices.Clone(xs), k), sorted[k]
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("n %d, k %d: kth %v, sorting gives %v", n, k, got, want)
			}
		}
	}
}

// TestKthIsTheComparisonSelect pins kth's path for values without NaNs,
// which compares with < and >, to the quickselect in cmp.Compare's order
// bit for bit (what the reports carried before), over ties, zeros of both
// signs and NaNs.
func TestKthIsTheComparisonSelect(t *testing.T) {
	const seed = 7
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for _, n := range []int{1, 5, 16, 17, 40, 90, 310, 501} {
		for trial := range 200 {
			xs := make([]float64, n)
			for i := range xs {
				switch r.IntN(10) {
				case 0:
					xs[i] = 1
				case 1:
					xs[i] = 0
				case 2:
					if trial%7 == 0 {
						xs[i] = math.Copysign(0, -1)
					}
				case 3:
					if trial%11 == 0 {
						xs[i] = math.NaN()
					}
				default:
					xs[i] = 1.5 * r.Float64()
				}
			}
			k := r.IntN(n)
			got, want := kth(slices.Clone(xs), k), kthNaN(slices.Clone(xs), k)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n %d, trial %d, k %d: kth %v (%#x), the comparison select %v (%#x)", n, trial, k, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
}

// BenchmarkPercentile is a report's CPUUtilP75 over a seed-scale domain's
// 310 utilisations.
func BenchmarkPercentile(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float64, 310)
	for i := range src {
		src[i] = 0.3 + 0.9*r.Float64()
	}
	xs := make([]float64, len(src))
	b.ReportAllocs()
	for b.Loop() {
		copy(xs, src)
		Percentile(xs, 0.75)
	}
}
