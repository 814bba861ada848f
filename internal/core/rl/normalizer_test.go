package rl

import (
	"math"
	"testing"
)

func TestNormalizerMatchesTwoPassStatistics(t *testing.T) {
	r := seeded(t, 21)
	const n, dim = 5000, 3
	xs := make([][]float64, n)
	norm := NewNormalizer(dim, 0)
	for i := range xs {
		// Large offset: the naive sum-of-squares formula loses digits here.
		xs[i] = []float64{1e6 + r.NormFloat64(), 3 * r.NormFloat64(), -2 + 0.01*r.NormFloat64()}
		norm.Observe(xs[i])
	}
	for j := range dim {
		var mean float64
		for _, x := range xs {
			mean += x[j]
		}
		mean /= n
		var v float64
		for _, x := range xs {
			v += (x[j] - mean) * (x[j] - mean)
		}
		v /= n
		if math.Abs(norm.Mean[j]-mean) > 1e-9*max(1, math.Abs(mean)) {
			t.Errorf("value %d: running mean %v, two-pass %v", j, norm.Mean[j], mean)
		}
		if math.Abs(norm.Var(j)-v) > 1e-9*v {
			t.Errorf("value %d: running variance %v, two-pass %v", j, norm.Var(j), v)
		}
	}
}

func TestNormalizer(t *testing.T) {
	t.Run("standardises", func(t *testing.T) {
		n := NewNormalizer(1, 0)
		for _, v := range []float64{1, 3} { // mean 2, variance 1
			n.Observe([]float64{v})
		}
		out := make([]float64, 1)
		n.Normalize([]float64{4}, out)
		if math.Abs(out[0]-2) > 1e-7 {
			t.Errorf("normalised 4 = %v, want 2", out[0])
		}
	})
	t.Run("clips", func(t *testing.T) {
		n := NewNormalizer(1, 5)
		n.Observe([]float64{0})
		n.Observe([]float64{2})
		out := make([]float64, 1)
		n.Normalize([]float64{100}, out)
		if out[0] != 5 {
			t.Errorf("normalised 100 = %v, want the clip 5", out[0])
		}
		n.Normalize([]float64{-100}, out)
		if out[0] != -5 {
			t.Errorf("normalised -100 = %v, want -5", out[0])
		}
	})
	t.Run("frozen does not update", func(t *testing.T) {
		n := NewNormalizer(2, 0)
		n.Observe([]float64{1, 2})
		n.Frozen = true
		n.Observe([]float64{100, 200})
		if n.Count != 1 || n.Mean[0] != 1 || n.Mean[1] != 2 {
			t.Errorf("frozen normaliser changed: count %v, mean %v", n.Count, n.Mean)
		}
	})
	t.Run("frozen: a feature that never varied is held at its mean", func(t *testing.T) {
		n := NewNormalizer(2, 10)
		for i := range 10 {
			n.Observe([]float64{0, float64(i)})
		}
		n.Frozen = true
		out := make([]float64, 2)
		n.Normalize([]float64{0.6, 4.5}, out)
		if out[0] != 0 || math.Abs(out[1]) > 1e-7 {
			t.Errorf("normalised %v, want 0 for the constant feature and the mean of the other", out)
		}
		n.Frozen = false
		if n.Normalize([]float64{0.6, 4.5}, out); out[0] != 10 {
			t.Errorf("unfrozen: %v, want the clip 10 for a new value of a constant feature", out[0])
		}
	})
	t.Run("constant feature normalises to zero", func(t *testing.T) {
		n := NewNormalizer(1, 10)
		for range 10 {
			n.Observe([]float64{7})
		}
		out := make([]float64, 1)
		n.Normalize([]float64{7}, out)
		if out[0] != 0 {
			t.Errorf("normalised constant = %v, want 0", out[0])
		}
	})
}
