package reward

import (
	"math"
	"testing"
)

// round2 rounds to 2 decimals, as the spec's adherence table is written.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

func TestAdherence(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, tc := range []struct {
		name string
		r    float64
		want float64 // compared rounded to 2 decimals
	}{
		{"no load scores 1", 0, 1},
		{"r = 0.3 scores sqrt(0.7)", 0.3, 0.84},
		{"r = 0.5 scores sqrt(0.5)", 0.5, 0.71},
		{"r = 0.7 scores sqrt(0.3)", 0.7, 0.55},
		{"r = 0.9 scores sqrt(0.1)", 0.9, 0.32},
		{"at the SLO scores 0", 1.0, 0},
		{"above the SLO is linear", 1.5, -0.5},
		{"r = 2 scores -1", 2, -1},
		{"clipped beyond r = 2", 7, -1},
		{"infinite latency clips", inf, -1},
		{"negative r reads as 0", -0.5, 1},
		{"NaN scores the worst", nan, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Adherence(tc.r); round2(got) != tc.want {
				t.Errorf("Adherence(%v) = %v, want %v", tc.r, got, tc.want)
			}
		})
	}
}

func TestAdherenceShape(t *testing.T) {
	// continuous at the SLO, concave below it (second differences < 0),
	// non-increasing everywhere
	const h = 1e-6
	if d := math.Abs(Adherence(1-h) - Adherence(1+h)); d > 2e-3 {
		t.Errorf("jump of %v at r = 1", d)
	}
	prev := Adherence(0)
	for r := 0.01; r < 3; r += 0.01 {
		a := Adherence(r)
		if a > prev {
			t.Errorf("Adherence(%.2f) = %v > Adherence(%.2f) = %v", r, a, r-0.01, prev)
		}
		prev = a
		if r > 0.02 && r < 0.98 {
			if d2 := Adherence(r-0.01) - 2*a + Adherence(r+0.01); d2 >= 0 {
				t.Errorf("not concave at r = %.2f: second difference %v", r, d2)
			}
		}
	}
}

func TestAlignment(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name             string
		actual, intended []float64
		want             float64
	}{
		{"matched allocation scores 1", []float64{4, 2, 6}, []float64{4, 2, 6}, 1},
		{"half the allocation scores 0.5", []float64{2, 1, 3}, []float64{4, 2, 6}, 0.5},
		{"10% over scores 0.9", []float64{4.4, 2.2, 6.6}, []float64{4, 2, 6}, 0.9},
		{"10% under scores 0.9 too", []float64{3.6, 1.8, 5.4}, []float64{4, 2, 6}, 0.9},
		{"double the allocation scores 0", []float64{8, 4, 12}, []float64{4, 2, 6}, 0},
		{"orthogonal allocation scores 0", []float64{0, 5}, []float64{5, 0}, 0},
		{"same total, other direction scores the cosine", []float64{1, 0}, []float64{0.5, 0.5}, math.Sqrt2 / 2},
		{"missing entries count as 0", []float64{4, 2}, []float64{4, 2, 0}, 1},
		// cos = 18 / (sqrt(27) sqrt(18)) = sqrt(2/3), rho = 9/6
		{"an extra app counts as 0 intended", []float64{3, 3, 3}, []float64{3, 3}, math.Sqrt(2.0/3) * 0.5},
		{"nothing intended, nothing done scores 1", []float64{0, 0}, []float64{0, 0}, 1},
		{"nothing intended, something done scores 0", []float64{1, 0}, []float64{0, 0}, 0},
		{"nothing done scores 0", []float64{0, 0}, []float64{1, 2}, 0},
		{"empty slices score 1", nil, nil, 1},
		{"NaN scores the worst", []float64{nan, 1}, []float64{1, 1}, -1},
		{"NaN with nothing intended scores the worst", []float64{nan}, []float64{0}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Alignment(tc.actual, tc.intended); math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("Alignment(%v, %v) = %v, want %v", tc.actual, tc.intended, got, tc.want)
			}
		})
	}
}

func TestUtilisationDeviation(t *testing.T) {
	for _, tc := range []struct {
		name         string
		util, target float64
		want         float64
	}{
		{"on target scores 0", 0.85, 0.85, 0},
		{"full budget is a small penalty", 1, 0.85, -(0.15 / 0.85) * (0.15 / 0.85)},
		{"half way to idle scores -0.25", 0.425, 0.85, -0.25},
		{"idle scores -1", 0, 0.85, -1},
		{"symmetric around the target", 1.275, 0.85, -0.25},
		{"far over budget clips at -1", 3, 0.85, -1},
		{"a low target scales by 1 - t", 1, 0.3, -1},
		{"a low target, idle", 0, 0.3, -(0.3 / 0.7) * (0.3 / 0.7)},
		{"NaN scores the worst", math.NaN(), 0.85, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UtilisationDeviation(tc.util, tc.target); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("UtilisationDeviation(%v, %v) = %v, want %v", tc.util, tc.target, got, tc.want)
			}
		})
	}
}
