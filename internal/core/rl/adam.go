package rl

import "math"

// Adam is the Adam optimiser (Kingma and Ba 2015, "Adam: a method for
// stochastic optimization", algorithm 1) over one parameter vector.
type Adam struct {
	LR    float64 // step size alpha
	Beta1 float64 // decay of the first-moment estimate
	Beta2 float64 // decay of the second-moment estimate
	Eps   float64 // added to sqrt(v-hat)

	m, v []float64
	t    int
}

// NewAdam returns Adam for n parameters with step size lr, beta1 0.9,
// beta2 0.999 and epsilon 1e-5 (the PPO implementations' epsilon; the
// paper's is 1e-8).
func NewAdam(n int, lr float64) *Adam {
	return &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-5, m: make([]float64, n), v: make([]float64, n)}
}

// Steps returns the number of steps taken.
func (a *Adam) Steps() int { return a.t }

// Reset forgets the moment estimates and the step count.
func (a *Adam) Reset() {
	clear(a.m)
	clear(a.v)
	a.t = 0
}

// Step updates params in place against the gradient grad:
//
//	t      = t + 1
//	m      = beta1 m + (1 - beta1) g
//	v      = beta2 v + (1 - beta2) g^2
//	m-hat  = m / (1 - beta1^t)
//	v-hat  = v / (1 - beta2^t)
//	theta  = theta - alpha m-hat / (sqrt(v-hat) + eps)
func (a *Adam) Step(params, grad []float64) {
	if len(params) != len(a.m) || len(grad) != len(a.m) {
		panic("rl: Adam step with the wrong number of parameters")
	}
	a.t++
	c1 := 1 - math.Pow(a.Beta1, float64(a.t)) // 1 - beta1^t
	c2 := 1 - math.Pow(a.Beta2, float64(a.t)) // 1 - beta2^t
	for i, g := range grad {
		a.m[i] = a.Beta1*a.m[i] + (1-a.Beta1)*g
		a.v[i] = a.Beta2*a.v[i] + (1-a.Beta2)*g*g
		mhat := a.m[i] / c1
		vhat := a.v[i] / c2
		params[i] -= a.LR * mhat / (math.Sqrt(vhat) + a.Eps)
	}
}

// ClipGlobalNorm scales grad so that its Euclidean norm is at most maxNorm
// and returns the norm before clipping (Pascanu, Mikolov and Bengio 2013,
// "On the difficulty of training recurrent neural networks", algorithm 1).
// maxNorm <= 0 disables clipping.
//
//	||g|| = sqrt(sum_i g_i^2)
//	g     = g maxNorm / ||g||   if ||g|| > maxNorm
func ClipGlobalNorm(grad []float64, maxNorm float64) float64 {
	norm := math.Sqrt(dot(grad, grad))
	if maxNorm > 0 && norm > maxNorm {
		s := maxNorm / norm
		for i := range grad {
			grad[i] *= s
		}
	}
	return norm
}
