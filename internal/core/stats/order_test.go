package stats

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
			got, want := Kth(slices.Clone(xs), k), sorted[k]
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
			got, want := Kth(slices.Clone(xs), k), kthNaN(slices.Clone(xs), k)
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

// TestSortedWindowIsPercentile pins the report's RPSP95, kept in a sorted
// window (InsertSorted, DeleteSorted), to Percentile over the window in
// arrival order, tick by tick, with repeats, zeros and NaNs among the values.
func TestSortedWindowIsPercentile(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	for _, size := range []int{1, 2, 7, 90} {
		hist, sorted := make([]float64, 0, size), make([]float64, 0, size)
		for range 2000 {
			x := math.Round(r.Float64()*50) / 4
			switch r.IntN(40) {
			case 0:
				x = math.NaN()
			case 1:
				x = 0
			}
			if len(hist) == cap(hist) {
				sorted = DeleteSorted(sorted, hist[0])
				hist = append(hist[:0], hist[1:]...)
			}
			hist = append(hist, x)
			sorted = InsertSorted(sorted, x)
			want := Percentile(slices.Clone(hist), 0.95)
			got := sorted[NearestRank(len(sorted), 0.95)]
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("window %v: sorted %v gives %v, Percentile %v", hist, sorted, got, want)
			}
			if cap(sorted) != size {
				t.Fatalf("sorted window grew to %d, want %d", cap(sorted), size)
			}
		}
	}
}

// TestNearKthIsPercentile pins NearKth to Percentile over series of slices
// whose values drift, jump, repeat, hold zeros and NaNs, and change length.
func TestNearKthIsPercentile(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	var w NearKth
	xs := make([]float64, 300)
	for i := range xs {
		xs[i] = r.Float64()
	}
	hits := 0
	for tick := range 5000 {
		n := len(xs)
		if tick%500 == 499 {
			n = 1 + r.IntN(len(xs))
		}
		for i := range xs {
			switch r.IntN(200) {
			case 0:
				xs[i] = 0
			case 1:
				xs[i] = r.Float64() * 3 // a jump
			case 2:
				xs[i] = math.Copysign(0, -1)
			default:
				xs[i] = max(0, xs[i]*(1+0.02*r.NormFloat64()))
			}
		}
		if tick%300 == 7 {
			xs[r.IntN(len(xs))] = math.NaN()
		}
		if tick%1000 == 500 {
			for i := range xs {
				xs[i] = 0.5 // all equal
			}
		}
		want := Percentile(slices.Clone(xs[:n]), 0.75)
		in := slices.Clone(xs[:n])
		was := w.halfWidth
		got := w.Percentile(in, 0.75)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("tick %d: %v, Percentile %v", tick, got, want)
		}
		if w.halfWidth <= was {
			hits++
		}
		for i := range xs {
			if math.IsNaN(xs[i]) {
				xs[i] = r.Float64()
			}
		}
	}
	if hits < 4000 {
		t.Errorf("the window held the p75 %d ticks of 5000, want most", hits)
	}
}

// A quantile outside NearKth's window is selected among the values on its
// side only, except a zero, which is selected among all as Percentile does:
// with zeros of both signs, which one comes out depends on what is
// partitioned. Misses below and above the window, with zeros of both signs
// at the rank.
func TestNearKthMissesAreTheSameBits(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	negZero := math.Copysign(0, -1)
	for trial := range 2000 {
		n := 1 + r.IntN(300)
		xs := make([]float64, n)
		for i := range xs {
			switch r.IntN(4) {
			case 0:
				xs[i] = 0
			case 1:
				xs[i] = negZero
			case 2:
				xs[i] = -r.Float64()
			default:
				xs[i] = 2 * r.Float64()
			}
		}
		w := NearKth{last: 4*r.Float64() - 2, halfWidth: 0.01 * r.Float64(), known: true}
		want := Percentile(slices.Clone(xs), 0.75)
		if got := w.Percentile(slices.Clone(xs), 0.75); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d: %v (bits %x), Percentile %v (bits %x)", trial, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}
