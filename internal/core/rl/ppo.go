package rl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Config is PPO's configuration for one level of the hierarchy. The trainer
// keeps one Config per level (Commander, Soldier), so each level has its
// own KL coefficient and target.
type Config struct {
	// Level names the hierarchy level trained ("commander", "soldier");
	// informational.
	Level string
	// Gamma is the discount per step, in [0, 1]. Default 0.99.
	Gamma float64
	// Lambda is GAE's lambda, in [0, 1]. Default 0.95.
	Lambda float64
	// Epochs is the number of passes over a rollout, >= 1. Default 10.
	Epochs int
	// MinibatchSize is the number of steps per gradient step, >= 1; the
	// last minibatch of an epoch may be smaller. Default 64.
	MinibatchSize int
	// ClipRange is the surrogate's epsilon, > 0. Default 0.2.
	ClipRange float64
	// ValueCoef weighs the value loss, >= 0. Default 0.5.
	ValueCoef float64
	// EntropyCoef weighs the entropy bonus, >= 0. Default 0.
	EntropyCoef float64
	// LR is Adam's step size, > 0; read at every Update, so a schedule may
	// change it between updates. Default 3e-4.
	LR float64
	// MaxGradNorm is the global gradient-norm bound; <= 0 disables
	// clipping. Default 0.5.
	MaxGradNorm float64
	// NormalizeAdvantages standardises the rollout's advantages to mean 0,
	// standard deviation 1 before the epochs. Default true.
	NormalizeAdvantages bool
	// KL configures the early stop and the penalty.
	KL KLConfig
}

// KLConfig keeps successive policies close. Both mechanisms use the
// approximate KL divergence KL(old || new) estimated from the rollout's
// samples as the mean of (r - 1) - log r, r the probability ratio new/old
// (Schulman 2020, "Approximating KL divergence", estimator k3; unbiased and
// non-negative).
type KLConfig struct {
	// Target is the approximate KL per update the mechanisms aim at, >= 0.
	// Default 0.02.
	Target float64
	// EarlyStop ends the update at the first minibatch whose approximate
	// KL, measured before its step, exceeds Target. Default true.
	EarlyStop bool
	// Coef is the penalty coefficient beta of the KL term in the loss
	// (Schulman et al. 2017, eq. 8), >= 0; 0 disables the penalty.
	// Default 0.
	Coef float64
	// Adaptive adapts beta after each update (Schulman et al. 2017,
	// section 4): halved when the last epoch's KL is below Target / 1.5,
	// doubled when above 1.5 Target.
	Adaptive bool
}

// DefaultConfig returns the defaults documented on Config, for level.
func DefaultConfig(level string) Config {
	return Config{
		Level: level, Gamma: 0.99, Lambda: 0.95, Epochs: 10, MinibatchSize: 64,
		ClipRange: 0.2, ValueCoef: 0.5, LR: 3e-4, MaxGradNorm: 0.5, NormalizeAdvantages: true,
		KL: KLConfig{Target: 0.02, EarlyStop: true},
	}
}

// Validate reports every out-of-range field.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Gamma >= 0 && c.Gamma <= 1, "gamma %v not in [0, 1]", c.Gamma)
	check(c.Lambda >= 0 && c.Lambda <= 1, "lambda %v not in [0, 1]", c.Lambda)
	check(c.Epochs >= 1, "epochs %d < 1", c.Epochs)
	check(c.MinibatchSize >= 1, "minibatch size %d < 1", c.MinibatchSize)
	check(c.ClipRange > 0, "clip range %v <= 0", c.ClipRange)
	check(c.ValueCoef >= 0, "value coefficient %v < 0", c.ValueCoef)
	check(c.EntropyCoef >= 0, "entropy coefficient %v < 0", c.EntropyCoef)
	check(c.LR > 0, "learning rate %v <= 0", c.LR)
	check(c.KL.Target >= 0, "KL target %v < 0", c.KL.Target)
	check(c.KL.Coef >= 0, "KL coefficient %v < 0", c.KL.Coef)
	check(!c.KL.Adaptive || (c.KL.Target > 0 && c.KL.Coef > 0), "adaptive KL penalty needs a target and a coefficient > 0")
	check(!c.KL.EarlyStop || c.KL.Target > 0, "KL early stop needs a target > 0")
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ppo config %q: %w", c.Level, err)
	}
	return nil
}

// Stats summarises one Update.
type Stats struct {
	PolicyLoss        float64 // clipped surrogate loss, mean over minibatches
	ValueLoss         float64 // mean squared value error, mean over minibatches
	Entropy           float64 // entropy of the latent Gaussian after the update
	ApproxKL          float64 // approximate KL(old || new), mean over the last epoch's minibatches
	ClipFraction      float64 // fraction of samples with |r - 1| > ClipRange, over all minibatches
	ExplainedVariance float64 // 1 - Var[R - V] / Var[R] of the rollout's values before the update; NaN if Var[R] = 0
	GradNorm          float64 // global gradient norm before clipping, mean over steps
	KLCoef            float64 // KL penalty coefficient after this update's adaptation
	Epochs            int     // epochs run; the last is partial after an early stop
	Steps             int     // optimiser steps taken
	SkippedSteps      int     // minibatches whose gradient was not finite; no step was taken
	EarlyStop         bool    // the update stopped because the approximate KL exceeded the target
}

