package rl

import (
	"math"
	"testing"
)

func TestGAE(t *testing.T) {
	tests := []struct {
		name          string
		rewards       []float64
		values        []float64
		dones         []bool
		last          float64
		gamma, lambda float64
		adv           []float64
	}{
		{
			name:    "lambda 0 is the one-step TD error",
			rewards: []float64{1, 2}, values: []float64{0.5, 1}, dones: []bool{false, false}, last: 3,
			gamma: 0.9, lambda: 0,
			adv: []float64{1 + 0.9*1 - 0.5, 2 + 0.9*3 - 1},
		},
		{
			name:    "lambda 1 is the discounted return minus the value",
			rewards: []float64{1, 2, 3}, values: []float64{0.1, 0.2, 0.3}, dones: []bool{false, false, false}, last: 4,
			gamma: 0.5, lambda: 1,
			adv: []float64{
				1 + 0.5*2 + 0.25*3 + 0.125*4 - 0.1,
				2 + 0.5*3 + 0.25*4 - 0.2,
				3 + 0.5*4 - 0.3,
			},
		},
		{
			name:    "done cuts the bootstrap and the trace",
			rewards: []float64{1, 2}, values: []float64{0, 0}, dones: []bool{true, false}, last: 10,
			gamma: 1, lambda: 1,
			adv: []float64{1, 2 + 10},
		},
		{
			name:    "done on the last step ignores lastValue",
			rewards: []float64{1}, values: []float64{0.5}, dones: []bool{true}, last: 100,
			gamma: 0.99, lambda: 0.95,
			adv: []float64{0.5},
		},
	}
	for _, tt := range tests {
		n := len(tt.rewards)
		adv, ret := make([]float64, n), make([]float64, n)
		GAE(tt.rewards, tt.values, tt.dones, tt.last, tt.gamma, tt.lambda, adv, ret)
		for i := range adv {
			if math.Abs(adv[i]-tt.adv[i]) > 1e-12 {
				t.Errorf("%s: adv[%d] = %v, want %v", tt.name, i, adv[i], tt.adv[i])
			}
			if math.Abs(ret[i]-(tt.adv[i]+tt.values[i])) > 1e-12 {
				t.Errorf("%s: ret[%d] = %v, want adv + value %v", tt.name, i, ret[i], tt.adv[i]+tt.values[i])
			}
		}
	}
}

// GAE's recursion equals its definition, the discounted sum of TD errors up
// to the end of the episode (Schulman et al. 2016, eq. 16):
//
//	A_t = sum_{l >= 0} (gamma lambda)^l delta_{t+l}, stopping after a done
func TestGAEEqualsTheSumOfDiscountedTDErrors(t *testing.T) {
	r := seeded(t, 31)
	for trial := range 50 {
		n := 1 + r.IntN(40)
		rewards, values := make([]float64, n), make([]float64, n)
		dones := make([]bool, n)
		randomize(rewards, 1, r)
		randomize(values, 1, r)
		for i := range dones {
			dones[i] = r.Float64() < 0.15
		}
		last := r.NormFloat64()
		gamma, lambda := r.Float64(), r.Float64()
		adv, ret := make([]float64, n), make([]float64, n)
		GAE(rewards, values, dones, last, gamma, lambda, adv, ret)
		for t0 := range n {
			var want, w float64 = 0, 1
			for l := t0; l < n; l++ {
				next := last
				if l+1 < n {
					next = values[l+1]
				}
				if dones[l] {
					next = 0
				}
				want += w * (rewards[l] + gamma*next - values[l])
				if dones[l] {
					break
				}
				w *= gamma * lambda
			}
			if math.Abs(adv[t0]-want) > 1e-10 {
				t.Fatalf("trial %d: adv[%d] = %v, definition gives %v", trial, t0, adv[t0], want)
			}
		}
	}
}
