package stats

import (
	"math"
	"testing"
)

func TestPearsonMatchesClosedForms(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	cases := []struct {
		name string
		y    []float64
		want float64
		ok   bool
	}{
		{"a positive affine map correlates perfectly", []float64{3, 5, 7, 9, 11}, 1, true},
		{"a negative one anti-correlates", []float64{5, 4, 3, 2, 1}, -1, true},
		{"a symmetric bowl is uncorrelated", []float64{4, 1, 0, 1, 4}, 0, true},
		{"a constant has no correlation", []float64{2, 2, 2, 2, 2}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := Pearson(x, c.y)
			if ok != c.ok || math.Abs(r-c.want) > 1e-12 {
				t.Fatalf("r %v ok %v, want %v %v", r, ok, c.want, c.ok)
			}
		})
	}
}

// Degenerate input has one answer, undefined (0, false), however it is
// degenerate: a constant whose mean rounds off its value (0.1 x 3 sums to
// 0.30000000000000004, leaving squared deviations of some 1e-34, which a
// test on the sums alone took for spread), too few pairs, unequal lengths,
// all NaN. This was two answers before: calibrate's pearson took the
// rounded constant for a series and train's a constant for NaN.
func TestPearsonIsUndefinedOnDegenerateInput(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name string
		x, y []float64
	}{
		{"a constant whose mean rounds", []float64{0.1, 0.1, 0.1}, []float64{1, 2, 3}},
		{"a constant of seven tenths", []float64{0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7}, []float64{1, 2, 3, 4, 5, 6, 7}},
		{"the other series constant", []float64{1, 2, 3}, []float64{0.1, 0.1, 0.1}},
		{"zeros of both signs", []float64{0, math.Copysign(0, -1), 0}, []float64{1, 2, 3}},
		{"two pairs", []float64{1, 2}, []float64{2, 1}},
		{"none", nil, nil},
		{"unequal lengths", []float64{1, 2, 3, 4}, []float64{1, 2, 3}},
		{"all NaN", []float64{nan, nan, nan}, []float64{1, 2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if r, ok := Pearson(c.x, c.y); ok || r != 0 {
				t.Fatalf("Pearson(%v, %v) = %v, %v; want 0, false", c.x, c.y, r, ok)
			}
		})
	}
}

func TestMedianOfOddAndEvenCounts(t *testing.T) {
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median of 3 1 2: %v, want 2", got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 4 1 3 2: %v, want 2.5", got)
	}
	if got := Median(nil); !math.IsNaN(got) {
		t.Errorf("median of none: %v, want NaN", got)
	}
}

// TestNaNsIsAllMissing: NaNs(n) is n missing values.
func TestNaNsIsAllMissing(t *testing.T) {
	xs := NaNs(3)
	if len(xs) != 3 || !math.IsNaN(xs[0]) || !math.IsNaN(xs[2]) {
		t.Fatalf("NaNs(3) = %v", xs)
	}
}
