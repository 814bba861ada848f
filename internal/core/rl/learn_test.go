package rl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// env is a toy environment for the learning tests.
type env interface {
	reset(r *rand.Rand, obs []float64)
	// step applies action (Action.Env), writes the next observation and
	// returns the reward and whether the episode ended.
	step(action []float64, r *rand.Rand, obs []float64) (reward float64, done bool)
}

// collect fills roll with steps of e under p (sampling), updating the
// normaliser, and returns the mean return of the episodes that ended.
func collect(p *Policy, e env, roll *Rollout, obs []float64, a *Action, r *rand.Rand, epRet *float64) float64 {
	roll.Reset()
	var sum float64
	var n int
	for !roll.Full() {
		p.Norm.Observe(obs)
		p.Act(obs, r, a)
		rew, done := e.step(a.Env, r, obs)
		roll.Add(a, rew, done)
		*epRet += rew
		if done {
			sum += *epRet
			n++
			*epRet = 0
			e.reset(r, obs)
		}
	}
	roll.LastValue = p.Value(obs)
	return sum / float64(max(n, 1))
}

// evaluate returns the mean return of the deterministic policy over
// episodes episodes of e started from a fixed seed. e must not be the
// training environment (evaluation would end its episode).
func evaluate(p *Policy, e env, episodes int) float64 {
	r := rand.New(rand.NewPCG(999, 999))
	obs := make([]float64, p.Spec.Obs.Dim())
	a := p.NewAction()
	var total float64
	for range episodes {
		e.reset(r, obs)
		for {
			p.Mean(obs, a)
			rew, done := e.step(a.Env, r, obs)
			total += rew
			if done {
				break
			}
		}
	}
	return total / float64(episodes)
}

// pointMass is a 1-D point mass that must reach the origin and stay there:
// x0 ~ U(-1, 1), v0 = 0; force a clipped to [-1, 1];
// v' = v + dt a, x' = x + dt v'; reward -x'^2 - 0.01 a^2 per step;
// horizon steps. Observation (x, v, t / horizon).
type pointMass struct {
	x, v    float64
	t       int
	horizon int
}

const pmDt = 0.1

func (e *pointMass) reset(r *rand.Rand, obs []float64) {
	e.x, e.v, e.t = 2*r.Float64()-1, 0, 0
	e.observe(obs)
}

func (e *pointMass) observe(obs []float64) {
	obs[0], obs[1], obs[2] = e.x, e.v, float64(e.t)/float64(e.horizon)
}

func (e *pointMass) step(action []float64, _ *rand.Rand, obs []float64) (float64, bool) {
	a := min(max(action[0], -1), 1)
	e.v += pmDt * a
	e.x += pmDt * e.v
	e.t++
	e.observe(obs)
	return -e.x*e.x - 0.01*a*a, e.t == e.horizon
}

// PPO learns to drive the point mass to the goal: the deterministic
// policy's mean return over 100 fixed starts improves from about -13
// (doing nothing: -40 E[x0^2]) to better than -3 within 10 updates of 2048
// steps.
func TestPPOLearnsPointMassToGoal(t *testing.T) {
	const seed = 2024
	r := seeded(t, seed)
	spec := DefaultSpec(
		ScalarLayout("point-mass", 1, []string{"x", "v", "t"}),
		ActionLayout{Segments: []Segment{{"force", Gaussian, 1}}},
	)
	spec.Actor = Arch{Hidden: []int{32, 32}, Activations: []Activation{Tanh, Tanh}}
	spec.Critic = spec.Actor
	p, err := NewPolicy(spec, r)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig("toy")
	c.LR = 1e-3
	c.KL.Target = 0.05
	o, err := NewPPO(c)
	if err != nil {
		t.Fatal(err)
	}
	e := &pointMass{horizon: 40}
	before := evaluate(p, &pointMass{horizon: e.horizon}, 100)

	roll := p.NewRollout(2048)
	obs := make([]float64, 3)
	a := p.NewAction()
	e.reset(r, obs)
	var epRet float64
	const updates, want = 10, -3.0
	var after float64
	for u := range updates {
		train := collect(p, e, roll, obs, a, r, &epRet)
		st := o.Update(p, roll, r)
		if u%2 == 1 {
			after = evaluate(p, &pointMass{horizon: e.horizon}, 100)
			t.Logf("update %2d: sampled return %7.3f, deterministic %7.3f, policy loss %+.4f, value loss %.4f, approx KL %.4f, clip %.2f, explained variance %.2f, epochs %d, std %.3f",
				u+1, train, after, st.PolicyLoss, st.ValueLoss, st.ApproxKL, st.ClipFraction, st.ExplainedVariance, st.Epochs, math.Exp(p.LogStd[0]))
		}
	}
	t.Logf("seed %d: mean return %.3f before, %.3f after %d updates (want > %.1f)", seed, before, after, updates, want)
	if !(after > want) {
		t.Errorf("mean return %.3f after %d updates, want > %.1f (before: %.3f)", after, updates, want, before)
	}
}

