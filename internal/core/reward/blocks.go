package reward

import "math"

// ratioClip is the SLO ratio at which Adherence bottoms out at -1.
const ratioClip = 2

// alignmentEpsilon keeps the cosine in Alignment defined for a zero vector. It
// sits only in the cosine's denominator; the magnitude ratio has none, so a
// matched allocation scores 1 up to epsilon / |a||i|.
const alignmentEpsilon = 1e-9

// Adherence scores an SLO ratio r (e.g. p99 / SLO) in [-1, 1]: concave and
// positive below the objective, so that headroom is worth less and less, and
// linear and negative above it, clipped at r = 2 (docs/architecture.md, Reward):
//
//	A(r) = sqrt(1 - r)          0 <= r <= 1
//	A(r) = -(min(r, 2) - 1)     r > 1
//
// A(0) = 1, A(1) = 0, A(2) = -1. A negative r reads as 0; NaN scores -1.
func Adherence(r float64) float64 {
	if math.IsNaN(r) {
		return -1
	}
	if r <= 1 {
		return math.Sqrt(1 - math.Max(r, 0))
	}
	return -(math.Min(r, ratioClip) - 1)
}

// Alignment scores how well an allocation (actual) follows the one a
// directive asked for (intended), per app, in cores or replicas: the cosine
// of the two vectors times a magnitude factor that falls linearly, and
// symmetrically, with the L1 ratio rho = |actual|_1 / |intended|_1 moving
// away from 1 (docs/architecture.md, Reward):
//
//	cos   = a.i / (|a|_2 |i|_2 + eps)
//	rho   = |a|_1 / |i|_1
//	Align = cos x max(0, 1 - |1 - rho|)
//
// A matched allocation scores 1, half of it 0.5, 10% over it 0.9, double it
// 0. The result is in [-1, 1] (in [0, 1] for non-negative inputs). When the
// lengths differ, the missing entries of the shorter slice count as 0. When
// nothing was intended, doing nothing scores 1 and doing anything 0. NaN
// scores -1.
func Alignment(actual, intended []float64) float64 {
	var dot, aa, ii, a1, i1 float64
	n := min(len(actual), len(intended))
	for k := range n {
		a, i := actual[k], intended[k]
		dot += a * i
		aa += a * a
		ii += i * i
		a1 += math.Abs(a)
		i1 += math.Abs(i)
	}
	for _, a := range actual[n:] {
		aa += a * a
		a1 += math.Abs(a)
	}
	for _, i := range intended[n:] {
		ii += i * i
		i1 += math.Abs(i)
	}
	if i1 == 0 {
		switch {
		case a1 == 0:
			return 1
		case math.IsNaN(a1):
			return -1
		}
		return 0
	}
	cos := dot / (math.Sqrt(aa)*math.Sqrt(ii) + alignmentEpsilon)
	rho := a1 / i1
	magnitude := math.Max(0, 1-math.Abs(1-rho))
	return bounded(cos*magnitude, -1, 1)
}

// UtilisationDeviation penalises budget utilisation u (used / budget) away
// from a target t, quadratically and symmetrically, scaled so that every
// u in [0, 1] stays within [-1, 0] (docs/architecture.md, Reward):
//
//	s = max(t, 1 - t)
//	U = -min(1, ((u - t) / s)^2)
//
// With t = 0.85: U(0.85) = 0, U(1) = -0.031, U(0.425) = -0.25, U(0) = -1.
// NaN scores -1.
func UtilisationDeviation(util, target float64) float64 {
	s := math.Max(target, 1-target)
	d := (util - target) / s
	return bounded(-d*d, -1, 0)
}
