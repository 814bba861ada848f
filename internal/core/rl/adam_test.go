package rl

import (
	"math"
	"testing"
)

// With bias correction the first step moves every parameter by about the
// step size, against its gradient's sign, whatever the gradient's scale.
func TestAdamFirstStepIsTheStepSize(t *testing.T) {
	a := NewAdam(3, 0.01)
	a.Eps = 0
	p := []float64{1, 1, 1}
	a.Step(p, []float64{1e-6, -3, 1e4})
	want := []float64{0.99, 1.01, 0.99}
	for i := range p {
		if math.Abs(p[i]-want[i]) > 1e-12 {
			t.Errorf("param %d after one step: %v, want %v", i, p[i], want[i])
		}
	}
}

func TestAdamMinimisesAQuadratic(t *testing.T) {
	// f(x) = sum_i c_i (x_i - m_i)^2
	c := []float64{1, 10, 0.1}
	m := []float64{3, -2, 0.5}
	x := make([]float64, 3)
	g := make([]float64, 3)
	a := NewAdam(3, 0.05)
	for range 3000 {
		for i := range x {
			g[i] = 2 * c[i] * (x[i] - m[i])
		}
		a.Step(x, g)
	}
	for i := range x {
		if math.Abs(x[i]-m[i]) > 1e-3 {
			t.Errorf("x[%d] = %v, want %v", i, x[i], m[i])
		}
	}
}

func TestClipGlobalNorm(t *testing.T) {
	tests := []struct {
		name    string
		g       []float64
		max     float64
		want    []float64
		preNorm float64
	}{
		{"over the bound scales to it", []float64{3, 4}, 1, []float64{0.6, 0.8}, 5},
		{"under the bound is untouched", []float64{0.3, 0.4}, 1, []float64{0.3, 0.4}, 0.5},
		{"zero bound disables clipping", []float64{3, 4}, 0, []float64{3, 4}, 5},
	}
	for _, tt := range tests {
		norm := ClipGlobalNorm(tt.g, tt.max)
		if math.Abs(norm-tt.preNorm) > 1e-12 {
			t.Errorf("%s: returned norm %v, want %v", tt.name, norm, tt.preNorm)
		}
		for i := range tt.g {
			if math.Abs(tt.g[i]-tt.want[i]) > 1e-12 {
				t.Errorf("%s: g[%d] = %v, want %v", tt.name, i, tt.g[i], tt.want[i])
			}
		}
	}
}
