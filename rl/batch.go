package rl

import "fmt"

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
	if len(obs) != len(out) {
		panic(fmt.Sprintf("rl: batch of %d observations and %d outputs", len(obs), len(out)))
	}
	p.Actor.checkBlock(t)
	nin, nout, lat := p.Actor.In(), p.Actor.Out(), p.Spec.Action.LatentDim()
	for r0 := 0; r0 < len(obs); r0 += batchRows {
		rows := min(batchRows, len(obs)-r0)
		x := t.blk[0]
		for r := range rows {
			p.Norm.Normalize(obs[r0+r], x[r*nin:(r+1)*nin])
		}
		clear(x[rows*nin:]) // a short last block: zero rows, results unused
		y := p.Actor.forwardBlock(t)
		for r := range rows {
			if len(out[r0+r]) != lat {
				panic(fmt.Sprintf("rl: latent mean %d has %d values, want %d", r0+r, len(out[r0+r]), lat))
			}
			copy(out[r0+r], y[r*nout:r*nout+lat])
		}
	}
}
