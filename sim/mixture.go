package sim

import "math"

// mixture is what a domain's p99 needs of one tick (Telemetry.DomainP99):
// every app's steady-state sojourn and shift, with the arrival rates and
// p99s of the telemetry's apps, and each domain's p99 once solved. The Sim
// keeps one per telemetry snapshot.
type mixture struct {
	apps  []mixApp   // by app id
	doms  []dom      // the Sim's: each domain's app id range
	terms *[]mixTerm // the Sim's scratch
	p99s  []float64  // by domain, seconds; NaN until solved
}

type mixApp struct {
	soj   sojourn
	shift float64 // seconds added to the steady-state response time
}

// mixTerm is one app's share of a domain's response-time distribution:
// with tt = t - shift and d = theta - mu, for d not within 1e-9 mu of 0,
//
//	w P(T > tt) = a e^{-mu tt} - b e^{-theta tt},   b = w C mu / d,  a = w + b
//
// (survival regrouped, as separatedQuantile does), and the limit form of
// survivalGiven otherwise.
type mixTerm struct {
	w     float64 // share of the domain's arrivals
	soj   sojourn
	shift float64 // seconds added to the steady-state response time
	a, b  float64
	limit bool // d within 1e-9 mu of 0
}

func newMixture(s *Sim) mixture {
	m := mixture{apps: make([]mixApp, len(s.apps)), doms: s.doms, terms: &s.terms, p99s: make([]float64, len(s.doms))}
	m.forget()
	return m
}

// forget marks every domain's p99 unsolved, for a new tick.
func (m *mixture) forget() {
	for di := range m.p99s {
		m.p99s[di] = math.NaN()
	}
}

func (m *mixture) copyFrom(src *mixture) {
	copy(m.apps, src.apps)
	copy(m.p99s, src.p99s)
}

// p99 is domain di's merged p99 given the tick's app telemetry, solved on
// the first call.
func (m *mixture) p99(apps []AppTelemetry, di int) float64 {
	if p := m.p99s[di]; !math.IsNaN(p) {
		return p
	}
	p := m.solve(apps, di)
	m.p99s[di] = p
	return p
}

// solve finds the p99 of domain di's merged response-time distribution,
// weighting each app by its arrival rate.
func (m *mixture) solve(apps []AppTelemetry, di int) float64 {
	d := &m.doms[di]
	terms := (*m.terms)[:0]
	lo, hi := math.Inf(1), 0.0
	total, guess := 0.0, 0.0
	for id := d.first; id < d.first+d.n; id++ {
		a := &apps[id]
		if a.RPS <= 0 {
			continue
		}
		total += a.RPS
		terms = append(terms, mixTerm{w: a.RPS, soj: m.apps[id].soj, shift: m.apps[id].shift})
		lo, hi = min(lo, a.P99), max(hi, a.P99)
		guess += a.RPS * a.P99
	}
	*m.terms = terms
	if total == 0 {
		return 0
	}
	for k := range terms {
		m := &terms[k]
		m.w /= total
		d := m.soj.theta - m.soj.mu
		m.limit = math.Abs(d) < 1e-9*m.soj.mu
		if !m.limit {
			m.b = m.w * m.soj.c * m.soj.mu / d
			m.a = m.w + m.b
		}
	}
	if hi-lo <= 1e-9*hi {
		return hi
	}
	// Start from the arrival-weighted mean of the apps' p99s: the merged p99
	// lies between the smallest and the largest, usually near the mean.
	return solveMixture(terms, lo, hi, guess/total, &p99Tail)
}

// solveMixture finds t in [lo, hi] where the mixture's survival is q.p, from
// the guess t: Newton's method on g(t) = log P(T > t) - log p, with
//
//	g'  = -f/P,   g'' = (P'' P - f^2) / P^2,   f = -P' the density
//
// falling back to bisection whenever a step leaves the bracket. After a step
// h its error is about h^2 |g”| / (2 |g'|) (quadratic convergence); it stops
// once that is under 1e-15 relative, which saves the confirming step a
// stop on the step's own size (under 1e-9 relative, solveSurvival's) takes.
func solveMixture(terms []mixTerm, lo, hi, t float64, q *tail) float64 {
	for range 100 {
		p, f, p2 := mixSums(terms, t)
		if p > q.p {
			lo = t
		} else {
			hi = t
		}
		next := t + (math.Log(p)-q.logP)*p/f
		if f > 0 {
			h := next - t
			if h*h*math.Abs(p2*p-f*f) <= 2e-15*t*f*p || math.Abs(h) <= 1e-15*t {
				return next
			}
		}
		if !(f > 0) || !(next > lo && next < hi) {
			next = 0.5 * (lo + hi)
			if hi-lo <= 1e-12*hi {
				return next
			}
		}
		t = next
	}
	return t
}

// mixSums is the mixture's P(T > t), its density f = -dP/dt and its second
// derivative P” at t. Neighbouring terms are mostly apps of one app set,
// with one service rate and no shift (no backlog, no callees): they share
// e^{-mu t}, computed once for the run of them. As in survivalGiven, a wait
// term e^{-theta tt} with (theta - mu) tt >= separated is below rounding
// beside its e^{-mu tt} and is not computed.
func mixSums(terms []mixTerm, t float64) (p, f, p2 float64) {
	emX, em := math.NaN(), 0.0 // e^emX = em
	for k := range terms {
		m := &terms[k]
		tt := t - m.shift
		if tt <= 0 {
			p += m.w // survival 1, density 0
			continue
		}
		mu := m.soj.mu
		if x := -mu * tt; x != emX {
			emX, em = x, math.Exp(x)
		}
		if m.limit {
			// w (1 + C mu tt) e^{-mu tt} and its derivatives.
			c := m.soj.c
			p += m.w * (1 + c*mu*tt) * em
			f += m.w * mu * (1 - c + c*mu*tt) * em
			p2 += m.w * mu * mu * (1 - 2*c + c*mu*tt) * em
			continue
		}
		ae := m.a * em
		p += ae
		f += ae * mu
		p2 += ae * mu * mu
		if th := m.soj.theta; (th-mu)*tt < separated {
			be := m.b * math.Exp(-th*tt)
			p -= be
			f -= be * th
			p2 -= be * th * th
		}
	}
	return p, f, p2
}
