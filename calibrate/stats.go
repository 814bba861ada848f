package calibrate

import (
	"fmt"
	"math"
	"slices"
)

func errf(format string, args ...any) error { return fmt.Errorf("calibrate: "+format, args...) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// median of xs (reordered in place); NaN for none.
func median(xs []float64) float64 {
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

// pearson is the sample correlation of x and y (equal lengths):
//
//	r = sum((x - mx)(y - my)) / sqrt(sum((x - mx)^2) sum((y - my)^2))
//
// ok is false with fewer than 3 pairs or a constant series.
func pearson(x, y []float64) (r float64, ok bool) {
	n := len(x)
	if n < 3 || len(y) != n {
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
	if sxx <= 0 || syy <= 0 {
		return 0, false
	}
	return sxy / math.Sqrt(sxx*syy), true
}

// relErr is the mean absolute error of sim against rec relative to the mean
// magnitude of rec: sum|sim - rec| / sum|rec|. ok is false when rec is all 0.
func relErr(rec, sim []float64) (float64, bool) {
	num, den := 0.0, 0.0
	for i := range rec {
		num += math.Abs(sim[i] - rec[i])
		den += math.Abs(rec[i])
	}
	if den == 0 {
		return 0, false
	}
	return num / den, true
}
