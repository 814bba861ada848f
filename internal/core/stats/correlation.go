package stats

import (
	"math"
	"slices"
)

// Median is the median of xs, the mean of the middle two for an even count,
// reordering xs in place; NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// Pearson is the sample correlation of x and y:
//
//	r = sum((x - mx)(y - my)) / sqrt(sum((x - mx)^2) sum((y - my)^2))
//
// with mx and my the means. ok is false, and r 0, with fewer than 3 pairs,
// x and y of different lengths, or either series constant: every value
// equal (whatever rounding does to the mean) or no squared deviation left.
func Pearson(x, y []float64) (r float64, ok bool) {
	n := len(x)
	if n < 3 || len(y) != n || constant(x) || constant(y) {
		return 0, false
	}
	mx, my := 0.0, 0.0
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	sxy, sxx, syy := 0.0, 0.0, 0.0
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if !(sxx > 0) || !(syy > 0) {
		return 0, false
	}
	return sxy / math.Sqrt(sxx*syy), true
}

// constant reports whether every value of xs equals the first (zeros of
// both signs are equal; a series of NaNs only counts as constant).
func constant(xs []float64) bool {
	for _, v := range xs[1:] {
		if v != xs[0] && !(v != v && xs[0] != xs[0]) {
			return false
		}
	}
	return true
}

// NaNs is a series of n missing values (NaN): the recorded or replayed
// series of calibration and report before their values are filled in.
func NaNs(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.NaN()
	}
	return xs
}
