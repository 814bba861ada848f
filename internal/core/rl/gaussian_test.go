package rl

import (
	"math"
	"testing"
)

func TestGaussianLogProbGradientMatchesFiniteDifferences(t *testing.T) {
	r := seeded(t, 11)
	x := make([]float64, 4)
	mean := make([]float64, 4)
	logStd := make([]float64, 4)
	randomize(x, 1, r)
	randomize(mean, 1, r)
	randomize(logStd, 0.5, r)
	dMean := make([]float64, 4)
	dLogStd := make([]float64, 4)
	const scale = -1.7 // the gradient is scaled by scale and added
	lp := GaussianLogProbGrad(x, mean, logStd, scale, dMean, dLogStd)
	if want := GaussianLogProb(x, mean, logStd); lp != want {
		t.Errorf("GaussianLogProbGrad returns %v, GaussianLogProb %v", lp, want)
	}
	f := func() float64 { return scale * GaussianLogProb(x, mean, logStd) }
	checkGradient(t, "mean", mean, dMean, f, 1e-8)
	checkGradient(t, "log-std", logStd, dLogStd, f, 1e-8)
}

func TestGaussianClosedForms(t *testing.T) {
	tests := []struct {
		name            string
		x, mean, logStd []float64
		want            float64
	}{
		{"standard normal at its mean", []float64{0}, []float64{0}, []float64{0}, -0.5 * math.Log(2*math.Pi)},
		{"one sigma away", []float64{3}, []float64{1}, []float64{math.Log(2)}, -0.5 - math.Log(2) - 0.5*math.Log(2*math.Pi)},
		{"two dimensions add", []float64{0, 1}, []float64{0, 0}, []float64{0, 0}, -0.5 - math.Log(2*math.Pi)},
	}
	for _, tt := range tests {
		if got := GaussianLogProb(tt.x, tt.mean, tt.logStd); math.Abs(got-tt.want) > 1e-14 {
			t.Errorf("%s: log p = %v, want %v", tt.name, got, tt.want)
		}
	}
	// H(N(0, 1)) = log(2 pi e) / 2.
	if got, want := GaussianEntropy([]float64{0}), 0.5*math.Log(2*math.Pi*math.E); math.Abs(got-want) > 1e-14 {
		t.Errorf("entropy of N(0, 1) = %v, want %v", got, want)
	}
}

func TestSquashIsOnTheSimplexAndInvertible(t *testing.T) {
	tests := []struct {
		name string
		z    []float64
	}{
		{"zero logits give equal shares", []float64{0, 0, 0}},
		{"mixed logits", []float64{1.5, -2, 0.3}},
		{"large logits do not overflow", []float64{800, -800, 799}},
		{"two shares", []float64{-0.7}},
	}
	for _, tt := range tests {
		s := make([]float64, len(tt.z)+1)
		sumLog := Squash(tt.z, s)
		var sum, wantLog float64
		for _, v := range s {
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Errorf("%s: share %v outside [0, 1]", tt.name, v)
			}
			sum += v
			wantLog += math.Log(v)
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("%s: shares sum to %v", tt.name, sum)
		}
		if jac := jacobian0(tt.z); math.Abs(jac-sumLog) > 1e-9*max(1, math.Abs(sumLog)) {
			t.Errorf("%s: jacobian0 %v, Squash %v", tt.name, jac, sumLog)
		}
		if math.Abs(tt.z[0]) < 100 {
			if math.Abs(sumLog-wantLog) > 1e-12 {
				t.Errorf("%s: sum log s = %v, want %v", tt.name, sumLog, wantLog)
			}
			z := make([]float64, len(tt.z))
			Unsquash(s, z)
			for k := range z {
				if math.Abs(z[k]-tt.z[k]) > 1e-12 {
					t.Errorf("%s: Unsquash(Squash(z))[%d] = %v, want %v", tt.name, k, z[k], tt.z[k])
				}
			}
		}
	}
	s := make([]float64, 4)
	Squash([]float64{0, 0, 0}, s)
	for _, v := range s {
		if math.Abs(v-0.25) > 1e-15 {
			t.Errorf("zero logits: share %v, want 0.25", v)
		}
	}
}

func TestLogisticNormalLogProbGradientMatchesFiniteDifferences(t *testing.T) {
	r := seeded(t, 12)
	const k = 4 // shares; 3 logits
	mean := make([]float64, k-1)
	logStd := make([]float64, k-1)
	randomize(mean, 1, r)
	randomize(logStd, 0.3, r)
	z := make([]float64, k-1)
	randomize(z, 1, r)
	s := make([]float64, k)
	Squash(z, s)
	dMean := make([]float64, k-1)
	dLogStd := make([]float64, k-1)
	scratch := make([]float64, k-1)
	const scale = 0.8
	LogisticNormalLogProbGrad(s, mean, logStd, scratch, scale, dMean, dLogStd)
	f := func() float64 { return scale * LogisticNormalLogProb(s, mean, logStd, scratch) }
	checkGradient(t, "mean", mean, dMean, f, 1e-8)
	checkGradient(t, "log-std", logStd, dLogStd, f, 1e-8)
}

// The Jacobian term makes the logistic normal a density on the simplex: it
// integrates to 1 over the first K-1 shares.
func TestLogisticNormalDensityIntegratesToOne(t *testing.T) {
	z := make([]float64, 2)
	t.Run("two shares", func(t *testing.T) {
		mean, logStd := []float64{0.4}, []float64{math.Log(0.8)}
		const n = 200000
		var sum float64
		for i := range n {
			s1 := (float64(i) + 0.5) / n // midpoint rule on (0, 1)
			sum += math.Exp(LogisticNormalLogProb([]float64{s1, 1 - s1}, mean, logStd, z)) / n
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Errorf("integral over the 2-simplex = %v, want 1", sum)
		}
	})
	t.Run("three shares", func(t *testing.T) {
		mean, logStd := []float64{0.3, -0.5}, []float64{math.Log(0.7), math.Log(0.9)}
		const n = 1500
		var sum float64
		h := 1.0 / n
		for i := range n {
			for j := range n - i {
				s1, s2 := (float64(i)+0.5)*h, (float64(j)+0.5)*h
				if s1+s2 >= 1 {
					continue
				}
				sum += math.Exp(LogisticNormalLogProb([]float64{s1, s2, 1 - s1 - s2}, mean, logStd, z)) * h * h
			}
		}
		if math.Abs(sum-1) > 5e-3 {
			t.Errorf("integral over the 3-simplex = %v, want 1", sum)
		}
	})
}
