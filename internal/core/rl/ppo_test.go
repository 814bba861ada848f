package rl

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// fillRollout acts with p on random observations until roll is full, with
// random rewards and dones, and sets LastValue.
func fillRollout(p *Policy, roll *Rollout, r *rand.Rand) {
	roll.Reset()
	obs := make([]float64, p.Spec.Obs.Dim())
	a := p.NewAction()
	for !roll.Full() {
		randomize(obs, 1, r)
		p.Norm.Observe(obs)
		p.Act(obs, r, a)
		roll.Add(a, r.NormFloat64(), r.Float64() < 0.2)
	}
	randomize(obs, 1, r)
	roll.LastValue = p.Value(obs)
}

func TestPPOLossGradientMatchesFiniteDifferences(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := "separate critic"
		if shared {
			name = "shared trunk"
		}
		t.Run(name, func(t *testing.T) {
			r := seeded(t, 51)
			old, err := NewPolicy(testSpec(shared), r)
			if err != nil {
				t.Fatal(err)
			}
			randomize(old.Params(), 0.4, r)
			roll := old.NewRollout(16)
			fillRollout(old, roll, r)

			// The policy being trained has moved away from the one that
			// acted, so that some ratios are clipped and some are not.
			p := old.Clone()
			for i := range p.params {
				p.params[i] += 0.15 * r.NormFloat64()
			}
			c := DefaultConfig("test")
			c.EntropyCoef = 0.01
			c.KL.Coef = 0.7 // exercise the penalty's gradient too
			o, err := NewPPO(c)
			if err != nil {
				t.Fatal(err)
			}
			n := roll.Len()
			o.prepare(p, n)
			GAE(roll.Reward[:n], roll.Value[:n], roll.Done[:n], roll.LastValue, c.Gamma, c.Lambda, roll.Adv[:n], roll.Ret[:n])
			copy(o.adv, roll.Adv[:n])
			standardize(o.adv)
			idx := []int{0, 2, 3, 5, 7, 8, 9, 11, 12, 13, 15} // a minibatch, not the whole rollout

			grad := make([]float64, len(p.params))
			bs := o.batchLoss(p, roll, idx, grad)
			if bs.clipped == 0 || bs.clipped == len(idx) {
				t.Fatalf("%d of %d samples clipped; the test needs both kinds", bs.clipped, len(idx))
			}
			t.Logf("%d of %d samples outside the clip range, approx KL %.3g", bs.clipped, len(idx), bs.kl)
			scratch := make([]float64, len(p.params))
			loss := func() float64 { return o.batchLoss(p, roll, idx, scratch).loss }
			checkGradient(t, "PPO loss", p.params, grad, loss, 1e-6)
		})
	}
}

func TestPPOConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"defaults are valid", func(*Config) {}, ""},
		{"gamma above 1", func(c *Config) { c.Gamma = 1.1 }, "gamma 1.1 not in [0, 1]"},
		{"no epochs", func(c *Config) { c.Epochs = 0 }, "epochs 0 < 1"},
		{"early stop without target", func(c *Config) { c.KL.Target = 0 }, "KL early stop needs a target"},
		{"adaptive penalty without coefficient", func(c *Config) { c.KL.Adaptive = true }, "adaptive KL penalty needs"},
		{"all problems at once", func(c *Config) { c.LR = 0; c.ClipRange = -1 }, "clip range -1 <= 0\nlearning rate 0 <= 0"},
	}
	for _, tt := range tests {
		c := DefaultConfig("commander")
		tt.modify(&c)
		err := c.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestPPOUpdate(t *testing.T) {
	setup := func(t *testing.T, modify func(*Config)) (*Policy, *Rollout, *PPO, *rand.Rand) {
		r := seeded(t, 52)
		p, _ := NewPolicy(testSpec(false), r)
		roll := p.NewRollout(256)
		fillRollout(p, roll, r)
		c := DefaultConfig("test")
		c.MinibatchSize = 32
		modify(&c)
		o, err := NewPPO(c)
		if err != nil {
			t.Fatal(err)
		}
		return p, roll, o, r
	}
	t.Run("KL above target stops the epochs early", func(t *testing.T) {
		p, roll, o, r := setup(t, func(c *Config) { c.LR = 0.05; c.KL.Target = 0.01 })
		st := o.Update(p, roll, r)
		if !st.EarlyStop || st.Epochs >= o.Config.Epochs {
			t.Errorf("early stop %v after %d of %d epochs (approx KL %v), want an early stop", st.EarlyStop, st.Epochs, o.Config.Epochs, st.ApproxKL)
		}
		if st.Steps >= o.Config.Epochs*8 {
			t.Errorf("%d optimiser steps, want fewer than all %d", st.Steps, o.Config.Epochs*8)
		}
	})
	t.Run("all epochs run under the target", func(t *testing.T) {
		p, roll, o, r := setup(t, func(c *Config) { c.LR = 1e-6 })
		st := o.Update(p, roll, r)
		if st.EarlyStop || st.Epochs != 10 || st.Steps != 80 {
			t.Errorf("early stop %v, %d epochs, %d steps; want 10 epochs of 8 steps", st.EarlyStop, st.Epochs, st.Steps)
		}
	})
	t.Run("adaptive penalty doubles beta above 1.5 target", func(t *testing.T) {
		p, roll, o, r := setup(t, func(c *Config) {
			c.LR = 0.01
			c.KL = KLConfig{Target: 0.001, Coef: 1, Adaptive: true}
		})
		st := o.Update(p, roll, r)
		if st.ApproxKL <= 0.0015 || st.KLCoef != 2 {
			t.Errorf("approx KL %v, beta %v; want KL > 0.0015 and beta 2", st.ApproxKL, st.KLCoef)
		}
	})
	t.Run("adaptive penalty halves beta below target / 1.5", func(t *testing.T) {
		p, roll, o, r := setup(t, func(c *Config) {
			c.LR = 1e-7
			c.KL = KLConfig{Target: 0.01, Coef: 1, Adaptive: true}
		})
		st := o.Update(p, roll, r)
		if st.ApproxKL >= 0.01/1.5 || st.KLCoef != 0.5 {
			t.Errorf("approx KL %v, beta %v; want KL < 0.0067 and beta 0.5", st.ApproxKL, st.KLCoef)
		}
	})
	t.Run("stats are finite and in range", func(t *testing.T) {
		p, roll, o, r := setup(t, func(*Config) {})
		st := o.Update(p, roll, r)
		for name, v := range map[string]float64{"policy loss": st.PolicyLoss, "value loss": st.ValueLoss, "entropy": st.Entropy, "approx KL": st.ApproxKL, "grad norm": st.GradNorm, "explained variance": st.ExplainedVariance} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s = %v", name, v)
			}
		}
		if st.ClipFraction < 0 || st.ClipFraction > 1 || st.ApproxKL < 0 {
			t.Errorf("clip fraction %v, approx KL %v", st.ClipFraction, st.ApproxKL)
		}
	})
	t.Run("deterministic for a seed", func(t *testing.T) {
		p1, roll1, o1, r1 := setup(t, func(*Config) {})
		p2, roll2, o2, r2 := setup(t, func(*Config) {})
		o1.Update(p1, roll1, r1)
		o2.Update(p2, roll2, r2)
		for i := range p1.params {
			if p1.params[i] != p2.params[i] {
				t.Fatalf("param %d: %v and %v after identical updates", i, p1.params[i], p2.params[i])
			}
		}
	})
	t.Run("non-finite gradient skips the step", func(t *testing.T) {
		p, roll, o, r := setup(t, func(c *Config) { c.KL.EarlyStop = false })
		for i := range roll.LogProb {
			roll.LogProb[i] = -1e6 // the ratio overflows to +Inf
		}
		st := o.Update(p, roll, r)
		if st.SkippedSteps == 0 {
			t.Errorf("no skipped steps (%d steps taken)", st.Steps)
		}
		for i, v := range p.params {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("param %d = %v after an update with overflowing ratios", i, v)
			}
		}
	})
	t.Run("second update does not allocate", func(t *testing.T) {
		p, roll, o, r := setup(t, func(*Config) {})
		o.Update(p, roll, r)
		allocs := testing.AllocsPerRun(3, func() { o.Update(p, roll, r) })
		if allocs != 0 {
			t.Errorf("Update allocates %v times, want 0", allocs)
		}
	})
}

func TestExplainedVariance(t *testing.T) {
	ret := []float64{1, 2, 3, 4}
	if ev := explainedVariance(ret, ret); ev != 1 {
		t.Errorf("perfect values: %v, want 1", ev)
	}
	if ev := explainedVariance([]float64{2.5, 2.5, 2.5, 2.5}, ret); math.Abs(ev) > 1e-15 {
		t.Errorf("constant values: %v, want 0", ev)
	}
	if ev := explainedVariance(ret, []float64{1, 1, 1, 1}); !math.IsNaN(ev) {
		t.Errorf("constant returns: %v, want NaN", ev)
	}
}
