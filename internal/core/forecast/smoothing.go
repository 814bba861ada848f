package forecast

import "math"

// The two point forecasters work on x = log(y + Offset), so additive
// components are relative changes of demand and a daily profile scales with
// the level (multiplicative seasonality on the demand scale).
//
// Source for both: R. J. Hyndman, G. Athanasopoulos, "Forecasting: Principles
// and Practice", 3rd ed., OTexts 2021, section 8.2 (Holt's linear trend and
// the damped trend method, Gardner & McKenzie 1985) and section 8.3
// (Holt-Winters' damped method, additive form).

// phiSum returns phi + phi^2 + ... + phi^h, the damped trend's reach after h
// steps (FPP3 eq. in 8.2, "damped trend methods").
func phiSum(phi float64, h int) float64 {
	if phi == 1 {
		return float64(h)
	}
	return phi * (1 - math.Pow(phi, float64(h))) / (1 - phi)
}

// holt is Holt's linear trend method with a damped trend, the fallback model.
type holt struct {
	alpha, beta, phi float64
	level, trend     float64
	n                int // observations seen, saturating at 1
}

// update folds one observation x into the state:
//
//	l_t = alpha*x_t + (1-alpha)*(l_{t-1} + phi*b_{t-1})
//	b_t = beta*(l_t - l_{t-1}) + (1-beta)*phi*b_{t-1}
//
// The first observation sets the level and the trend starts at 0: a first
// difference (FPP3 8.2 suggests b_0 = y_1 - y_0) is mostly noise at one
// step per minute, and a small beta would keep it for hours.
func (m *holt) update(x float64) {
	if m.n == 0 {
		m.level, m.trend, m.n = x, 0, 1
		return
	}
	prev := m.level
	m.level = m.alpha*x + (1-m.alpha)*(prev+m.phi*m.trend) // smoothed level
	m.trend = m.beta*(m.level-prev) + (1-m.beta)*m.phi*m.trend
}

// coast moves the state over a step without an observation: the update
// with a zero error, x_t = l_{t-1} + phi*b_{t-1}.
//
//	l_t = l_{t-1} + phi*b_{t-1}
//	b_t = phi*b_{t-1}
func (m *holt) coast() {
	m.level += m.phi * m.trend
	m.trend *= m.phi
}

// predict returns the forecast h >= 1 steps ahead, given
// reach = phiSum(phi, h):
//
//	x_{t+h|t} = l_t + (phi + ... + phi^h)*b_t
func (m *holt) predict(reach float64) float64 {
	return m.level + reach*m.trend
}

// seasonal is Holt-Winters' additive method with a damped trend, on a
// seasonal profile of len(season) steps that is smoothed over a window of
// 2*window+1 steps.
type seasonal struct {
	alpha, beta, gamma, phi float64
	baseAlpha               float64
	window                  int
	level, trend            float64
	base                    float64   // slow deseasonalised level, the profile's reference
	season                  []float64 // by phase; len is the period in steps
	ready                   bool      // initialised from one period of history
}

// init sets the state from one period of history: byPhase[p] is the
// observation at phase p, the last of them at phase last, so in time order
// the period runs x_i = byPhase[(last+1+i) mod m], i = 0..m-1. This follows
// the heuristic of Hyndman et al., "Forecasting with Exponential Smoothing",
// Springer 2008, section 2.6.1: remove a linear trend, take the rest as the
// seasonal profile. The trend is measured across the period boundary, from
// the means of the first and last w steps, so that the profile joins up where
// one day ends and the next begins; a least-squares slope over one period
// would mistake part of the daily cycle for a trend (for a sine of amplitude
// A the slope over one period is -6A/(pi*m) per step, a jump of about 1.9A at
// the boundary).
//
//	w   = max(window, 1)
//	c   = (mean(x_{m-w..m-1}) - mean(x_{0..w-1})) / (m - w)   trend per step
//	a   = mean(x_i - c*i)                                     level at i = 0
//	s_p = movingAverage(x_i - a - c*i), p = phase of x_i       profile
//	l   = a + c*(m-1), b = c                                  state after x_{m-1}
//
// scratch must hold m values.
func (m *seasonal) init(byPhase []float64, last int, scratch []float64) {
	n := len(m.season)
	x := func(i int) float64 { return byPhase[(last+1+i)%n] }
	w := max(m.window, 1)
	var first, end float64
	for i := range w {
		first += x(i)
		end += x(n - w + i)
	}
	c := (end - first) / float64(w) / float64(n-w)
	var a float64
	for i := range n {
		a += x(i) - c*float64(i)
	}
	a /= float64(n)
	for i := range n {
		scratch[(last+1+i)%n] = x(i) - a - c*float64(i)
	}
	movingAverage(m.season, scratch, m.window)
	m.level, m.trend, m.ready = a+c*float64(n-1), c, true
	m.base = m.level
}

