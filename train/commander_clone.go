package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/rl"
)

// CloneOptions shape behaviour cloning of the Forecast heuristic. Zero
// fields take the defaults named on each.
type CloneOptions struct {
	Episodes int // episodes collected per round; default 6
	// Rounds is the number of collect-and-fit rounds: the first acts with
	// the heuristic, later ones with the policy fitted so far while still
	// labelling with the heuristic (DAgger: Ross, Gordon and Bagnell 2011),
	// so that the clone learns to recover from its own mistakes. Default 3.
	Rounds int
	Epochs int     // passes over the samples; default 40
	Batch  int     // samples per Adam step; default 32
	LR     float64 // Adam step size; default 3e-3
	// Gamma discounts the heuristic's rewards into the returns the critic
	// is fitted to. Default 0.99 (PPO's).
	Gamma float64
	// LogStd is the log standard deviation every latent action dimension
	// gets after cloning, PPO's exploration from the cloned mean. Default
	// -1.5 (sigma 0.22).
	LogStd float64
}

func (o *CloneOptions) defaults() {
	if o.Episodes <= 0 {
		o.Episodes = 6
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
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
		o.LogStd = -1.5
	}
}

// CloneStats reports a cloning run.
type CloneStats struct {
	Samples int
	// Loss0 and Loss are the mean squared error between the actor's latent
	// means and the heuristic's latent actions, per latent dimension,
	// before and after fitting.
	Loss0, Loss float64
	// ValueLoss0 and ValueLoss are the critic's mean squared error against
	// the heuristic's discounted returns before and after fitting.
	ValueLoss0, ValueLoss float64
}

// CloneCommander behaviour-clones the Forecast heuristic into p, so that
// PPO starts from it: it runs opt.Episodes episodes of env with the
// heuristic acting, fits p's normaliser to their observations (and leaves
// it unfrozen), then regresses the actor's latent means onto the
// heuristic's latent actions (commander.ActionLatent), starting from output
// biases at the targets' mean, with Adam on
//
//	L      = 1/(2B) sum_b ||mu(x_b) - z_b||^2
//	dL/dmu = (mu(x_b) - z_b) / B
//
// back-propagated through the actor (Network.Backward). The critic (a
// separate one; a shared trunk's value is left alone) is fitted the same
// way to the heuristic's discounted returns-to-go G_t = sum_k gamma^k
// r_{t+k} within each episode, so that PPO's first advantages are not
// those of a random critic. Every log standard deviation is set to
// opt.LogStd. After the first round, each further round collects
// opt.Episodes more episodes acting with p's mean action (labels are still
// the heuristic's; returns are the acting policy's) and refits on all
// samples so far. p must have env's observation and action layouts.
func CloneCommander(env *CommanderEnv, p *rl.Policy, r *rand.Rand, opt CloneOptions) (CloneStats, error) {
	opt.defaults()
	spec := env.Spec()
	if err := rl.CheckLayout(p.Spec.Obs, spec.Obs); err != nil {
		return CloneStats{}, fmt.Errorf("clone commander: %w", err)
	}
	if !p.Spec.Action.Equal(spec.Act) {
		return CloneStats{}, fmt.Errorf("clone commander: the policy's action layout is not the env's")
	}
	dim, lat, n := spec.Obs.Dim(), spec.Act.LatentDim(), env.n
	var xs, zs, gs []float64
	obs := [][]float64{make([]float64, dim)}
	act := [][]float64{make([]float64, spec.Act.Dim())}
	rew := make([]float64, 1)
	a := commander.NewAction(n)
	z := make([]float64, lat)
	pa := p.NewAction()
	st := CloneStats{}
	for round := range opt.Rounds {
		for range opt.Episodes {
			env.Reset(r, obs)
			first := len(gs)
			for done := false; !done; {
				env.Heuristic(&a)
				commander.ActionLatent(&a, z)
				xs = append(xs, obs[0]...)
				zs = append(zs, z...)
				if round == 0 {
					// Act exactly as the heuristic: its shares and reserve,
					// the latent (pre-squash) urgency and headroom.
					copy(act[0], a.Shares)
					act[0][n] = a.Reserve
					copy(act[0][n+1:], z[n:])
				} else {
					p.Mean(obs[0], pa)
					copy(act[0], pa.Env)
				}
				done, _ = env.Step(act, obs, rew)
				gs = append(gs, rew[0])
			}
			for t := len(gs) - 2; t >= first; t-- { // G_t = r_t + gamma G_{t+1}
				gs[t] += opt.Gamma * gs[t+1]
			}
		}
		m := len(zs) / lat
		if round == 0 { // the normaliser is fitted to the heuristic's states
			p.Norm.Frozen = false
			for i := range m {
				p.Norm.Observe(xs[i*dim : (i+1)*dim])
			}
			p.Norm.Frozen = true // Mean must not move it in later rounds
		}
		in := make([]float64, len(xs))
		for i := range m {
			p.Norm.Normalize(xs[i*dim:(i+1)*dim], in[i*dim:(i+1)*dim])
		}
		st.Samples = m
		l0, l := fit(p.Actor, in, zs, dim, lat, m, round == 0, r, opt)
		if round == 0 {
			st.Loss0 = l0
		}
		st.Loss = l
		if p.Critic != nil {
			v0, v := fit(p.Critic, in, gs, dim, 1, m, round == 0, r, opt)
			if round == 0 {
				st.ValueLoss0 = v0
			}
			st.ValueLoss = v
		}
		if math.IsNaN(st.Loss) || math.IsNaN(st.ValueLoss) {
			return st, fmt.Errorf("clone commander: the loss diverged")
		}
	}
	p.Norm.Frozen = false
	for k := range p.LogStd {
		p.LogStd[k] = opt.LogStd
	}
	return st, nil
}

// fit regresses the first out outputs of net onto ys (m x out) from the
// inputs in (m x dim) by minibatch Adam on the mean squared error, with
// init starting from output biases at the targets' mean. It returns the
// loss per output before and after.
func fit(net *rl.Network, in, ys []float64, dim, out, m int, init bool, r *rand.Rand, opt CloneOptions) (before, after float64) {
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
	if init { // the output biases carry the mean target; the network fits what varies
		_, bias := net.Layer(net.Params(), len(net.Sizes())-2)
		for k := range out {
			bias[k] = 0
			for i := range m {
				bias[k] += ys[i*out+k]
			}
			bias[k] /= float64(m)
		}
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
