package main

import (
	"math"
	"testing"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", what, got, want, tol)
	}
}

func TestStatsOfAConstantSeriesAreCalm(t *testing.T) {
	y := make([]float64, 600)
	for m := range y {
		y[m] = 4000
	}
	st := measure(y)
	near(t, "jitter", st.Jitter, 0, 1e-12)
	near(t, "residual", st.Residual, 0, 1e-12)
	near(t, "rise q99", st.RiseQ99, 0, 1e-12)
	near(t, "peak/mean", st.PeakToMean, 1, 1e-12)
	// Poisson counts of mean 4000 a minute vary by 1/sqrt(4000).
	near(t, "Poisson floor", st.PoissonFloor, 1/math.Sqrt(4000), 1e-12)
	near(t, "excess", st.Excess, 0, 1e-12)
}

// A sine of period 15 minutes, the trend's width, has the trend exactly
// flat: its residual is the sine (rms a/sqrt 2) and its minute-to-minute
// change 2a sin(pi/15) cos(...), rms 2a sin(pi/15)/sqrt 2.
func TestStatsOfASineOfTheTrendsPeriod(t *testing.T) {
	const a, mean = 0.1, 1e4
	y := make([]float64, 15*100)
	for m := range y {
		y[m] = mean * (1 + a*math.Sin(2*math.Pi*float64(m)/15))
	}
	st := measure(y)
	near(t, "residual", st.Residual, a/math.Sqrt2, 1e-4)
	near(t, "jitter", st.Jitter, 2*a*math.Sin(math.Pi/15)/math.Sqrt2, 1e-4)
	// Lag-1 autocorrelation of a sampled sine: cos(2 pi / 15).
	near(t, "residual AC1", st.ResidualAC1, math.Cos(2*math.Pi/15), 2e-3)
	near(t, "excess", st.Excess, math.Sqrt(a*a/2-1/mean), 1e-4)
	peak := 0.0
	for m := range 15 {
		peak = max(peak, 1+a*math.Sin(2*math.Pi*float64(m)/15))
	}
	near(t, "peak/mean", st.PeakToMean, peak, 1e-9)
}

// An hour of 1%-a-minute growth then a flat day: every 5-minute rise inside
// the growth is 1.01^5 - 1, which more than 5% of the rises are.
func TestStatsRiseQuantilesOfARamp(t *testing.T) {
	y := make([]float64, 1000)
	for m := range y {
		y[m] = 100 * math.Pow(1.01, float64(min(m, 100)))
	}
	st := measure(y)
	want := math.Pow(1.01, 5) - 1
	near(t, "rise q95", st.RiseQ95, want, 1e-9)
	near(t, "rise q99", st.RiseQ99, want, 1e-9)
	// Two flat series: 0 rise at q95 and q99, pooled with the ramp 995
	// + 2 x 995 rises of which 96 are the ramp's (3.2%): q95 is 0, q99 the
	// ramp's.
	flat := measure(make1000(7))
	p := pool([]Stats{st, flat, flat})
	near(t, "pooled rise q95", p.RiseQ95, 0, 1e-12)
	near(t, "pooled rise q99", p.RiseQ99, want, 1e-9)
	near(t, "pooled peak/mean", p.PeakToMean, (st.PeakToMean+2)/3, 1e-9)
}

func make1000(v float64) []float64 {
	y := make([]float64, 1000)
	for m := range y {
		y[m] = v
	}
	return y
}

func TestNearestRank(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		pct  int
		want float64
	}{{50, 5}, {95, 10}, {90, 9}, {10, 1}, {1, 1}} {
		if got := nearestRank(s, c.pct); got != c.want {
			t.Errorf("q%d = %v, want %v", c.pct, got, c.want)
		}
	}
}

func TestOverlapsFindsSharedMinutesAndRows(t *testing.T) {
	train := []window{
		{scenario: "a", regime: regimeQuiet, trace: "wc", from: 0, to: 100},
		{scenario: "f", regime: regimeFunctions, trace: "az", rows: "even"},
	}
	disjoint := []window{
		{scenario: "b", regime: regimeQuiet, trace: "wc", from: 101, to: 200},
		{scenario: "g", regime: regimeFunctions, trace: "az", rows: "odd"},
	}
	if o := overlaps(train, disjoint); len(o) != 0 {
		t.Errorf("disjoint sets overlap: %v", o)
	}
	shared := []window{
		{scenario: "c", regime: regimeTournament, trace: "wc", from: 100, to: 200},
		{scenario: "h", regime: regimeFunctions, trace: "az", rows: "all"},
	}
	if o := overlaps(train, shared); len(o) != 2 {
		t.Errorf("want the shared minute 100 and the rows \"all\" reported, got %v", o)
	}
}