// PPO trains a Policy with proximal policy optimisation (Schulman et al.
// 2017, "Proximal policy optimization algorithms"), clipped surrogate
// objective, GAE advantages, entropy bonus, KL early stop or adaptive
// penalty, Adam and global-norm gradient clipping. It keeps the optimiser
// state and scratch buffers between updates of the same policy.
type PPO struct {
	Config Config
	Adam   *Adam   // created by the first Update of a policy
	KLCoef float64 // current KL penalty coefficient beta, from Config.KL.Coef

	pol    *Policy
	grad   []float64
	idx    []int
	adv    []float64
	dOut   []float64
	ta, tc *Tape
}

// NewPPO returns a trainer with the given configuration.
func NewPPO(c Config) (*PPO, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &PPO{Config: c, KLCoef: c.KL.Coef}, nil
}

// prepare sizes the scratch for p and n steps; the optimiser restarts when
// p is not the policy of the previous update.
func (o *PPO) prepare(p *Policy, n int) {
	if o.pol != p {
		o.pol = p
		o.Adam = NewAdam(len(p.params), o.Config.LR)
		o.grad = make([]float64, len(p.params))
		o.dOut = make([]float64, p.Actor.Out())
		o.ta = p.Actor.NewTape()
		o.tc = nil
		if p.Critic != nil {
			o.tc = p.Critic.NewTape()
		}
	}
	if cap(o.idx) < n {
		o.idx = make([]int, n)
		o.adv = make([]float64, n)
	}
	o.idx, o.adv = o.idx[:n], o.adv[:n]
}

// Update runs GAE over roll (writing roll.Adv and roll.Ret), then Epochs
// passes of shuffled minibatches of the PPO loss over it, and adapts the KL
// coefficient. It uses r only to shuffle. It panics on a rollout that does
// not fit p. After the first update of p with a rollout of this length it
// does not allocate.
//
// The loss of a minibatch of B steps, minimised (Schulman et al. 2017,
// eqs. 7-9; beta is KLCoef, A_i the standardised advantages, R_i the
// returns):
//
//	L      = L_clip + c_V L_V + beta L_KL - c_H H
//	L_clip = -1/B sum_i min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i)
//	L_V    = 1/B sum_i (V(s_i) - R_i)^2
//	L_KL   = 1/B sum_i (r_i - 1) - log r_i
//	H      = sum_k log sigma_k + (1 + log(2 pi)) / 2
//	r_i    = exp(log pi(a_i | s_i) - log pi_old(a_i | s_i))
func (o *PPO) Update(p *Policy, roll *Rollout, r *rand.Rand) Stats {
	c := &o.Config
	n := roll.Len()
	if roll.ObsDim != p.Spec.Obs.Dim() || roll.LatentDim != p.Spec.Action.LatentDim() {
		panic(fmt.Sprintf("rl: rollout of %d+%d values per step for a policy of %d+%d", roll.ObsDim, roll.LatentDim, p.Spec.Obs.Dim(), p.Spec.Action.LatentDim()))
	}
	var st Stats
	st.KLCoef = o.KLCoef
	if n == 0 {
		st.Entropy = GaussianEntropy(p.LogStd)
		return st
	}
	o.prepare(p, n)
	o.Adam.LR = c.LR

	GAE(roll.Reward[:n], roll.Value[:n], roll.Done[:n], roll.LastValue, c.Gamma, c.Lambda, roll.Adv[:n], roll.Ret[:n])
	st.ExplainedVariance = explainedVariance(roll.Value[:n], roll.Ret[:n])
	copy(o.adv, roll.Adv[:n])
	if c.NormalizeAdvantages && n > 1 {
		standardize(o.adv)
	}
	for i := range o.idx {
		o.idx[i] = i
	}

	var batches, samples, clipped int
	var lastKL float64
	var lastBatches int
epochs:
	for e := 0; e < c.Epochs; e++ {
		st.Epochs = e + 1
		r.Shuffle(n, func(i, j int) { o.idx[i], o.idx[j] = o.idx[j], o.idx[i] })
		lastKL, lastBatches = 0, 0
		for b := 0; b < n; b += c.MinibatchSize {
			idx := o.idx[b:min(b+c.MinibatchSize, n)]
			bs := o.batchLoss(p, roll, idx, o.grad)
			batches++
			lastBatches++
			samples += len(idx)
			clipped += bs.clipped
			st.PolicyLoss += bs.policy
			st.ValueLoss += bs.value
			lastKL += bs.kl
			if c.KL.EarlyStop && bs.kl > c.KL.Target {
				st.EarlyStop = true
				break epochs
			}
			norm := ClipGlobalNorm(o.grad, c.MaxGradNorm)
			if math.IsNaN(norm) || math.IsInf(norm, 0) {
				// An overflowing ratio or a diverged value: skip the
				// step rather than write NaN into every parameter.
				st.SkippedSteps++
				continue
			}
			st.GradNorm += norm
			o.Adam.Step(p.params, o.grad)
			st.Steps++
		}
	}
	st.PolicyLoss /= float64(batches)
	st.ValueLoss /= float64(batches)
	st.ClipFraction = float64(clipped) / float64(samples)
	if st.Steps > 0 {
		st.GradNorm /= float64(st.Steps)
	}
	st.ApproxKL = lastKL / float64(lastBatches)
	st.Entropy = GaussianEntropy(p.LogStd)

	if c.KL.Adaptive {
		switch {
		case st.ApproxKL < c.KL.Target/1.5:
			o.KLCoef /= 2
		case st.ApproxKL > c.KL.Target*1.5:
			o.KLCoef *= 2
		}
	}
	st.KLCoef = o.KLCoef
	return st
}

