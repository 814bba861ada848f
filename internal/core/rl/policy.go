package rl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// MaxWidth bounds hidden layer widths, feature sizes and segment sizes, so
// that a damaged checkpoint header cannot ask for absurd allocations.
const MaxWidth = 1 << 16

// Arch is a network's hidden architecture; the output layer is linear.
type Arch struct {
	Hidden      []int        `json:"hidden"`      // hidden layer widths, input side first
	Activations []Activation `json:"activations"` // one per hidden layer
}

// DefaultArch returns two hidden layers of 64 tanh units, the usual PPO
// network for low-dimensional control (Andrychowicz et al. 2021).
func DefaultArch() Arch {
	return Arch{Hidden: []int{64, 64}, Activations: []Activation{Tanh, Tanh}}
}

func (a Arch) validate(what string) error {
	if len(a.Activations) != len(a.Hidden) {
		return fmt.Errorf("%s: %d hidden layers need %d activations, have %d", what, len(a.Hidden), len(a.Hidden), len(a.Activations))
	}
	for i, h := range a.Hidden {
		if h < 1 || h > MaxWidth {
			return fmt.Errorf("%s: hidden layer %d has width %d, want 1 to %d", what, i, h, MaxWidth)
		}
		if a.Activations[i] > ReLU {
			return fmt.Errorf("%s: hidden layer %d has unknown activation %d", what, i, uint8(a.Activations[i]))
		}
	}
	return nil
}

// sizes returns the network's layer sizes and activations for in inputs and
// out outputs.
func (a Arch) sizes(in, out int) ([]int, []Activation) {
	sizes := append(append([]int{in}, a.Hidden...), out)
	acts := append(append([]Activation(nil), a.Activations...), Identity)
	return sizes, acts
}

// Spec describes a Policy's shape. It is what a checkpoint records besides
// the weights.
type Spec struct {
	Obs    Layout       `json:"observation"`
	Action ActionLayout `json:"action"`
	Actor  Arch         `json:"actor"`
	// Critic is the value network's architecture; ignored with SharedTrunk.
	Critic Arch `json:"critic"`
	// SharedTrunk makes the value one more linear output of the actor
	// network (shared hidden layers) instead of a separate critic network.
	SharedTrunk bool `json:"shared_trunk"`
	// InitLogStd is the initial log standard deviation of every latent
	// action dimension. Default 0 (sigma = 1).
	InitLogStd float64 `json:"init_log_std"`
	// NormClip bounds normalised observations; <= 0 means no clipping.
	// Default DefaultNormClip (10) when built by DefaultSpec.
	NormClip float64 `json:"norm_clip"`
}

// DefaultSpec returns a spec for the given layouts with DefaultArch actor
// and critic, a separate critic, log-std 0 and DefaultNormClip.
func DefaultSpec(obs Layout, action ActionLayout) Spec {
	return Spec{Obs: obs, Action: action, Actor: DefaultArch(), Critic: DefaultArch(), NormClip: DefaultNormClip}
}

// Validate reports the spec's problems.
func (s Spec) Validate() error {
	var errs []error
	if err := s.Obs.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := s.Action.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := s.Actor.validate("actor"); err != nil {
		errs = append(errs, err)
	}
	if !s.SharedTrunk {
		if err := s.Critic.validate("critic"); err != nil {
			errs = append(errs, err)
		}
	}
	if math.IsNaN(s.InitLogStd) || math.IsInf(s.InitLogStd, 0) {
		errs = append(errs, fmt.Errorf("init_log_std %v is not finite", s.InitLogStd))
	}
	return errors.Join(errs...)
}

// Policy is an actor-critic: an actor network giving the means of the
// latent Gaussian action dimensions, state-independent log standard
// deviations, a value (a separate critic network or one more actor output),
// and an observation normaliser.
type Policy struct {
	Spec       Spec
	Actor      *Network    // outputs LatentDim means (+1 value with SharedTrunk)
	Critic     *Network    // one output; nil with SharedTrunk
	LogStd     []float64   // LatentDim log standard deviations, view into Params
	Norm       *Normalizer // observation normaliser
	Provenance Provenance  // written to checkpoints; see Save

	params []float64 // actor, critic, log-std
	nActor int       // actor parameters
	nCrit  int       // critic parameters

	in     []float64 // scratch: normalised observation
	ta, tc *Tape     // scratch: actor and critic tapes
}

// NewPolicy returns a policy of the given spec with orthogonally initialised
// networks (Network.Init: hidden gain sqrt(2); gain 0.01 for the action
// means, 1 for the value), log-std InitLogStd and an empty normaliser.
func NewPolicy(spec Spec, r *rand.Rand) (*Policy, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("new policy: %w", err)
	}
	p := newPolicy(spec)
	p.Actor.Init(r, math.Sqrt2, 0.01)
	if p.Critic != nil {
		p.Critic.Init(r, math.Sqrt2, 1)
	} else {
		// The value row of the shared output layer gets gain 1, not 0.01.
		w, _ := p.Actor.Layer(p.Actor.params, len(p.Actor.acts)-1)
		nin := p.Actor.sizes[len(p.Actor.sizes)-2]
		row := w[spec.Action.LatentDim()*nin:]
		for i := range row {
			row[i] *= 100
		}
	}
	for k := range p.LogStd {
		p.LogStd[k] = spec.InitLogStd
	}
	return p, nil
}

