package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMixtureP99MatchesSurvivalSolve pins the domain p99 solve (regrouped
// terms, skipped wait terms, Halley steps and their stopping rule) to the bracketed
// Newton solve of the plain mixture of survivals, to 1e-12 relative, over
// mixtures of light and saturated apps, with and without shifts (backlog
// waits, callees' p99s).
func TestMixtureP99MatchesSurvivalSolve(t *testing.T) {
	const seed = 11
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 12))
	worst := 0.0
	for trial := range 2000 {
		n := 1 + r.IntN(300)
		terms := make([]mixTerm, n)
		lo, hi, total, guess := math.Inf(1), 0.0, 0.0, 0.0
		for k := range terms {
			c := 1 + r.IntN(64)
			if r.IntN(8) == 0 {
				c = 1 + r.IntN(2000)
			}
			rho := []float64{0.05, 0.5, 0.8, 0.95, 0.98}[r.IntN(5)] * (0.9 + 0.1*r.Float64())
			mu := 1 / (0.005 + 0.06*r.Float64())
			if k > 0 && r.IntN(3) > 0 {
				mu = terms[k-1].soj.mu // a run of one app set
			}
			soj := Queue{Lambda: rho * float64(c) * mu, Mu: mu, C: c}.sojourn()
			shift := 0.0
			if r.IntN(5) == 0 {
				shift = 0.2 * r.Float64()
			}
			w := 1 + 1000*r.Float64()
			p99 := soj.quantile(&p99Tail) + shift
			terms[k] = mixTerm{w: w, soj: soj, shift: shift}
			total += w
			lo, hi = min(lo, p99), max(hi, p99)
			guess += w * p99
		}
		for k := range terms {
			m := &terms[k]
			m.w /= total
			d := m.soj.theta - m.soj.mu
			m.limit = math.Abs(d) < 1e-9*m.soj.mu
			m.b = m.w * m.soj.c * m.soj.mu / d
			m.a = m.w + m.b
		}
		if hi-lo <= 1e-9*hi {
			continue
		}
		got := solveMixture(terms, lo, hi, guess/total, &p99Tail)
		want := solveSurvival(lo, hi, guess/total, &p99Tail, func(t float64) (float64, float64) { return plainMixture(terms, t) })
		rel := math.Abs(got-want) / want
		worst = max(worst, rel)
		if rel > 1e-12 {
			t.Fatalf("trial %d (%d terms): solveMixture %v, survival solve %v (relative %.2g)", trial, n, got, want, rel)
		}
	}
	t.Logf("largest relative difference %.2g", worst)
}

// plainMixture is P(T > t) of the mixture and its density, term by term
// from survival, with no shortcut.
func plainMixture(terms []mixTerm, t float64) (p, f float64) {
	for _, m := range terms {
		sp, sf := m.soj.survival(t - m.shift)
		p += m.w * sp
		f += m.w * sf
	}
	return p, f
}

// BenchmarkMixtureP99 is one domain p99 solve (mixture.solve's), by the
// domain's app count, over seeded apps of 5 app sets, a fifth of them
// shifted by a callee or a backlog.
func BenchmarkMixtureP99(b *testing.B) {
	for _, n := range []int{30, 310, 3000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(21, 22))
			terms := make([]mixTerm, n)
			lo, hi, total, guess := math.Inf(1), 0.0, 0.0, 0.0
			for k := range terms {
				c := 4 + r.IntN(60)
				mu := 1 / (0.008 + 0.01*float64(k*5/n))
				soj := Queue{Lambda: 0.65 * (0.8 + 0.4*r.Float64()) * float64(c) * mu, Mu: mu, C: c}.sojourn()
				shift := 0.0
				if r.IntN(5) == 0 {
					shift = 0.05 * r.Float64()
				}
				w := math.Exp(3 * r.NormFloat64())
				p99 := soj.quantile(&p99Tail) + shift
				terms[k] = mixTerm{w: w, soj: soj, shift: shift}
				total += w
				lo, hi, guess = min(lo, p99), max(hi, p99), guess+w*p99
			}
			for k := range terms {
				m := &terms[k]
				m.w /= total
				m.b = m.w * m.soj.c * m.soj.mu / (m.soj.theta - m.soj.mu)
				m.a = m.w + m.b
			}
			b.ReportAllocs()
			for b.Loop() {
				solveMixture(terms, lo, hi, guess/total, &p99Tail)
			}
		})
	}
}
