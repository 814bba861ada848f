package sim

import "math"

// Queue is an M/M/c queue in steady state: Poisson arrivals at Lambda per
// second, C identical servers each serving at Mu per second (exponential
// service), first come first served, infinite buffer. It requires
// Lambda < C*Mu (utilisation below 1) and C >= 1.
type Queue struct {
	Lambda float64 // arrival rate, 1/s
	Mu     float64 // service rate of one server, 1/s
	C      int     // servers
}

// Utilisation is rho = lambda / (c mu).
func (q Queue) Utilisation() float64 { return q.Lambda / (float64(q.C) * q.Mu) }

// ErlangC is the probability that an arrival waits, C(c, a) with offered load
// a = lambda/mu. It uses the Erlang-B recursion in its inverse form, which needs
// no division per server (Jagerman 1974):
//
//	1/B(0) = 1
//	1/B(k) = 1 + (k/a) / B(k-1)
//	C = B / (1 - rho (1 - B))
//
// For c far above a, 1/B overflows to +Inf and C is 0, which is exact to
// float64 precision.
func (q Queue) ErlangC() float64 {
	a := q.Lambda / q.Mu
	if a <= 0 {
		return 0
	}
	inva := 1 / a
	invB := 1.0
	for k := 1; k <= q.C; k++ {
		invB = 1 + float64(k)*inva*invB
	}
	b := 1 / invB
	rho := a / float64(q.C)
	return b / (1 - rho*(1-b))
}

// erlangCs sets out[id] to qs[id].ErlangC() for every id in order, bit for
// bit. Each recursion is a chain of C dependent multiply-adds; erlangGroup
// runs erlangLanes of them side by side, so the floating-point units
// overlap many chains instead of waiting on one. order should list the
// queues by C, ascending: a group of neighbours steps together up to its
// largest C, and a group with one out of order runs one by one. The groups
// are taken from order's end, where the chains are longest; the shortest
// few left over run one by one.
func erlangCs(qs []Queue, order []int32, out []float64) {
	k := len(order)
	for ; k >= erlangLanes; k -= erlangLanes {
		ids := order[k-erlangLanes : k : k]
		var g erlangBatch
		ok := true
		for j, id := range ids {
			q := qs[id]
			g.lambda[j], g.mu[j], g.cs[j], g.servers[j] = q.Lambda, q.Mu, q.C, float64(q.C)
			// Else ErlangC's early return (or, where a = lambda/mu
			// underflows to 0, the same 0 by the recursion), or out of order.
			ok = ok && q.Lambda > 0 && q.Mu > 0 && q.C >= max(1, g.cs[max(j-1, 0)])
		}
		if !ok {
			for _, id := range ids {
				out[id] = qs[id].ErlangC()
			}
			continue
		}
		erlangGroup(&g)
		for j, id := range ids {
			out[id] = g.out[j]
		}
	}
	for _, id := range order[:k] {
		out[id] = qs[id].ErlangC()
	}
}

// sojourn is the response-time (wait + service) distribution of an M/M/c queue:
// with probability 1-C no wait, else an exponential wait at rate
// theta = c mu - lambda, plus an exponential service at rate mu.
type sojourn struct {
	c, mu, theta float64 // wait probability, service rate, wait rate
}

func (q Queue) sojourn() sojourn { return q.sojournWaiting(q.ErlangC()) }

// sojournWaiting is the sojourn of q given its ErlangC.
func (q Queue) sojournWaiting(erlangC float64) sojourn {
	return sojourn{c: erlangC, mu: q.Mu, theta: float64(q.C)*q.Mu - q.Lambda}
}

// survival is P(T > t) and the density f(t) = -dP(T > t)/dt (Gross & Harris,
// Fundamentals of Queueing Theory, 4th ed., eq. 2.39):
//
//	P(T > t) = (1-C) e^{-mu t} + C (theta e^{-mu t} - mu e^{-theta t}) / (theta - mu)
//	         = (1-C) e^{-mu t} + C (1 + mu t) e^{-mu t}            when theta = mu
func (s sojourn) survival(t float64) (p, f float64) {
	if t <= 0 {
		return 1, 0
	}
	return s.survivalGiven(t, math.Exp(-s.mu*t))
}

// survivalMemo is survival with e^{-mu t} through em: callers evaluating
// many sojourns of one service rate at one t, one after another (the apps
// of an app set with no backlog), compute it once.
func (s sojourn) survivalMemo(t float64, em *expMemo) (p, f float64) {
	if t <= 0 {
		return 1, 0
	}
	return s.survivalGiven(t, em.exp(-s.mu*t))
}

// expMemo is math.Exp with a one-entry memo: a run of equal arguments costs
// one exponential. The zero value is not ready; use newExpMemo.
type expMemo struct{ x, y float64 } // e^x = y

