package rl

import (
	"fmt"
	"math"
)

// Activation is an element-wise nonlinearity applied after a layer's affine
// map.
type Activation uint8

// Activations. The zero value is Identity.
const (
	Identity Activation = iota // f(x) = x
	Tanh                       // f(x) = tanh(x)
	ReLU                       // f(x) = max(0, x)
)

// String returns the activation's name as it appears in checkpoints.
func (a Activation) String() string {
	switch a {
	case Identity:
		return "identity"
	case Tanh:
		return "tanh"
	case ReLU:
		return "relu"
	}
	return fmt.Sprintf("activation(%d)", uint8(a))
}

// ParseActivation is the inverse of String.
func ParseActivation(s string) (Activation, error) {
	switch s {
	case "identity":
		return Identity, nil
	case "tanh":
		return Tanh, nil
	case "relu":
		return ReLU, nil
	}
	return 0, fmt.Errorf("unknown activation %q (want identity, tanh or relu)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (a Activation) MarshalText() ([]byte, error) {
	if a > ReLU {
		return nil, fmt.Errorf("unknown activation %d", uint8(a))
	}
	return []byte(a.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *Activation) UnmarshalText(b []byte) error {
	v, err := ParseActivation(string(b))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// apply overwrites y with f(y).
func (a Activation) apply(y []float64) {
	switch a {
	case Tanh:
		tanhSlice(y) // rl's tanh, within 1e-15 of math.Tanh and faster
	case ReLU:
		for i, v := range y {
			if v < 0 {
				y[i] = 0
			}
		}
	}
}

// chain multiplies d element-wise by f'(x), written in terms of the
// activation's output y = f(x):
//
//	tanh:     f'(x) = 1 - y^2
//	relu:     f'(x) = 1 if y > 0, else 0 (the subgradient 0 at x = 0)
//	identity: f'(x) = 1
func (a Activation) chain(y, d []float64) {
	switch a {
	case Tanh:
		for i, v := range y {
			d[i] *= 1 - v*v
		}
	case ReLU:
		for i, v := range y {
			if v <= 0 {
				d[i] = 0
			}
		}
	}
}

// Sigmoid is the logistic function 1 / (1 + e^-x), (0, 1): how a learned
// policy squashes an unbounded output onto a fraction.
func Sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Logit is Sigmoid's inverse, log(p / (1 - p)), for p in (0, 1).
func Logit(p float64) float64 { return math.Log(p / (1 - p)) }
