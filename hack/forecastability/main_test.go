package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A log demand whose one-minute change is half the last one's plus noise:
// the predictor fitted on it finds the half on its first lag and nothing on
// the others, and explains about a quarter of the next change's variance
// (0.5^2 / (1 + 0.5^2 + ...) of an AR(1) of coefficient 0.5 is 0.25).
func TestFitARFindsTheDynamics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	logY := make([]float64, 20000)
	logY[1] = 0.01
	for i := 2; i < len(logY); i++ {
		logY[i] = logY[i-1] + 0.5*(logY[i-1]-logY[i-2]) + 0.01*r.NormFloat64()
	}
	w := fitAR(logY, first, len(logY)-1, 1)
	if math.Abs(w[1]-0.5) > 0.03 {
		t.Errorf("first lag's weight %.3f, want 0.5", w[1])
	}
	for i := 2; i <= lags; i++ {
		if math.Abs(w[i]) > 0.03 {
			t.Errorf("lag %d's weight %.3f, want 0", i, w[i])
		}
	}
	var pred, base float64
	for t0 := first; t0 < len(logY)-1; t0++ {
		z := logY[t0+1] - logY[t0]
		e := z - dot(w, features(logY, t0))
		pred += e * e
		base += z * z
	}
	if got := 1 - pred/base; math.Abs(got-0.25) > 0.03 {
		t.Errorf("explained %.3f of the variance, want 0.25", got)
	}
}
