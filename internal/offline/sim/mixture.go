package sim

import "math"

// mixture is what a domain's p99 needs of one tick (Telemetry.DomainP99):
// every app's steady-state sojourn and shift, with the arrival rates and
// p99s of the telemetry's apps, and each domain's p99 once solved. The Sim
// keeps one per telemetry snapshot, and each domain's latest solve, whose
// p99 starts the next tick's solve (2.0 evaluations of the mixture a solve,
// 2.8 from the apps' mean p99).
type mixture struct {
	tick  int        // of the telemetry
	apps  []mixApp   // by app id
	doms  []dom      // the Sim's: each domain's app id range
	terms *[]mixTerm // the Sim's scratch
	p99s  []float64  // by domain, seconds; NaN until solved
	last  []solved   // the Sim's: each domain's latest solve, for a start
}

// solved is a domain p99 solved for a tick.
type solved struct {
	tick int
	p99  float64
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
	m := mixture{apps: make([]mixApp, len(s.apps)), doms: s.doms, terms: &s.terms, p99s: make([]float64, len(s.doms)), last: s.solved}
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
	m.tick = src.tick
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
	m.last[di] = solved{tick: m.tick, p99: p}
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
	// Start from the previous tick's p99 when it was solved, else from the
	// arrival-weighted mean of the apps' p99s: the merged p99 lies between
	// the smallest and the largest, usually near the mean.
	start := guess / total
	if l := m.last[di]; l.tick == m.tick-1 && l.p99 > lo && l.p99 < hi {
		start = l.p99
	}
	return solveMixture(terms, lo, hi, start, &p99Tail)
}

// solveMixture finds t in [lo, hi] where the mixture's survival is q.p, from
// the guess t: Halley's method on g(t) = log P(T > t) - log p, falling back
// to bisection whenever a step leaves the bracket. With f1, f2, f3 the
// first three derivatives of P, signs such that all are positive for a
// single exponential (mixSums), u = f1/P, v = f2/P and z = f3/P:
//
//	g1 = -u,   g2 = v - u^2,   g3 = 3uv - z - 2u^3       g's derivatives
//	h  = -2 g g1 / (2 g1^2 - g g2)                        Halley's step
//
// Its error after a step h is about |c| |h|^3 (cubic convergence), with
// c = g3/(6 g1) - (g2/(2 g1))^2; it stops once that is under 1e-15
// relative: mostly two or three evaluations from the guess, where
// Newton's method with a stop on its step's size (under 1e-9 relative, as
// solveSurvival) takes about four.
func solveMixture(terms []mixTerm, lo, hi, t float64, q *tail) float64 {
	for range 100 {
		p, f1, f2, f3 := mixSums(terms, t)
		if p > q.p {
			lo = t
		} else {
			hi = t
		}
		g := math.Log(p) - q.logP
		u, v, z := f1/p, f2/p, f3/p
		g1, g2, g3 := -u, v-u*u, 3*u*v-z-2*u*u*u
		h := -2 * g * g1 / (2*g1*g1 - g*g2)
		next := t + h
		if f1 > 0 && next > lo && next < hi {
			c := g3/(6*g1) - g2*g2/(4*g1*g1)
			if math.Abs(c*h*h*h) <= 1e-15*t || math.Abs(h) <= 1e-15*t {
				return next
			}
		} else {
			next = 0.5 * (lo + hi)
			if hi-lo <= 1e-12*hi {
				return next
			}
		}
		t = next
	}
	return t
}

// mixSums is the mixture's P(T > t) at t and its first three derivatives,
// as f1 = -dP/dt (the density), f2 = d2P/dt2 and f3 = -d3P/dt3.
// Neighbouring terms are mostly apps of one app set, with one service rate
// and no shift (no backlog, no callees): they share e^{-mu t}, computed
// once for the run of them. As in survivalGiven, a wait term e^{-theta tt}
// with (theta - mu) tt >= separated is below rounding beside its
// e^{-mu tt} and is not computed.
func mixSums(terms []mixTerm, t float64) (p, f1, f2, f3 float64) {
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
			c, we := m.soj.c, m.w*em
			p += we * (1 + c*mu*tt)
			f1 += we * mu * (1 - c + c*mu*tt)
			f2 += we * mu * mu * (1 - 2*c + c*mu*tt)
			f3 += we * mu * mu * mu * (1 - 3*c + c*mu*tt)
			continue
		}
		ae := m.a * em
		p += ae
		ae *= mu
		f1 += ae
		ae *= mu
		f2 += ae
		f3 += ae * mu
		if th := m.soj.theta; (th-mu)*tt < separated {
			be := m.b * math.Exp(-th*tt)
			p -= be
			be *= th
			f1 -= be
			be *= th
			f2 -= be
			f3 -= be * th
		}
	}
	return p, f1, f2, f3
}
