package commander

import (
	"errors"
	"fmt"
	"math"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/infile"
)

// MaxHeadroom is the largest headroom a learned policy can ask for: its
// headroom head is squashed onto [0, MaxHeadroom].
const MaxHeadroom = 0.5

// minLatentShare bounds shares away from 0, and minLatentLevel urgency and
// headroom away from 0 and 1, when a heuristic action is turned into logits
// (ActionLatent): log(0) has no latent, and a target logit of -9 for an
// urgency of 0 would dominate a regression for no effect.
const (
	minLatentShare = 1e-4
	minLatentLevel = 0.01
)

// ObsLayout is the rl observation layout of cfg's Commander: one scalar per
// name of Layout(cfg), version ObsVersion. Checkpoints record it.
func ObsLayout(cfg *domains.Config) rl.Layout {
	return rl.ScalarLayout("commander", ObsVersion, Layout(cfg))
}

// ActionLayout is the learned Commander's action for n domains, a residual
// on the Forecast heuristic's action (residual policy learning: Silver et
// al. 2018, Johannink et al. 2019): a Simplex segment "shares_residual" of
// n+1 values (domains then reserve) whose additive log-ratios are added to
// the heuristic's, and two Gaussian segments of n values, "urgency_residual"
// and "headroom_residual", added to the logits of the heuristic's urgency
// and headroom / MaxHeadroom. A zero residual (uniform shares, zero
// Gaussians) is the heuristic's action.
func ActionLayout(n int) rl.ActionLayout {
	return rl.ActionLayout{Segments: []rl.Segment{
		{Name: "shares_residual", Kind: rl.Simplex, Size: n + 1},
		{Name: "urgency_residual", Kind: rl.Gaussian, Size: n},
		{Name: "headroom_residual", Kind: rl.Gaussian, Size: n},
	}}
}

// ApplyResidual turns a, the heuristic's action, into the learned action
// for the rl action env (laid out as ActionLayout(n)):
//
//	shares:   log(s_i / s_reserve) = log(h_i / h_reserve) + log(e_i / e_reserve), then the additive logistic map
//	urgency:  sigmoid(logit(u_h) + e_urgency_i)
//	headroom: MaxHeadroom sigmoid(logit(h_h / MaxHeadroom) + e_headroom_i)
//
// with the heuristic's values clipped as in ActionLatent. It does not
// allocate.
func ApplyResidual(env []float64, a *Action) {
	n := len(a.Shares)
	// Shares: add the log-ratios against the reserve, then softmax with the
	// reserve's logit at 0 (max-subtracted for stability).
	lr := math.Log(clamp(a.Reserve, minLatentShare, 1))
	le := math.Log(math.Max(env[n], math.SmallestNonzeroFloat64))
	top := 0.0
	for i := range n {
		z := math.Log(clamp(a.Shares[i], minLatentShare, 1)) - lr + math.Log(math.Max(env[i], math.SmallestNonzeroFloat64)) - le
		a.Shares[i] = z
		top = math.Max(top, z)
	}
	sum := math.Exp(-top)
	for i := range n {
		a.Shares[i] = math.Exp(a.Shares[i] - top)
		sum += a.Shares[i]
	}
	for i := range n {
		a.Shares[i] /= sum
	}
	a.Reserve = math.Exp(-top) / sum
	for i := range n {
		a.Urgency[i] = rl.Sigmoid(rl.Logit(clamp(a.Urgency[i], minLatentLevel, 1-minLatentLevel)) + env[n+1+i])
		a.Headroom[i] = MaxHeadroom * rl.Sigmoid(rl.Logit(clamp(a.Headroom[i]/MaxHeadroom, minLatentLevel, 1-minLatentLevel))+env[2*n+1+i])
	}
}

