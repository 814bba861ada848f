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
