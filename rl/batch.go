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
	if len(obs) != len(out) {
		panic(fmt.Sprintf("rl: batch of %d observations and %d outputs", len(obs), len(out)))
	}
	p.Actor.checkBlock(t)
	nin, lat := p.Actor.In(), p.Spec.Action.LatentDim()
	// Normalizer.Normalize, with each value's standard deviation computed
	// once for the batch rather than once per observation: the same
	// operations on the same operands, so the same bits.
	nm := p.Norm
	if nm.Dim() != nin {
		panic(fmt.Sprintf("rl: normaliser of %d values for an actor of %d inputs", nm.Dim(), nin))
	}
	sd, mean := t.sd[:nin], nm.Mean[:nin]
	for i := range sd {
		sd[i] = math.Sqrt(nm.Var(i) + normEps)
	}
	for r0 := 0; r0 < len(obs); r0 += batchRows {
		rows := min(batchRows, len(obs)-r0)
		x := t.blk[0]
		if rows < batchRows {
			clear(x) // a short last block: zero lanes, results unused
		}
		for r := range rows {
			o := obs[r0+r]
			if len(o) != nin {
				panic(fmt.Sprintf("rl: observation %d has %d values, want %d", r0+r, len(o), nin))
			}
			for i, v := range o {
				u := (v - mean[i]) / sd[i]
				if nm.Clip > 0 {
					u = min(max(u, -nm.Clip), nm.Clip)
				}
				x[i*batchRows+r] = u
			}
		}
		y := p.Actor.forwardBlock(t)
		for r := range rows {
			o := out[r0+r]
			if len(o) != lat {
				panic(fmt.Sprintf("rl: latent mean %d has %d values, want %d", r0+r, len(o), lat))
			}
			for i := range o {
				o[i] = y[i*batchRows+r]
			}
		}
	}
}