// ActionLatent writes into z (3n values) the logits of a: share logits
// log(s_i / reserve) and the logits of urgency and headroom / MaxHeadroom.
// Shares and reserve are first clipped to at least 1e-4, urgency and
// headroom / MaxHeadroom into [0.01, 0.99], so that the latent is finite
// and moderate.
func ActionLatent(a *Action, z []float64) {
	n := len(a.Shares)
	r := math.Log(clamp(a.Reserve, minLatentShare, 1))
	for i, s := range a.Shares {
		z[i] = math.Log(clamp(s, minLatentShare, 1)) - r
	}
	for i := range n {
		z[n+i] = rl.Logit(clamp(a.Urgency[i], minLatentLevel, 1-minLatentLevel))
		z[2*n+i] = rl.Logit(clamp(a.Headroom[i]/MaxHeadroom, minLatentLevel, 1-minLatentLevel))
	}
}

// Learned is a Commander Policy backed by a trained rl.Policy: the
// observation is the Builder's Vector (the checkpoint's layout is
// ObsLayout of the config), the action the Forecast heuristic's with the
// policy's mean residual applied (ApplyResidual). Guards still apply after
// it. Decide does not allocate; a Learned is not safe for concurrent use
// (the rl.Policy's scratch buffers).
type Learned struct {
	p      *rl.Policy
	act    *rl.Action
	base   Forecast
	n      int
	reason string
}

// NewLearned wraps p for cfg's domains. It fails when p's observation layout
// is not ObsLayout(cfg) or its action layout not ActionLayout for cfg's
// domain count.
func NewLearned(p *rl.Policy, cfg *domains.Config) (*Learned, error) {
	n := len(cfg.Domains)
	if err := rl.CheckLayout(p.Spec.Obs, ObsLayout(cfg)); err != nil {
		return nil, fmt.Errorf("learned commander: %w%s", err, domainHint(p.Spec.Obs, cfg))
	}
	if want := ActionLayout(n); !p.Spec.Action.Equal(want) {
		return nil, fmt.Errorf("learned commander: the checkpoint's action layout %v is not the one for %d domains %v", p.Spec.Action.Segments, n, want.Segments)
	}
	reason := "learned policy"
	if pv := p.Provenance; pv.Stage != "" {
		reason = fmt.Sprintf("learned policy (stage %s, %d steps)", pv.Stage, pv.Steps)
	}
	return &Learned{p: p, act: p.NewAction(), n: n, reason: reason, base: Forecast{ReserveMin: cfg.Commander.ReserveMin, Headroom: cfg.Commander.Headroom}}, nil
}

// LoadLearned reads the checkpoint at path and wraps it for cfg (see
// NewLearned). A checkpoint trained for other domains or an older
// observation layout is an error naming the difference.
func LoadLearned(path string, cfg *domains.Config) (*Learned, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	defer f.Close()
	p, err := rl.Load(f, ObsLayout(cfg))
	if err != nil {
		if errors.Is(err, rl.ErrLayoutMismatch) {
			return nil, fmt.Errorf("load checkpoint %q: %w (the config has %d domains and observation layout v%d)", path, err, len(cfg.Domains), ObsVersion)
		}
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	l, err := NewLearned(p, cfg)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	return l, nil
}

// Policy returns the wrapped rl policy.
func (l *Learned) Policy() *rl.Policy { return l.p }

// Decide implements Policy: the heuristic's action with the policy's mean
// residual.
func (l *Learned) Decide(o *Observation, a *Action) string {
	l.p.Mean(o.Vector, l.act)
	l.base.WithResidual(o, l.act.Env, a)
	return l.reason
}

// WithResidual writes the heuristic's action for o with the residual env
// (laid out as ActionLayout) applied into a (see ApplyResidual), without
// allocating: what a Learned policy decides, for a trainer that drives the
// Commander with sampled residuals.
func (p *Forecast) WithResidual(o *Observation, env []float64, a *Action) {
	p.allocate(o, a)
	ApplyResidual(env, a)
}

// domainHint explains a layout mismatch by domain count when that is the
// cause.
func domainHint(ckpt rl.Layout, cfg *domains.Config) string {
	// Per domain: the domain features and one call-matrix row; plus 8 shared.
	n := len(cfg.Domains)
	for k := 1; k <= 64; k++ {
		if len(ckpt.Features) == k*len(domainFeatures)+8+k*k && k != n {
			return fmt.Sprintf(" (the checkpoint is for %d domains, the config has %d)", k, n)
		}
	}
	return ""
}
