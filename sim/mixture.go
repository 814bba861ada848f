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

type mixTerm struct {
	w     float64 // share of the domain's arrivals
	soj   sojourn
	shift float64 // seconds added to the steady-state response time
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
		terms[k].w /= total
	}
	if hi-lo <= 1e-9*hi {
		return hi
	}
	// Start from the arrival-weighted mean of the apps' p99s: the merged p99
	// lies between the smallest and the largest, usually near the mean.
	return solveSurvival(lo, hi, guess/total, &p99Tail, func(t float64) (float64, float64) { return mixSurvival(terms, t) })
}

// mixSurvival is P(T > t) of the mixture terms and its density.
//
// Neighbouring terms are mostly apps of one app set, with one service rate
// and no shift (no backlog, no callees): they share e^{-mu t}, computed once
// for the run of them.
func mixSurvival(terms []mixTerm, t float64) (p, f float64) {
	emX, em := math.NaN(), 0.0 // e^emX = em
	for k := range terms {
		m := &terms[k]
		tt := t - m.shift
		sp, sf := 1.0, 0.0 // survival's at tt <= 0
		if tt > 0 {
			if x := -m.soj.mu * tt; x != emX {
				emX, em = x, math.Exp(x)
			}
			sp, sf = m.soj.survivalGiven(tt, em)
		}
		p += m.w * sp
		f += m.w * sf
	}
	return p, f
}