func newExpMemo() expMemo { return expMemo{x: math.NaN()} }

func (m *expMemo) exp(x float64) float64 {
	if x != m.x { // always for NaN
		m.x, m.y = x, math.Exp(x)
	}
	return m.y
}

// survivalGiven is survival at t > 0 given em = e^{-mu t}.
//
// When (theta - mu) t >= separated, et = e^{-theta t} = em e^{-(theta-mu) t}
// is taken as 0 without its exponential: with b = C mu / (theta - mu), p is
// (1+b) em - b et (separatedQuantile), so the term moves p by under
// e^-37 = 8.5e-17 relative, below float64's rounding, and f by under
// 8.5e-17 theta/mu relative.
func (s sojourn) survivalGiven(t, em float64) (p, f float64) {
	d := s.theta - s.mu
	if math.Abs(d) < 1e-9*s.mu {
		p = (1-s.c)*em + s.c*(1+s.mu*t)*em
		f = (1-s.c)*s.mu*em + s.c*s.mu*s.mu*t*em
		return p, f
	}
	et := 0.0
	if d*t < separated {
		et = math.Exp(-s.theta * t)
	}
	p = (1-s.c)*em + s.c*(s.theta*em-s.mu*et)/d
	f = (1-s.c)*s.mu*em + s.c*s.theta*s.mu*(em-et)/d
	return p, f
}

// tail is a tail probability and the logarithms the quantile solver takes
// of it, computed once rather than on every solve.
type tail struct {
	p     float64 // P(T > t) sought, in (0, 1)
	logP  float64 // log p
	log1P float64 // log(1/p)
	log2P float64 // log(2/p)
}

func newTail(p float64) tail {
	return tail{p: p, logP: math.Log(p), log1P: math.Log(1 / p), log2P: math.Log(2 / p)}
}

// p99Tail is the tail of a 99th percentile: P(T > p99) = 0.01.
var p99Tail = newTail(0.01)

// quantileBounds brackets the response time exceeded with probability q.p:
// T >= service alone gives the lower bound, and the union bound
// P(W+S > a+b) <= P(W > a) + P(S > b) with a, b each taking p/2 the upper.
func (s sojourn) quantileBounds(q *tail) (lo, hi float64) {
	lo = q.log1P / s.mu
	hi = q.log2P / s.mu
	if s.c > q.p/2 {
		hi += math.Log(2*s.c/q.p) / s.theta
	}
	return lo, hi
}

// negligibleWait is the wait probability below which the p99 is the service
// time's alone: the wait term then moves P(T > t) by under 1e-7 relative.
const negligibleWait = 1e-9

// quantile is the t with P(T > t) = q.p. Queues with more than a hundredth
// of a server spare take separatedQuantile (relative accuracy 1e-15); the
// rest, at saturation, Newton's method on the survival, safeguarded with
// bisection (relative accuracy 1e-9).
func (s sojourn) quantile(q *tail) float64 {
	if s.c < negligibleWait {
		return q.log1P / s.mu
	}
	if t, ok := s.separatedQuantile(q); ok {
		return t
	}
	lo, hi := s.quantileBounds(q)
	return solveSurvival(lo, hi, lo, q, s.survival)
}

// separated is how far apart, in e-folds, survival's two exponentials must
// be for the wait's to be dropped: below e^-37 = 8.5e-17 of the service's,
// under float64's rounding.
const separated = 37

// separatedQuantile is quantile for a queue whose waits clear faster than a
// request is served, theta > 1.01 mu (spare capacity of over a hundredth of
// a server); ok is false for the others. With b = C mu / (theta - mu),
// survival (eq. 2.39) regroups as
//
//	P(T > t) = (1 + b) e^{-mu t} (1 - r(t)),   r(t) = b/(1+b) e^{-(theta-mu) t}
//
// and r, in [0, 0.99) and decreasing, is the wait's share. Its logarithm
// needs one exponential and log(1 - r), where survival needs two
// exponentials and the solve a logarithm of the sum (log(1 + b) and
// log(1 - r) come from log1p's series when small, as they mostly are):
//
//	g(t)  = log P(T > t) - log p = mu (t0 - t) + log(1 - r(t))
//	g'(t) = -mu + (theta - mu) r(t) / (1 - r(t))
//	t0    = log((1+b)/p) / mu                         the root without r
//
// g is decreasing and concave, so Newton's method from t0, an upper bound,
// descends monotonically to the root; after a step h its error is about
// h^2 |g2| / (2 |g'|) (quadratic convergence), with g2 the second
// derivative
//
//	g2(t) = -(theta - mu)^2 r(t) / (1 - r(t))^2
//
// It stops once that is under 1e-15 relative, mostly after one step (three
// transcendentals in all). Once r(t0) < e^-37 = 8.5e-17 (with the bound
// r(t0) < min(1, b) e^{-(theta - mu) t0}: waits clearing several times
// faster than service, 40% of the seed-scale world's apps), the root is
// within 2e-17 relative of t0: t0 is the answer, at one logarithm.
func (s sojourn) separatedQuantile(q *tail) (t float64, ok bool) {
	n, ok := s.newtonStart(q)
	switch {
	case !ok:
		return 0, false
	case n.done:
		return n.t0, true
	}
	return s.newton(n, n.first()), true
}

