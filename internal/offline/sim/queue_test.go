package sim

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestErlangCClosedForms(t *testing.T) {
	tests := []struct {
		name string
		q    Queue
		want float64
	}{
		// M/M/1: P(wait) = rho.
		{"single server waits with probability rho", Queue{Lambda: 0.8, Mu: 1, C: 1}, 0.8},
		// M/M/2: C = 2 rho^2 / (1 + rho).
		{"two servers match 2rho^2/(1+rho)", Queue{Lambda: 1.2, Mu: 1, C: 2}, 2 * 0.36 / 1.6},
		// Tabulated: c = 10, a = 8 gives C = 0.4092 (Erlang C tables).
		{"ten servers at load 8 match the table", Queue{Lambda: 8, Mu: 1, C: 10}, 0.409},
		{"idle queue never waits", Queue{Lambda: 0, Mu: 1, C: 4}, 0},
		{"many servers far from load never wait", Queue{Lambda: 1, Mu: 1, C: 5000}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.q.ErlangC()
			if math.Abs(got-tt.want) > 1e-3 {
				t.Fatalf("ErlangC(%+v) = %.5f, want %.5f", tt.q, got, tt.want)
			}
		})
	}
}

func TestP99SingleServerClosedForm(t *testing.T) {
	// M/M/1 response time is exponential at rate mu - lambda.
	for _, rho := range []float64{0.1, 0.5, 0.9, 0.99} {
		q := Queue{Lambda: rho * 10, Mu: 10, C: 1}
		want := math.Log(100) / (q.Mu - q.Lambda)
		if got := q.P99(); math.Abs(got-want)/want > 1e-6 {
			t.Errorf("rho %.2f: P99 = %.6f, want %.6f", rho, got, want)
		}
	}
}

func TestSurvivalIsADistribution(t *testing.T) {
	// theta == mu exercises the limit form; survival must stay continuous there.
	q := Queue{Lambda: 1, Mu: 1, C: 2} // theta = 2 - 1 = mu
	s := q.sojourn()
	near := sojourn{c: s.c, mu: s.mu, theta: s.theta * (1 + 1e-7)}
	for _, x := range []float64{0.1, 1, 5} {
		a, _ := s.survival(x)
		b, _ := near.survival(x)
		if math.Abs(a-b) > 1e-5 {
			t.Errorf("survival(%v) limit form %.8f differs from nearby %.8f", x, a, b)
		}
	}
	// The density integrates the survival: check a numeric derivative.
	q = Queue{Lambda: 30, Mu: 1, C: 32}
	s = q.sojourn()
	for _, x := range []float64{0.5, 2, 8} {
		h := 1e-6
		p1, _ := s.survival(x - h)
		p2, _ := s.survival(x + h)
		_, f := s.survival(x)
		if num := (p1 - p2) / (2 * h); math.Abs(num-f) > 1e-5*math.Max(1, f) {
			t.Errorf("density at %v = %.8f, numeric %.8f", x, f, num)
		}
	}
}

// TestP99MatchesDiscreteEventSimulation checks the Erlang-C response-time p99
// against a discrete-event simulation of the same M/M/c FCFS queue.
func TestP99MatchesDiscreteEventSimulation(t *testing.T) {
	const seed = 20261202
	t.Logf("seed %d", seed)
	for _, c := range []int{1, 4, 32} {
		for _, rho := range []float64{0.5, 0.8, 0.95} {
			t.Run(fmt.Sprintf("c=%d/rho=%.2f", c, rho), func(t *testing.T) {
				t.Parallel()
				q := Queue{Lambda: rho * float64(c) * 40, Mu: 40, C: c}
				n := 2_000_000
				if rho > 0.9 {
					n = 12_000_000 // slower mixing near saturation
				}
				got := simulateP99(q, n, rand.New(rand.NewPCG(seed, uint64(c))))
				want := q.P99()
				if rel := math.Abs(got-want) / want; rel > 0.05 {
					t.Fatalf("DES p99 %.5fs vs Erlang-C %.5fs: off by %.1f%%", got, want, 100*rel)
				}
			})
		}
	}
}

// simulateP99 runs n customers through an M/M/c FCFS queue and returns the
// sample p99 of their response times, after a 5% warm-up.
func simulateP99(q Queue, n int, r *rand.Rand) float64 {
	free := make(serverHeap, q.C) // times at which each server becomes free
	heap.Init(&free)
	warm := n / 20
	samples := make([]float64, 0, n-warm)
	now := 0.0
	for i := 0; i < n; i++ {
		now += r.ExpFloat64() / q.Lambda
		start := math.Max(now, free[0])
		done := start + r.ExpFloat64()/q.Mu
		free[0] = done
		heap.Fix(&free, 0)
		if i >= warm {
			samples = append(samples, done-now)
		}
	}
	slices.Sort(samples)
	return samples[int(0.99*float64(len(samples)))]
}

