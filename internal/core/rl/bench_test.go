package rl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkForwardBackward(b *testing.B) {
	for _, sizes := range [][]int{
		{120, 64, 64, 10}, // Commander-sized actor
		{120, 64, 64, 1},  // its critic
		{32, 32, 32, 4},
		{120, 256, 256, 10},
	} {
		b.Run(fmt.Sprint(sizes), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			acts := []Activation{Tanh, Tanh, Identity}
			n := NewNetwork(sizes, acts)
			n.Init(r, math.Sqrt2, 1)
			tape := n.NewTape()
			in := make([]float64, sizes[0])
			randomize(in, 1, r)
			dOut := make([]float64, sizes[len(sizes)-1])
			randomize(dOut, 1, r)
			grad := make([]float64, n.NumParams())
			b.ReportAllocs()
			for b.Loop() {
				n.Forward(tape, in)
				n.Backward(tape, dOut, grad, nil)
			}
		})
	}
}

// commanderSpec is about the Commander's size for 3 domains: 120
// observations; shares over the domains and the reserve (a simplex of 4, 3
// logits), 3 urgencies and 3 headrooms: 9 latent outputs, 10 with the
// shared trunk's value.
func commanderSpec(shared bool) Spec {
	names := make([]string, 120)
	for i := range names {
		names[i] = fmt.Sprintf("f%03d", i)
	}
	s := DefaultSpec(ScalarLayout("commander", 1, names), ActionLayout{Segments: []Segment{
		{"shares", Simplex, 4}, {"urgency", Gaussian, 3}, {"headroom", Gaussian, 3},
	}})
	s.SharedTrunk = shared
	return s
}

func BenchmarkAct(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 1))
	p, _ := NewPolicy(commanderSpec(false), r)
	obs := make([]float64, p.Spec.Obs.Dim())
	randomize(obs, 1, r)
	a := p.NewAction()
	b.ReportAllocs()
	for b.Loop() {
		p.Act(obs, r, a)
	}
}

// BenchmarkPPOUpdate times one update over a rollout of 2048 steps: 10
// epochs of minibatches of 64, early stop off so that every iteration does
// the same work.
func BenchmarkPPOUpdate(b *testing.B) {
	for _, shared := range []bool{false, true} {
		name := "2048steps/separate-critic"
		if shared {
			name = "2048steps/shared-trunk"
		}
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 1))
			p, _ := NewPolicy(commanderSpec(shared), r)
			roll := p.NewRollout(2048)
			fillRollout(p, roll, r)
			c := DefaultConfig("commander")
			c.KL.EarlyStop = false
			o, _ := NewPPO(c)
			o.Update(p, roll, r) // size the scratch
			b.ReportAllocs()
			for b.Loop() {
				o.Update(p, roll, r)
			}
		})
	}
}

// BenchmarkForwardBatch compares one batched pass over n inputs with n
// Forward calls, on the learned Soldier's actor (26 -> 32 tanh -> 32 tanh
// -> 3).
func BenchmarkForwardBatch(b *testing.B) {
	sizes, acts := []int{26, 32, 32, 3}, []Activation{Tanh, Tanh, Identity}
	for _, batch := range []int{50, 500} {
		r := seeded(b, 5)
		n := NewNetwork(sizes, acts)
		n.Init(r, math.Sqrt2, 1)
		in, out := make([][]float64, batch), make([][]float64, batch)
		for k := range in {
			in[k], out[k] = make([]float64, n.In()), make([]float64, n.Out())
			randomize(in[k], 1, r)
		}
		tape := n.NewTape()
		b.Run(fmt.Sprintf("batch/n=%d", batch), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n.ForwardBatch(tape, in, out)
			}
		})
		b.Run(fmt.Sprintf("single/n=%d", batch), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for k := range in {
					copy(out[k], n.Forward(tape, in[k]))
				}
			}
		})
	}
}

// BenchmarkTanh compares rl's tanh (the Tanh activation) with math.Tanh on
// typical hidden-layer pre-activations.
func BenchmarkTanh(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 1))
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = 3 * r.NormFloat64() // hidden pre-activations: mostly |x| < 6
	}
	ys := make([]float64, len(xs))
	b.Run(fmt.Sprintf("rl/n=%d", len(xs)), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(ys, xs)
			tanhSlice(ys)
		}
	})
	b.Run(fmt.Sprintf("math/n=%d", len(xs)), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			copy(ys, xs)
			for i, y := range ys {
				ys[i] = math.Tanh(y)
			}
		}
	})
}