// newPolicy allocates a policy of a valid spec with zero parameters.
func newPolicy(spec Spec) *Policy {
	in, lat := spec.Obs.Dim(), spec.Action.LatentDim()
	aout := lat
	if spec.SharedTrunk {
		aout++
	}
	asz, aact := spec.Actor.sizes(in, aout)
	var csz []int
	var cact []Activation
	nc := 0
	if !spec.SharedTrunk {
		csz, cact = spec.Critic.sizes(in, 1)
		nc = NumParams(csz)
	}
	na := NumParams(asz)
	p := &Policy{
		Spec:   spec,
		params: make([]float64, na+nc+lat),
		nActor: na,
		nCrit:  nc,
		Norm:   NewNormalizer(in, spec.NormClip),
		in:     make([]float64, in),
	}
	p.Actor = newNetworkOn(asz, aact, p.params[:na:na])
	p.ta = p.Actor.NewTape()
	if !spec.SharedTrunk {
		p.Critic = newNetworkOn(csz, cact, p.params[na:na+nc:na+nc])
		p.tc = p.Critic.NewTape()
	}
	p.LogStd = p.params[na+nc:]
	return p
}

// Params returns all trainable parameters as one vector (a view): actor,
// critic, log-std.
func (p *Policy) Params() []float64 { return p.params }

// gradViews splits a vector laid out like Params into its actor, critic
// and log-std parts.
func (p *Policy) gradViews(g []float64) (actor, critic, logStd []float64) {
	a, c := p.nActor, p.nActor+p.nCrit
	return g[:a], g[a:c], g[c:]
}

// Clone returns a deep copy with its own scratch buffers, for another
// goroutine.
func (p *Policy) Clone() *Policy {
	c := newPolicy(p.Spec)
	copy(c.params, p.params)
	c.Norm = p.Norm.Clone()
	c.Provenance = p.Provenance.clone()
	return c
}

// Action is one decision of a Policy. Make one with Policy.NewAction and
// reuse it.
type Action struct {
	Input   []float64 // the normalised observation the networks saw (ObsDim)
	Latent  []float64 // the Gaussian sample: Simplex segments as K-1 logits (LatentDim)
	Env     []float64 // the action to apply: Gaussian values as sampled, Simplex shares summing to 1 (ActionLayout.Dim)
	LogProb float64   // log density of Env under the policy
	Value   float64   // the critic's value of the observation
}

// NewAction returns an Action sized for p.
func (p *Policy) NewAction() *Action {
	return &Action{
		Input:  make([]float64, p.Spec.Obs.Dim()),
		Latent: make([]float64, p.Spec.Action.LatentDim()),
		Env:    make([]float64, p.Spec.Action.Dim()),
	}
}

// Act samples an action for the raw observation obs into out. It does not
// update the normaliser (see Normalizer.Observe).
func (p *Policy) Act(obs []float64, r *rand.Rand, out *Action) {
	mean := p.forward(obs, out)
	// z_k = mu_k + sigma_k eps_k, eps_k ~ N(0, 1)
	for k, m := range mean {
		out.Latent[k] = m + math.Exp(p.LogStd[k])*r.NormFloat64()
	}
	p.finish(mean, out)
}

// Mean writes the deterministic action for obs into out: the latent mean,
// and for Simplex segments the shares at the mean logits. For deployment
// and evaluation.
func (p *Policy) Mean(obs []float64, out *Action) {
	mean := p.forward(obs, out)
	copy(out.Latent, mean)
	p.finish(mean, out)
}

// Value returns the critic's value of the raw observation obs.
func (p *Policy) Value(obs []float64) float64 {
	p.Norm.Normalize(obs, p.in)
	if p.Critic == nil {
		return p.Actor.Forward(p.ta, p.in)[p.Spec.Action.LatentDim()]
	}
	return p.Critic.Forward(p.tc, p.in)[0]
}

// forward normalises obs into out.Input, runs the networks, sets out.Value
// and returns the latent means (a slice of the actor's tape).
func (p *Policy) forward(obs []float64, out *Action) []float64 {
	p.Norm.Normalize(obs, out.Input)
	lat := p.Spec.Action.LatentDim()
	o := p.Actor.Forward(p.ta, out.Input)
	if p.Critic == nil {
		out.Value = o[lat]
	} else {
		out.Value = p.Critic.Forward(p.tc, out.Input)[0]
	}
	return o[:lat]
}

// finish sets out.LogProb and out.Env from out.Latent.
func (p *Policy) finish(mean []float64, out *Action) {
	out.LogProb = p.logProb(out.Latent, mean)
	p.squash(out.Latent, out.Env)
}

// logProb returns the log density of the action whose latent is z, given
// the latent means: the Gaussian over z minus, per Simplex segment, the
// log-ratio Jacobian (see LogisticNormalLogProb):
//
//	log p = log N(z; mu, sigma) - sum_{simplex segments} sum_k log s_k
func (p *Policy) logProb(z, mean []float64) float64 {
	lp := GaussianLogProb(z, mean, p.LogStd)
	off := 0
	for _, s := range p.Spec.Action.Segments {
		n := s.latent()
		if s.Kind == Simplex {
			lp -= jacobian0(z[off : off+n])
		}
		off += n
	}
	return lp
}

// squash maps latent z to the environment's action env.
func (p *Policy) squash(z, env []float64) {
	zo, eo := 0, 0
	for _, s := range p.Spec.Action.Segments {
		n := s.latent()
		if s.Kind == Simplex {
			Squash(z[zo:zo+n], env[eo:eo+s.Size])
		} else {
			copy(env[eo:eo+n], z[zo:zo+n])
		}
		zo += n
		eo += s.Size
	}
}