// batchStats are the parts of the loss on one minibatch.
type batchStats struct {
	loss    float64 // the total L (see Update)
	policy  float64 // L_clip
	value   float64 // L_V
	kl      float64 // L_KL, the approximate KL
	clipped int     // samples with |r - 1| > epsilon
}

// batchLoss evaluates the PPO loss L (see Update) over steps idx of roll,
// with advantages o.adv, and overwrites grad with its gradient with respect
// to p.Params. Per sample:
//
//	dL/dlog pi = -r_i A_i / B  if the unclipped term is the minimum or r_i is inside the clip range, else 0
//	           + beta (r_i - 1) / B
//	dL/dV      = 2 c_V (V(s_i) - R_i) / B
//
// then through GaussianLogProbGrad to the means and log-stds and through
// Network.Backward to the weights; dL/dlog sigma_k also gets -c_H.
func (o *PPO) batchLoss(p *Policy, roll *Rollout, idx []int, grad []float64) batchStats {
	c := &o.Config
	clear(grad)
	gActor, gCritic, gLogStd := p.gradViews(grad)
	lat := p.Spec.Action.LatentDim()
	invB := 1 / float64(len(idx))
	eps := c.ClipRange
	beta := o.KLCoef
	var bs batchStats
	var dv [1]float64
	for _, i := range idx {
		x, z := roll.obs(i), roll.latent(i)
		out := p.Actor.Forward(o.ta, x)
		mean := out[:lat]
		var v float64
		if p.Critic == nil {
			v = out[lat]
		} else {
			v = p.Critic.Forward(o.tc, x)[0]
		}
		logp := p.logProb(z, mean)
		logRatio := logp - roll.LogProb[i]
		ratio := math.Exp(logRatio)
		a := o.adv[i]

		s1 := ratio * a                                          // r A
		s2 := min(max(ratio, 1-eps), 1+eps) * a                  // clip(r, 1 - eps, 1 + eps) A
		bs.policy -= min(s1, s2) * invB                          // L_clip
		bs.value += (v - roll.Ret[i]) * (v - roll.Ret[i]) * invB // L_V
		bs.kl += (ratio - 1 - logRatio) * invB                   // L_KL
		if math.Abs(ratio-1) > eps {
			bs.clipped++
		}

		var dlogp float64
		if s1 <= s2 || math.Abs(ratio-1) <= eps {
			dlogp = -ratio * a * invB
		}
		dlogp += beta * (ratio - 1) * invB
		clear(o.dOut)
		GaussianLogProbGrad(z, mean, p.LogStd, dlogp, o.dOut[:lat], gLogStd)
		dV := 2 * c.ValueCoef * (v - roll.Ret[i]) * invB
		if p.Critic == nil {
			o.dOut[lat] = dV
			p.Actor.Backward(o.ta, o.dOut, gActor, nil)
		} else {
			p.Actor.Backward(o.ta, o.dOut, gActor, nil)
			dv[0] = dV
			p.Critic.Backward(o.tc, dv[:], gCritic, nil)
		}
	}
	h := GaussianEntropy(p.LogStd)
	for k := range gLogStd {
		gLogStd[k] -= c.EntropyCoef // dH/dlog sigma_k = 1
	}
	bs.loss = bs.policy + // L_clip
		c.ValueCoef*bs.value + // + c_V L_V
		beta*bs.kl - // + beta L_KL
		c.EntropyCoef*h // - c_H H
	return bs
}

// explainedVariance returns 1 - Var[ret - v] / Var[ret], NaN if Var[ret] is 0.
func explainedVariance(v, ret []float64) float64 {
	var mr, md float64
	for i := range ret {
		mr += ret[i]
		md += ret[i] - v[i]
	}
	n := float64(len(ret))
	mr, md = mr/n, md/n
	var vr, vd float64
	for i := range ret {
		vr += (ret[i] - mr) * (ret[i] - mr)
		d := ret[i] - v[i] - md
		vd += d * d
	}
	if vr == 0 {
		return math.NaN()
	}
	return 1 - vd/vr
}

// standardize shifts and scales x in place to mean 0 and standard
// deviation 1 (population; 1e-8 added to the deviation).
func standardize(x []float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	sd := math.Sqrt(s/float64(len(x))) + 1e-8
	for i, v := range x {
		x[i] = (v - m) / sd
	}
}
