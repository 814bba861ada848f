package rl

import (
	"fmt"
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
