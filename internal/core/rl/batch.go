package rl

import (
	"fmt"
	"math"
)

// LatentMeans writes the actor's latent means (LatentDim values: for a
// Gaussian-only action layout, the deterministic action Mean takes) for
// every raw observation obs[r] into out[r]: obs[r] normalised by p.Norm,
// then the actor, batched as Network.ForwardBatch does. The results are
// bit-identical to Mean's Latent. t must be a tape of p.Actor
// (p.Actor.NewTape()), so that several goroutines can share p, each with its
// own tape. It panics unless len(out) == len(obs), every len(obs[r]) is the
// observation size and every len(out[r]) is LatentDim. It does not allocate
// and does not update the normaliser.
func (p *Policy) LatentMeans(t *Tape, obs, out [][]float64) {
	nin, lat := p.Actor.In(), p.Spec.Action.LatentDim()
	// Normalizer.Normalize, with each value's standard deviation computed
	// once for the batch rather than once per observation: the same
	// operations on the same operands, so the same bits.
	nm := p.Norm
	if nm.Dim() != nin {
		panic(fmt.Sprintf("rl: normaliser of %d values for an actor of %d inputs", nm.Dim(), nin))
	}
	p.Actor.checkBlock(t)
	sd := t.sd[:nin]
	for i := range sd {
		sd[i] = math.Sqrt(nm.Var(i) + normEps)
	}
	p.Actor.forwardBatch(t, obs, out, lat, &scaling{mean: nm.Mean[:nin], sd: sd, clip: nm.Clip})
}
