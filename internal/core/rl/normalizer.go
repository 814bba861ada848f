package rl

import (
	"fmt"
	"math"
)

// DefaultNormClip is the default bound on normalised observations.
const DefaultNormClip = 10

// normEps is added to the variance before the square root, so that a
// constant feature normalises to 0 rather than dividing by 0.
const normEps = 1e-8

// Normalizer standardises observations with running per-value means and
// variances, estimated by Welford's online algorithm. The zero value is not
// usable; use NewNormalizer.
type Normalizer struct {
	Count  float64   // observations seen
	Mean   []float64 // running mean per value
	M2     []float64 // running sum of squared deviations per value
	Clip   float64   // normalised values are clipped to [-Clip, Clip]; <= 0 means no clipping
	Frozen bool      // Observe does nothing (evaluation, deployment)
}

// NewNormalizer returns a normaliser for dim values with no observations
// (mean 0 and variance 1 until the first Observe, so x normalises to about
// x) and clip bound clip.
func NewNormalizer(dim int, clip float64) *Normalizer {
	return &Normalizer{Mean: make([]float64, dim), M2: make([]float64, dim), Clip: clip}
}

// Dim returns the number of values per observation.
func (n *Normalizer) Dim() int { return len(n.Mean) }

// Observe adds x to the running statistics unless n is frozen (Welford
// 1962, "Note on a method for calculating corrected sums of squares and
// products", Technometrics 4(3); Knuth, TAOCP vol. 2, 3rd ed., 4.2.2 eq. 15):
//
//	n     = n + 1
//	delta = x - mean
//	mean  = mean + delta / n
//	M2    = M2 + delta (x - mean)
func (n *Normalizer) Observe(x []float64) {
	if n.Frozen {
		return
	}
	if len(x) != len(n.Mean) {
		panic(fmt.Sprintf("rl: normaliser observes %d values, want %d", len(x), len(n.Mean)))
	}
	n.Count++
	for i, v := range x {
		delta := v - n.Mean[i]
		n.Mean[i] += delta / n.Count
		n.M2[i] += delta * (v - n.Mean[i])
	}
}

// Var returns the population variance M2 / n of value i, 1 before any
// observation.
func (n *Normalizer) Var(i int) float64 {
	if n.Count == 0 {
		return 1
	}
	return n.M2[i] / n.Count
}

// Normalize writes (x - mean) / sqrt(var + 1e-8), clipped to [-Clip, Clip],
// to out (which may be x). A frozen normaliser maps a value that never
// varied while it observed (M2 exactly 0) to 0, its mean: the policy never
// learned a response to it (a feature 0 in every simulation, such as memory
// utilisation, that a real cluster fills), and any other value would reach
// it as a 10-sigma input.
func (n *Normalizer) Normalize(x, out []float64) {
	if len(x) != len(n.Mean) || len(out) != len(x) {
		panic(fmt.Sprintf("rl: normaliser maps %d values into %d, want %d", len(x), len(out), len(n.Mean)))
	}
	for i, v := range x {
		if n.Frozen && n.Count > 0 && n.M2[i] == 0 {
			out[i] = 0
			continue
		}
		u := (v - n.Mean[i]) / math.Sqrt(n.Var(i)+normEps)
		if n.Clip > 0 {
			u = min(max(u, -n.Clip), n.Clip)
		}
		out[i] = u
	}
}

// Clone returns a deep copy.
func (n *Normalizer) Clone() *Normalizer {
	c := *n
	c.Mean = append([]float64(nil), n.Mean...)
	c.M2 = append([]float64(nil), n.M2...)
	return &c
}
