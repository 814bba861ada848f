package rl

import (
	"fmt"
	"math"
	"testing"
)

func TestLatentMeansMatchesMean(t *testing.T) {
	for i, tc := range []struct {
		name   string
		shared bool
		batch  int
	}{
		{"separate critic, batch of 50", false, 50},
		{"shared trunk drops the value output", true, 50},
		{"batch not divisible by the block", false, 7},
		{"batch of one", true, 1},
	} {
		for _, avx := range avxPaths() {
			t.Run(fmt.Sprintf("%s/avx=%v", tc.name, avx), func(t *testing.T) {
				defer setAVX(avx)()
				latentMeansCase(t, uint64(300+i), tc.shared, tc.batch)
			})
		}
	}
}

// latentMeansCase checks LatentMeans against Mean, bit for bit, on a
// random policy with a normaliser that has seen the batch.
func latentMeansCase(t *testing.T, seed uint64, shared bool, batch int) {
	r := seeded(t, seed)
	p, err := NewPolicy(commanderSpec(shared), r)
	if err != nil {
		t.Fatal(err)
	}
	randomize(p.Actor.Params(), 0.2, r) // nonzero output layer
	obs, out := make([][]float64, batch), make([][]float64, batch)
	for k := range obs {
		obs[k], out[k] = make([]float64, p.Spec.Obs.Dim()), make([]float64, p.Spec.Action.LatentDim())
		randomize(obs[k], 3, r)
		p.Norm.Observe(obs[k]) // a normaliser with real statistics
	}
	obs[len(obs)-1][0] = 1e3 // far out: clipped by the normaliser
	count := p.Norm.Count
	p.LatentMeans(p.Actor.NewTape(), obs, out)
	if p.Norm.Count != count {
		t.Fatal("LatentMeans updated the normaliser")
	}
	a := p.NewAction()
	for k := range obs {
		p.Mean(obs[k], a)
		if !equalBits(out[k], a.Latent) {
			t.Fatalf("observation %d: LatentMeans %v, Mean %v", k, out[k], a.Latent)
		}
	}
}

func TestLatentMeansPanicsOnAWrongOutputSize(t *testing.T) {
	p, _ := NewPolicy(commanderSpec(false), seeded(t, 1))
	obs := [][]float64{make([]float64, p.Spec.Obs.Dim())}
	out := [][]float64{make([]float64, p.Actor.Out()+1)}
	defer func() {
		if recover() == nil {
			t.Fatal("LatentMeans did not panic")
		}
	}()
	p.LatentMeans(p.Actor.NewTape(), obs, out)
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