// sharesBandit is a contextual bandit over shares: the context c (one-hot,
// 2 contexts) sets each arm's payoff mu_c; the reward for shares s is
// sum_k s_k mu_ck plus noise. Each step is an episode.
type sharesBandit struct {
	c int
}

var banditPayoff = [2][4]float64{
	{0.2, 1.0, 0.1, 0.3}, // context 0: arm 1 is best
	{0.9, 0.2, 0.1, 0.4}, // context 1: arm 0 is best
}

func (e *sharesBandit) reset(r *rand.Rand, obs []float64) {
	e.c = r.IntN(2)
	obs[0], obs[1] = 0, 0
	obs[e.c] = 1
}

func (e *sharesBandit) step(action []float64, r *rand.Rand, obs []float64) (float64, bool) {
	var rew float64
	for k, s := range action {
		rew += s * banditPayoff[e.c][k]
	}
	rew += 0.1 * r.NormFloat64()
	e.reset(r, obs)
	return rew, true
}

// PPO with the logistic-normal head learns to put most of the share on the
// best arm of each context: from 1/4 to more than 0.8 within 20 updates of
// 512 steps.
func TestPPOLearnsToPutTheShareOnTheBestArm(t *testing.T) {
	const seed = 77
	r := seeded(t, seed)
	spec := DefaultSpec(
		ScalarLayout("bandit", 1, []string{"context0", "context1"}),
		ActionLayout{Segments: []Segment{{"shares", Simplex, 4}}},
	)
	spec.Actor = Arch{Hidden: []int{16}, Activations: []Activation{Tanh}}
	spec.Critic = spec.Actor
	p, err := NewPolicy(spec, r)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig("toy")
	c.LR = 3e-3
	c.KL.Target = 0.05
	o, err := NewPPO(c)
	if err != nil {
		t.Fatal(err)
	}
	e := &sharesBandit{}
	roll := p.NewRollout(512)
	obs := make([]float64, 2)
	a := p.NewAction()
	e.reset(r, obs)
	var epRet float64

	best := [2]int{1, 0}
	shareOnBest := func() [2]float64 {
		var out [2]float64
		for ctx := range 2 {
			in := []float64{0, 0}
			in[ctx] = 1
			p.Mean(in, a)
			out[ctx] = a.Env[best[ctx]]
		}
		return out
	}
	const updates, want = 20, 0.8
	t.Logf("before: share on the best arm %.3f", shareOnBest())
	for u := range updates {
		train := collect(p, e, roll, obs, a, r, &epRet)
		st := o.Update(p, roll, r)
		if u%5 == 4 {
			t.Logf("update %2d: sampled reward %.3f, share on the best arm %.3f, approx KL %.4f, epochs %d", u+1, train, shareOnBest(), st.ApproxKL, st.Epochs)
		}
	}
	got := shareOnBest()
	t.Logf("seed %d: share on the best arm %.3f after %d updates (want > %.2f)", seed, got, updates, want)
	for ctx, s := range got {
		if !(s > want) {
			t.Errorf("context %d: share on the best arm %d is %.3f after %d updates, want > %.2f", ctx, best[ctx], s, updates, want)
		}
	}
}
