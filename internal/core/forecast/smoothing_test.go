package forecast

import (
	"math"
	"testing"
)

func TestPhiSum(t *testing.T) {
	for _, phi := range []float64{0.5, 0.9, 0.97, 0.999, 1} {
		var sum, pow float64 = 0, 1
		for h := 1; h <= 60; h++ {
			pow *= phi
			sum += pow
			if got := phiSum(phi, h); math.Abs(got-sum) > 1e-12*sum {
				t.Fatalf("phiSum(%v, %d) = %v, want the sum %v", phi, h, got, sum)
			}
		}
	}
}

func TestMovingAverage(t *testing.T) {
	src := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	n := len(src)
	for _, w := range []int{0, 1, 2, 5} {
		dst := make([]float64, n)
		movingAverage(dst, src, w)
		for p := range n {
			var sum float64
			for j := p - w; j <= p+w; j++ {
				sum += src[(j+n)%n]
			}
			if want := sum / float64(2*w+1); math.Abs(dst[p]-want) > 1e-12 {
				t.Errorf("w %d: dst[%d] = %v, want the circular mean %v", w, p, dst[p], want)
			}
		}
	}
}

// Initialising from one period of a sine on a linear trend recovers the
// sine as the profile and the trend as level and slope, wherever the period
// starts.
func TestSeasonalInit(t *testing.T) {
	const m = 1440
	const amp, slope, a0 = 0.5, 0.0002, 7.0
	for _, last := range []int{m - 1, 0, 700} {
		byPhase := make([]float64, m)
		for i := range m {
			p := (last + 1 + i) % m
			byPhase[p] = a0 + slope*float64(i) + amp*math.Sin(2*math.Pi*float64(p)/m)
		}
		s := seasonal{window: 7, season: make([]float64, m)}
		s.init(byPhase, last, make([]float64, m))
		// The boundary trend estimate is off by the sine's slope over the end
		// windows: a few percent of the amplitude.
		for p := 0; p < m; p += 60 {
			want := amp * math.Sin(2*math.Pi*float64(p)/m)
			if math.Abs(s.season[p]-want) > 0.05*amp {
				t.Errorf("last %d: season[%d] = %.4f, want %.4f", last, p, s.season[p], want)
			}
		}
		if want := a0 + slope*(m-1); math.Abs(s.level-want) > 0.05*amp {
			t.Errorf("last %d: level %.4f, want %.4f", last, s.level, want)
		}
	}
}

// Coasting over a missed step is the update with a zero error for level and
// trend (FPP3 8.2 and 8.3 with x_t equal to its forecast) and leaves the
// profile and its reference alone.
func TestCoast(t *testing.T) {
	h := holt{alpha: 0.1, beta: 0.005, phi: 0.97, level: 5, trend: 0.01, n: 1}
	want := h
	want.update(h.predict(0.97))
	h.coast()
	if math.Abs(h.level-want.level) > 1e-12 || math.Abs(h.trend-want.trend) > 1e-12 {
		t.Errorf("holt coast: level %v trend %v, want the zero-error update's %v and %v", h.level, h.trend, want.level, want.trend)
	}
	s := seasonal{phi: 0.97, level: 5, trend: 0.01, base: 4.9, season: []float64{0.1, -0.2, 0.3, -0.1}}
	s.coast()
	if math.Abs(s.level-(5+0.97*0.01)) > 1e-12 || math.Abs(s.trend-0.97*0.01) > 1e-12 || s.base != 4.9 {
		t.Errorf("seasonal coast: level %v trend %v base %v", s.level, s.trend, s.base)
	}
	if got := s.predict(phiSum(0.97, 1), 2); got != s.level+0.97*s.trend+0.3 {
		t.Errorf("seasonal predict one step at phase 2 = %v, want level + phi*trend + season[2]", got)
	}
}