// movingAverage sets dst[p] to the mean of src over the circular window
// [p-w, p+w].
func movingAverage(dst, src []float64, w int) {
	n := len(src)
	var sum float64
	for j := -w; j <= w; j++ {
		sum += src[(j%n+n)%n]
	}
	k := float64(2*w + 1)
	for p := range dst {
		dst[p] = sum / k
		sum += src[(p+w+1)%n] - src[((p-w)%n+n)%n]
	}
}

// update folds the observation x at phase p into the state. Level and trend
// follow FPP3 8.3 (Holt-Winters' damped method, component form, with
// s_{t-m} = season[p]):
//
//	l_t = alpha*(x_t - s_{t-m}) + (1-alpha)*(l_{t-1} + phi*b_{t-1})
//	b_t = beta*(l_t - l_{t-1}) + (1-beta)*phi*b_{t-1}
//
// The seasonal equation departs from FPP3's s_t = gamma*(x_t - l_{t-1} -
// phi*b_{t-1}) + (1-gamma)*s_{t-m}. With a step of a minute the level must
// react within minutes (alpha near 0.2), and then it absorbs any error of the
// profile before the seasonal equation sees it: a wrong profile is never
// corrected, only shifted. So the profile is measured against a slow
// deseasonalised level B instead, a trailing one-period mean by default, much
// as classical decomposition measures it against a centred moving average of
// one period (FPP3 3.4):
//
//	B_t = B_{t-1} + baseAlpha*(x_t - s_{t-m} - B_{t-1})
//	s_j = s_j + gamma/(2w+1)*(x_t - B_{t-1} - s_j),   j = p-w..p+w
//
// Each index j of the window around p is updated with weight gamma/(2w+1)
// and its own s_j in place of s_{t-m}, so each index is an exponentially
// weighted mean of its neighbourhood's values relative to B and moves by
// about gamma per period.
func (m *seasonal) update(x float64, p int) {
	n := len(m.season)
	prevL, prevB, base := m.level, m.trend, m.base
	m.level = m.alpha*(x-m.season[p]) + (1-m.alpha)*(prevL+m.phi*prevB)
	m.trend = m.beta*(m.level-prevL) + (1-m.beta)*m.phi*prevB
	m.base += m.baseAlpha * (x - m.season[p] - base)
	g := m.gamma / float64(2*m.window+1)
	for j := p - m.window; j <= p+m.window; j++ {
		k := j
		if k < 0 {
			k += n
		} else if k >= n {
			k -= n
		}
		m.season[k] += g * (x - base - m.season[k])
	}
}

// coast moves the state over a step without an observation: level and trend
// as for an observation equal to the forecast (a zero error), the profile and
// its reference level unchanged.
//
//	l_t = l_{t-1} + phi*b_{t-1}
//	b_t = phi*b_{t-1}
func (m *seasonal) coast() {
	m.level += m.phi * m.trend
	m.trend *= m.phi
}

// predict returns the forecast h >= 1 steps ahead, at phase q, given
// reach = phiSum(phi, h):
//
//	x_{t+h|t} = l_t + (phi + ... + phi^h)*b_t + s_q
func (m *seasonal) predict(reach float64, q int) float64 {
	return m.level + reach*m.trend + m.season[q]
}