type serverHeap []float64

func (h serverHeap) Len() int           { return len(h) }
func (h serverHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h serverHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *serverHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *serverHeap) Pop() any          { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

func BenchmarkP99(b *testing.B) {
	for _, c := range []int{4, 64, 800} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			q := Queue{Lambda: 0.8 * float64(c) * 40, Mu: 40, C: c}
			b.ReportAllocs()
			var sink float64
			for b.Loop() {
				sink += q.P99()
			}
			_ = sink
		})
	}
}

// TestErlangCsMatchesErlangC pins the interleaved recursions to the
// one-queue recursion bit for bit, over groups with idle queues, no servers,
// and any order.
func TestErlangCsMatchesErlangC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 4, 5, 17, 1000} {
		qs := make([]Queue, n)
		order := make([]int32, n)
		for i := range qs {
			c := r.IntN(200)
			if r.IntN(10) == 0 {
				c = r.IntN(3000)
			}
			lambda := r.Float64() * float64(c) * 20
			if r.IntN(20) == 0 {
				lambda = 0
			}
			qs[i], order[i] = Queue{Lambda: lambda, Mu: 20 * (0.5 + r.Float64()), C: c}, int32(i)
		}
		r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		out := make([]float64, n)
		erlangCs(qs, order, out)
		for i, q := range qs {
			if want := q.ErlangC(); math.Float64bits(out[i]) != math.Float64bits(want) {
				t.Fatalf("n %d: erlangCs gives %v for %+v, ErlangC %v", n, out[i], q, want)
			}
		}
	}
}

// TestQuantileMatchesBracketedNewton pins quantile, shortcuts included (one
// logarithm once the wait term is negligible, separatedQuantile, Newton from
// the fixed-point step), to a slow reference: bisection to the last bit on
// the exact survival (survivalReference, no term dropped), over queues from
// idle to saturated and from one server to thousands. The shortcuts promise
// 1e-9 relative (the negligible wait moves P(T > t) by under 1e-7 relative,
// t by that over mu t = log 100); the reference is independent of the
// shortcut's threshold, so a looser negligibleWait fails it.
func TestQuantileMatchesBracketedNewton(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	worst := 0.0
	for range 20000 {
		c := 1 + r.IntN(64)
		if r.IntN(4) == 0 {
			c = 1 + r.IntN(4000)
		}
		rho := []float64{0.05, 0.5, 0.8, 0.95, 0.98}[r.IntN(5)] * (0.9 + 0.1*r.Float64())
		mu := 8 + 120*r.Float64()
		s := Queue{Lambda: rho * float64(c) * mu, Mu: mu, C: c}.sojourn()
		got := s.quantile(&p99Tail)
		want := quantileReference(s, p99Tail.p)
		rel := math.Abs(got-want) / want
		worst = max(worst, rel)
		if rel > 1e-9 {
			t.Fatalf("%+v: quantile %v, bisection on the exact survival %v (relative %.2g)", s, got, want, rel)
		}
	}
	t.Logf("largest relative difference %.2g", worst)
}

// survivalReference is P(T > t) of the M/M/c sojourn written out, nothing
// dropped: (1-c) e^{-mu t} + c (theta e^{-mu t} - mu e^{-theta t})/(theta - mu),
// the wait probability c, the wait's rate theta (Harchol-Balter,
// "Performance Modeling and Design of Computer Systems", ch. 14), and its
// limit (1-c) e^{-mu t} + c (1 + mu t) e^{-mu t} at theta = mu.
func survivalReference(s sojourn, t float64) float64 {
	em := math.Exp(-s.mu * t)
	if s.theta == s.mu {
		return (1-s.c)*em + s.c*(1+s.mu*t)*em
	}
	return (1-s.c)*em + s.c*(s.theta*em-s.mu*math.Exp(-s.theta*t))/(s.theta-s.mu)
}

// quantileReference is the t with survivalReference(t) = p by bisection,
// from [0, 1] widened until it brackets, to adjacent floats.
func quantileReference(s sojourn, p float64) float64 {
	lo, hi := 0.0, 1.0
	for survivalReference(s, hi) > p {
		lo, hi = hi, 2*hi
	}
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			return hi
		}
		if survivalReference(s, mid) > p {
			lo = mid
		} else {
			hi = mid
		}
	}
}
