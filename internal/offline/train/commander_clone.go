package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/regimentd/regiment/internal/core/rl"
)

// WarmStartOptions shape the warm start of a learned Commander. Zero fields
// take the defaults named on each.
type WarmStartOptions struct {
	Episodes int     // heuristic episodes collected; default 8
	Epochs   int     // passes over the samples fitting the critic; default 40
	Batch    int     // samples per Adam step; default 32
	LR       float64 // Adam step size; default 3e-3
	// Gamma discounts the heuristic's rewards into the returns the critic
	// is fitted to. Default 0.99 (PPO's).
	Gamma float64
	// LogStd is the log standard deviation every latent action dimension
	// gets, PPO's exploration around the heuristic. Default -2 (sigma 0.14
	// in logits: shares and headroom odds move by some 14%).
	LogStd float64
}

func (o *WarmStartOptions) defaults() {
	if o.Episodes <= 0 {
		o.Episodes = 8
	}
	if o.Epochs <= 0 {
		o.Epochs = 40
	}
	if o.Batch <= 0 {
		o.Batch = 32
	}
	if o.LR <= 0 {
		o.LR = 3e-3
	}
	if o.Gamma <= 0 {
		o.Gamma = 0.99
	}
	if o.LogStd == 0 {
		o.LogStd = -2
	}
}

// WarmStartStats reports a warm start.
type WarmStartStats struct {
	Samples int
	// ValueLoss0 and ValueLoss are the critic's mean squared error against
	// the heuristic's discounted returns before and after fitting.
	ValueLoss0, ValueLoss float64
}

// WarmStartCommander makes p act exactly as the Forecast heuristic, so that
// PPO starts from it: the action is a residual on the heuristic's
// (commander.ActionLayout), so p's actor output layer is zeroed (mean
// residual 0: the heuristic itself, with no cloning error). It runs
// opt.Episodes episodes of env with the heuristic acting, fits p's
// normaliser to their observations (and leaves it unfrozen), and fits the
// critic to the heuristic's discounted returns-to-go within each episode,
// G_t = sum_k gamma^k r_{t+k}, by minibatch Adam on
//
//	L      = 1/(2B) sum_b (V(x_b) - G_b)^2
//	dL/dV  = (V(x_b) - G_b) / B
//
// back-propagated through the critic (Network.Backward), so that PPO's
// first advantages are not those of a random critic. Every log standard
// deviation is set to opt.LogStd. p must have env's observation and action
// layouts and a separate critic.
func WarmStartCommander(env *CommanderEnv, p *rl.Policy, r *rand.Rand, opt WarmStartOptions) (WarmStartStats, error) {
	opt.defaults()
	spec := env.Spec()
	if err := rl.CheckLayout(p.Spec.Obs, spec.Obs); err != nil {
		return WarmStartStats{}, fmt.Errorf("warm start commander: %w", err)
	}
	if !p.Spec.Action.Equal(spec.Act) || p.Critic == nil {
		return WarmStartStats{}, fmt.Errorf("warm start commander: the policy's action layout is not the env's, or it has no separate critic")
	}
	dim := spec.Obs.Dim()
	var xs, gs []float64
	obs := [][]float64{make([]float64, dim)}
	act := [][]float64{make([]float64, spec.Act.Dim())}
	rew := make([]float64, 1)
	ZeroResidual(act[0], env.n)
	for range opt.Episodes {
		env.Reset(r, obs)
		first := len(gs)
		for done := false; !done; {
			xs = append(xs, obs[0]...)
			done, _ = env.Step(act, obs, rew)
			gs = append(gs, rew[0])
		}
		for t := len(gs) - 2; t >= first; t-- { // G_t = r_t + gamma G_{t+1}
			gs[t] += opt.Gamma * gs[t+1]
		}
	}
	m := len(gs)
	p.Norm.Frozen = false
	for i := range m {
		p.Norm.Observe(xs[i*dim : (i+1)*dim])
	}
	in := make([]float64, len(xs))
	for i := range m {
		p.Norm.Normalize(xs[i*dim:(i+1)*dim], in[i*dim:(i+1)*dim])
	}
	st := WarmStartStats{Samples: m}
	st.ValueLoss0, st.ValueLoss = fit(p.Critic, in, gs, dim, 1, m, r, opt)
	if math.IsNaN(st.ValueLoss) {
		return st, fmt.Errorf("warm start commander: the value loss diverged")
	}
	w, b := p.Actor.Layer(p.Actor.Params(), len(p.Actor.Sizes())-2)
	clear(w)
	clear(b)
	for k := range p.LogStd {
		p.LogStd[k] = opt.LogStd
	}
	return st, nil
}

// fit regresses the first out outputs of net onto ys (m x out) from the
// inputs in (m x dim) by minibatch Adam on the mean squared error, starting
// from output biases at the targets' mean. It returns the loss per output
// before and after.
func fit(net *rl.Network, in, ys []float64, dim, out, m int, r *rand.Rand, opt WarmStartOptions) (before, after float64) {
	tape := net.NewTape()
	grad := make([]float64, net.NumParams())
	dOut := make([]float64, net.Out())
	adam := rl.NewAdam(net.NumParams(), opt.LR)
	loss := func() float64 {
		s := 0.0
		for i := range m {
			mu := net.Forward(tape, in[i*dim:(i+1)*dim])
			for k := range out {
				d := mu[k] - ys[i*out+k]
				s += d * d
			}
		}
		return s / float64(m*out)
	}
	before = loss()
	// The output biases carry the mean target; the network fits what varies.
	_, bias := net.Layer(net.Params(), len(net.Sizes())-2)
	for k := range out {
		bias[k] = 0
		for i := range m {
			bias[k] += ys[i*out+k]
		}
		bias[k] /= float64(m)
	}
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	for range opt.Epochs {
		r.Shuffle(m, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for b := 0; b < m; b += opt.Batch {
			batch := idx[b:min(b+opt.Batch, m)]
			clear(grad)
			for _, i := range batch {
				mu := net.Forward(tape, in[i*dim:(i+1)*dim])
				clear(dOut)
				for k := range out {
					dOut[k] = (mu[k] - ys[i*out+k]) / float64(len(batch))
				}
				net.Backward(tape, dOut, grad, nil)
			}
			rl.ClipGlobalNorm(grad, 1)
			adam.Step(net.Params(), grad)
		}
	}
	return before, loss()
}