// newtonFrom is separatedQuantile's Newton method before its first step:
// its root without r (t0), r's factor b/(1+b) (share) and rate theta - mu
// (d), or t0 itself when that is the answer (done).
type newtonFrom struct {
	t0, share, d float64
	done         bool
}

// first is r(t0), the first step's exponential: the one a batch of solves
// can take side by side (Sim.solveP99s), each independent of the others.
func (n *newtonFrom) first() float64 { return n.share * math.Exp(-n.d*n.t0) }

// newtonStart is separatedQuantile up to its Newton steps; ok as
// separatedQuantile's.
func (s sojourn) newtonStart(q *tail) (n newtonFrom, ok bool) {
	d := s.theta - s.mu
	if !(d > 0.01*s.mu) { // b < 100: 1 - r keeps all but two digits
		return n, false
	}
	b := s.c * s.mu / d
	lb := 0.0 // log(1 + b)
	if b < smallLog1p {
		lb = log1p6(b)
	} else {
		lb = log1p(b)
	}
	t0 := (q.log1P + lb) / s.mu
	// r(t0) = b/(1+b) e^{-d t0} < min(1, b) e^{-d t0}, with log b under
	// (e+1) log 2 for b's binary exponent e: r(t0) < e^-37 once d t0 >=
	// separated + min(0, e+1) log 2.
	e := int((math.Float64bits(b)>>52)&0x7ff) - 1023
	if d*t0 >= separated+float64(min(0, e+1))*math.Ln2 {
		return newtonFrom{t0: t0, done: true}, true
	}
	return newtonFrom{t0: t0, share: b / (1 + b), d: d}, true
}

// newton is separatedQuantile's Newton steps from n, with r0 = n.first().
func (s sojourn) newton(n newtonFrom, r0 float64) float64 {
	t0, share, d := n.t0, n.share, n.d
	t := t0
	r := r0
	for k := range 100 {
		if k > 0 {
			r = share * math.Exp(-d*t)
		}
		lr := 0.0 // log(1 - r)
		if r < smallLog1p {
			lr = log1p6(-r)
		} else {
			lr = log1p(-r)
		}
		g := s.mu*(t0-t) + lr
		dg := d*r/(1-r) - s.mu
		h := g / dg
		// Newton's error after the step h, h^2 |g2| / (2 |g'|), against
		// 1e-15 t, with g' = dg < 0: d^2 r/(1-r)^2 h^2 <= 2e-15 t (-dg).
		if d*d*r*h*h <= -2e-15*t*dg*(1-r)*(1-r) {
			return t - h
		}
		t -= h
	}
	return t
}

// solveSurvival finds t in [lo, hi] with surv(t) = q.p, starting from a guess
// t in the bracket, for a decreasing survival function that also returns its
// density. It runs Newton's method on
// log surv(t) - log p, which is nearly linear in the exponential tail, and
// falls back to bisection whenever a step leaves the bracket.
func solveSurvival(lo, hi, t float64, q *tail, surv func(float64) (float64, float64)) float64 {
	for range 100 {
		sv, f := surv(t)
		next, done := newtonStep(&lo, &hi, t, sv, f, q)
		if done {
			return next
		}
		t = next
	}
	return t
}

// newtonStep is one step of solveSurvival from t, where the survival is sv
// and its density f: it narrows the bracket [lo, hi] and returns the next t,
// and whether that is the answer.
func newtonStep(lo, hi *float64, t, sv, f float64, q *tail) (next float64, done bool) {
	if sv > q.p {
		*lo = t
	} else {
		*hi = t
	}
	next = t + (math.Log(sv)-q.logP)*sv/f
	if f > 0 && math.Abs(next-t) <= 1e-9*t {
		return next, true
	}
	if !(f > 0) || !(next > *lo && next < *hi) {
		next = 0.5 * (*lo + *hi)
	}
	return next, *hi-*lo <= 1e-12*(*hi)
}

// P99 is the 99th percentile of response time (wait + service), seconds.
func (q Queue) P99() float64 { return q.sojourn().quantile(&p99Tail) }
