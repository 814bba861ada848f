package main

import (
	"math"
	"slices"
)

// trendHalf is the half-width of the smooth trend: a centred moving mean
// over 2 x trendHalf + 1 = 15 minutes.
const trendHalf = 7

// riseMinutes is the horizon of the ramp statistic: the rise over 5 minutes,
// about a replica's startup plus a node's provisioning.
const riseMinutes = 5

// Stats are the regime statistics of one per-minute demand series y (counts
// per minute), each over the minutes where it is defined.
//
//	trend(m)    = mean of y(m-7) .. y(m+7)                 (minutes 7 .. n-8)
//	residual(m) = y(m) / trend(m) - 1                      (trend > 0)
//	jitter(m)   = (y(m) - y(m-1)) / trend(m)               (minutes 8 .. n-8, trend > 0)
//	rise(m)     = y(m+5) / y(m) - 1                        (y(m) > 0)
//
// Jitter and Residual are root mean squares; ResidualAC1 is the residual's
// lag-1 autocorrelation, sum r(m) r(m-1) / sum r(m)^2; PoissonFloor is the
// residual that Poisson counts around the trend alone would give,
// sqrt(mean of 1 / trend(m)); Excess is the residual beyond it,
// sqrt(max(0, Residual^2 - PoissonFloor^2)). RiseQ95 and RiseQ99 are
// nearest-rank quantiles of rise; PeakToMean is max y / mean y.
type Stats struct {
	Minutes      int     // length of y
	Jitter       float64 // rms minute-to-minute change over the trend
	Residual     float64 // rms residual around the trend
	ResidualAC1  float64
	PoissonFloor float64
	Excess       float64
	RiseQ95      float64
	RiseQ99      float64
	PeakToMean   float64

	// sums behind the rms figures and the pooled quantiles, for pool.
	jitterSq, residSq, residLag, invTrend float64
	jitterN, residN                       int
	rises                                 []float64
	peakMean                              float64 // PeakToMean x Minutes
}

// measure computes the Stats of y.
func measure(y []float64) Stats {
	n := len(y)
	st := Stats{Minutes: n}
	if n == 0 {
		return st
	}
	trend := make([]float64, n) // 0 where undefined
	w := float64(2*trendHalf + 1)
	for m := trendHalf; m+trendHalf < n; m++ {
		sum := 0.0
		for k := m - trendHalf; k <= m+trendHalf; k++ {
			sum += y[k]
		}
		trend[m] = sum / w
	}
	prev, havePrev := 0.0, false
	for m := trendHalf; m+trendHalf < n; m++ {
		if trend[m] <= 0 {
			havePrev = false
			continue
		}
		r := y[m]/trend[m] - 1
		st.residSq += r * r
		st.invTrend += 1 / trend[m]
		st.residN++
		if havePrev {
			st.residLag += r * prev
		}
		prev, havePrev = r, true
		if m > trendHalf {
			j := (y[m] - y[m-1]) / trend[m]
			st.jitterSq += j * j
			st.jitterN++
		}
	}
	for m := 0; m+riseMinutes < n; m++ {
		if y[m] > 0 {
			st.rises = append(st.rises, y[m+riseMinutes]/y[m]-1)
		}
	}
	sum, peak := 0.0, y[0]
	for _, v := range y {
		sum += v
		peak = max(peak, v)
	}
	if sum > 0 {
		st.PeakToMean = peak / (sum / float64(n))
	}
	st.peakMean = st.PeakToMean * float64(n)
	st.finish()
	return st
}

// finish computes the figures from the sums.
func (st *Stats) finish() {
	if st.jitterN > 0 {
		st.Jitter = math.Sqrt(st.jitterSq / float64(st.jitterN))
	}
	if st.residN > 0 {
		st.Residual = math.Sqrt(st.residSq / float64(st.residN))
		st.PoissonFloor = math.Sqrt(st.invTrend / float64(st.residN))
		st.Excess = math.Sqrt(max(0, st.Residual*st.Residual-st.PoissonFloor*st.PoissonFloor))
	}
	if st.residSq > 0 {
		st.ResidualAC1 = st.residLag / st.residSq
	}
	slices.Sort(st.rises)
	st.RiseQ95 = nearestRank(st.rises, 95)
	st.RiseQ99 = nearestRank(st.rises, 99)
	if st.Minutes > 0 {
		st.PeakToMean = st.peakMean / float64(st.Minutes)
	}
}

// pool is the Stats of several series taken together: rms figures over all
// their minutes, the rise quantiles over all their rises, PeakToMean the
// minute-weighted mean of theirs.
func pool(all []Stats) Stats {
	var p Stats
	for _, st := range all {
		p.Minutes += st.Minutes
		p.jitterSq += st.jitterSq
		p.residSq += st.residSq
		p.residLag += st.residLag
		p.invTrend += st.invTrend
		p.jitterN += st.jitterN
		p.residN += st.residN
		p.rises = append(p.rises, st.rises...)
		p.peakMean += st.peakMean
	}
	p.finish()
	return p
}

// nearestRank is the smallest value of sorted that at least pct percent of
// it does not exceed; 0 when empty.
func nearestRank(sorted []float64, pct int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := (pct*len(sorted) + 99) / 100
	return sorted[max(k, 1)-1]
}
