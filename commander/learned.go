package commander

import (
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/rl"
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

// ActionLayout is the learned Commander's action for n domains: a Simplex
// segment "shares" of n+1 values (the domains' shares then the reserve,
// summing to 1) and two Gaussian segments of n values, "urgency" (squashed
// by the logistic function onto [0, 1]) and "headroom" (squashed onto [0,
// MaxHeadroom]).
func ActionLayout(n int) rl.ActionLayout {
	return rl.ActionLayout{Segments: []rl.Segment{
		{Name: "shares", Kind: rl.Simplex, Size: n + 1},
		{Name: "urgency", Kind: rl.Gaussian, Size: n},
		{Name: "headroom", Kind: rl.Gaussian, Size: n},
	}}
}

// ApplyAction writes the Commander action for the rl action env (laid out as
// ActionLayout(n)) into a: shares and reserve as they are, urgency and
// headroom squashed. It does not allocate.
func ApplyAction(env []float64, a *Action) {
	n := len(a.Shares)
	copy(a.Shares, env[:n])
	a.Reserve = env[n]
	for i := range n {
		a.Urgency[i] = sigmoid(env[n+1+i])
		a.Headroom[i] = MaxHeadroom * sigmoid(env[2*n+1+i])
	}
}

// ActionLatent writes into z (ActionLayout(n).LatentDim() = 3n values) the
// latent action whose deterministic squash is a, the inverse of ApplyAction
// after Policy.Mean: share logits log(s_i / reserve) and the logits of
// urgency and headroom / MaxHeadroom. Shares and reserve are first clipped
// to at least 1e-4, urgency and headroom / MaxHeadroom into [0.01, 0.99], so
// that the latent is finite and moderate. Behaviour cloning regresses the actor's means onto
// these targets.
func ActionLatent(a *Action, z []float64) {
	n := len(a.Shares)
	r := math.Log(clamp(a.Reserve, minLatentShare, 1))
	for i, s := range a.Shares {
		z[i] = math.Log(clamp(s, minLatentShare, 1)) - r
	}
	for i := range n {
		z[n+i] = logit(clamp(a.Urgency[i], minLatentLevel, 1-minLatentLevel))
		z[2*n+i] = logit(clamp(a.Headroom[i]/MaxHeadroom, minLatentLevel, 1-minLatentLevel))
	}
}

// Learned is a Commander Policy backed by a trained rl.Policy: the
// observation is the Builder's Vector (the checkpoint's layout is
// ObsLayout of the config), the action the policy's mean (deterministic)
// mapped by ApplyAction. Guards still apply after it. Decide does not
// allocate; a Learned is not safe for concurrent use (the rl.Policy's
// scratch buffers).
type Learned struct {
	p      *rl.Policy
	act    *rl.Action
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
	return &Learned{p: p, act: p.NewAction(), n: n, reason: reason}, nil
}

// LoadLearned reads the checkpoint at path and wraps it for cfg (see
// NewLearned). A checkpoint trained for other domains or an older
// observation layout is an error naming the difference.
func LoadLearned(path string, cfg *domains.Config) (*Learned, error) {
	f, err := os.Open(path)
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

// Decide implements Policy with the policy's mean action.
func (l *Learned) Decide(o *Observation, a *Action) string {
	l.p.Mean(o.Vector, l.act)
	ApplyAction(l.act.Env, a)
	return l.reason
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

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func logit(p float64) float64 { return math.Log(p / (1 - p)) }
