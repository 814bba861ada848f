package soldier

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/infile"
)

// LearnedLayoutVersion is the version of the learned Soldier's observation
// layout; a checkpoint of another version is refused on load. Version 2
// sizes on SqrtStaffing's staffing rule (version 1 sized at a target
// utilisation and boosted apps at risk).
const LearnedLayoutVersion = 2

// learnedFeatures is one app group's observation, in order. Ratios are
// clipped so that no feature leaves a small range. A feature that is
// constant in training is normalised with zero variance and would blow up
// when it moves in deployment, so nothing deployment-specific that training
// holds fixed (such as the configured target utilisation) is a feature.
// "Desired" is SqrtStaffing's size for the directive's headroom.
var learnedFeatures = []string{
	"priority_p0", "priority_p1", "priority_p2", "priority_p3", // domain tier, one-hot (P3 and below share the last)
	"slo_log10",          // log10 of the domain's p99 objective in seconds
	"error_budget_log10", // log10 of the domain's error budget (-4 when none)
	"group_share",        // apps of the group / apps of the domain, (0, 1]
	"group_size_log",     // ln(1 + apps of the group)
	"demand_over_budget", // domain demand (Desired's cores) / budget, [0, 4]; 0 with no budget
	"budget_binds",       // 1 when a budget is in force, else 0
	"directive_headroom", // the directive's headroom, [0, 1]
	"budget_slack",       // (budget - cores of the current targets) / budget, [-1, 1]; 0 with no budget
	"p99_over_slo_max",   // over the group's apps, [0, 5]
	"p99_over_slo_mean",  // [0, 5]
	"domain_p99_over_slo",
	"error_over_budget_max",         // error rate / error budget, max over the group, [0, 5]
	"cpu_util_mean", "cpu_util_max", // [0, 1]
	"rps_trend",                                   // group RPS / its moving average - 1, [-1, 1]
	"load",                                        // group RPS / ready capacity, [0, 3]
	"ready_frac", "starting_frac", "pending_frac", // of the group's replicas
	"desired_over_current_log", // ln(Desired / current targets) over the group, [-2, 2]
	"time_of_day_sin", "time_of_day_cos",
}

// LearnedLayout is the learned Soldier's observation layout per app group.
func LearnedLayout() rl.Layout {
	return rl.ScalarLayout("soldier", LearnedLayoutVersion, learnedFeatures)
}

// LearnedActions is the learned Soldier's action per app group: two
// Gaussian values squashed where applied (see Knobs).
func LearnedActions() rl.ActionLayout {
	return rl.ActionLayout{Segments: []rl.Segment{
		{Name: "headroom", Kind: rl.Gaussian, Size: 1},
		{Name: "staffing_safety", Kind: rl.Gaussian, Size: 1},
	}}
}

// Knob ranges: a group's action is squashed into them.
const (
	HeadroomSpan = 0.2 // a group's headroom is the directive's plus [-HeadroomSpan, HeadroomSpan], at least 0
	SafetyMax    = 8.0 // a group's staffing safety (beta), [0, SafetyMax]
)

// Knobs are one app group's sizing parameters, decoded from the policy's
// action: SqrtStaffing's staffing rule (Need, Desired) with the group's
// own headroom and staffing safety.
type Knobs struct {
	Headroom float64 // added to the directive's headroom, [-HeadroomSpan, HeadroomSpan]; the sum is at least 0
	Safety   float64 // beta of square-root staffing, [0, SafetyMax]
}

// DecodeKnobs squashes an action (LearnedActions' two values) into Knobs:
//
//	head   = HeadroomSpan tanh(a0)
//	safety = SafetyMax sigmoid(a1)
func DecodeKnobs(a []float64) Knobs {
	return Knobs{Headroom: HeadroomSpan * math.Tanh(a[0]), Safety: SafetyMax * rl.Sigmoid(a[1])}
}

// warmKnobs are the latent values DecodeKnobs maps to no extra headroom and
// the configured staffing safety (clamped inside the range): SqrtStaffing's
// sizing.
func warmKnobs(safety float64) [2]float64 {
	return [2]float64{0, rl.Logit(min(max(safety/SafetyMax, 0.01), 0.99))}
}

// NewLearnedPolicy returns an untrained learned-Soldier network (two hidden
// layers of 32 tanh units, actor and critic) warm-started on the
// SqrtStaffing policy: the output weights are zero and the biases make the
// mean action no extra headroom and a staffing safety of safety (the
// config's staffing_safety), so the untrained policy sizes exactly as
// SqrtStaffing does. logStd is the initial log standard deviation of every
// action dimension.
func NewLearnedPolicy(r *rand.Rand, safety, logStd float64) (*rl.Policy, error) {
	spec := rl.DefaultSpec(LearnedLayout(), LearnedActions())
	spec.Actor = rl.Arch{Hidden: []int{32, 32}, Activations: []rl.Activation{rl.Tanh, rl.Tanh}}
	spec.Critic = spec.Actor
	spec.InitLogStd = logStd
	p, err := rl.NewPolicy(spec, r)
	if err != nil {
		return nil, err
	}
	w, b := p.Actor.Layer(p.Actor.Params(), len(p.Actor.Activations())-1)
	clear(w)
	k := warmKnobs(safety)
	copy(b, k[:])
	return p, nil
}

// span is one app group: apps [first, first+n) of the domain.
type span struct{ first, n int }

// Learned is the learned Soldier policy: one network shared by every domain
// and app group, conditioned on the domain (tier, SLO, error budget, group
// size). Each tick it computes every group's features (Features), takes the
// network's mean action per group and sizes the group's apps as
// SqrtStaffing does (Desired: square-root staffing within the HPA's rule,
// no boost for an app at risk, whose ready replicas it keeps) with the
// group's own headroom and staffing safety, then fits the sizes into the
// budget with Distribute. Hysteresis is the Soldier's Stabiliser, after it,
// as after any policy.
//
// A Learned keeps per-group state (the RPS moving average behind
// rps_trend): use one per Soldier. Decide does not allocate. Not safe for
// concurrent use.
type Learned struct {
	pol     *rl.Policy
	cfg     Config
	groups  []span
	ema     []float64   // per group: RPS moving average; < 0 before the first tick
	feat    [][]float64 // per group: features of the last Features call
	acts    [][]float64 // per group: actions of the last Decide
	tape    *rl.Tape    // the actor's forward pass
	desired []int32
	risky   []bool
	knobs   []Knobs // per group: the knobs of the last Targets call
}

// rpsAlpha is the weight of a new tick in the RPS moving average: at the
// 10 s Soldier tick the average spans some 3 minutes.
const rpsAlpha = 0.05

// NewLearned returns the learned Soldier of cfg's domain acting with p, whose
// observation and action layouts must be LearnedLayout and LearnedActions.
// p is used for inference only (Mean); its normaliser is not updated.
func NewLearned(p *rl.Policy, cfg Config) (*Learned, error) {
	if err := rl.CheckLayout(p.Spec.Obs, LearnedLayout()); err != nil {
		return nil, fmt.Errorf("learned soldier: %w", err)
	}
	if !p.Spec.Action.Equal(LearnedActions()) {
		return nil, fmt.Errorf("learned soldier: checkpoint action layout %v, want %v", p.Spec.Action.Segments, LearnedActions().Segments)
	}
	l := &Learned{pol: p, cfg: cfg, tape: p.Actor.NewTape()}
	for i, a := range cfg.Apps {
		if i == 0 || a.Group != cfg.Apps[i-1].Group {
			l.groups = append(l.groups, span{first: i})
		}
		l.groups[len(l.groups)-1].n++
	}
	dim, g := LearnedLayout().Dim(), len(l.groups)
	l.ema = make([]float64, g)
	l.feat, l.acts = make([][]float64, g), make([][]float64, g)
	for k := range g {
		l.ema[k] = -1
		l.feat[k] = make([]float64, dim)
		l.acts[k] = make([]float64, LearnedActions().Dim())
	}
	l.desired, l.risky = make([]int32, len(cfg.Apps)), make([]bool, len(cfg.Apps))
	l.knobs = make([]Knobs, g)
	return l, nil
}

// LoadLearned reads a learned-Soldier checkpoint (rl.Policy.Save) from path
// and returns the policy for cfg's domain. A checkpoint of another layout
// version is refused.
func LoadLearned(path string, cfg Config) (*Learned, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	defer f.Close()
	p, err := rl.Load(f, LearnedLayout())
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	l, err := NewLearned(p, cfg)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	return l, nil
}

// Groups is the number of app groups, the policy's agents.
func (l *Learned) Groups() int { return len(l.groups) }

// GroupKnobs is group g's knobs as of the last Decide or Targets.
func (l *Learned) GroupKnobs(g int) Knobs { return l.knobs[g] }

// Policy is the network the Learned acts with.
func (l *Learned) Policy() *rl.Policy { return l.pol }

// Reset forgets the per-group state (the RPS moving averages), as at a
// Soldier's start.
func (l *Learned) Reset() {
	for k := range l.ema {
		l.ema[k] = -1
	}
}

// clamp limits x to [lo, hi], NaN to lo.
func clamp(x, lo, hi float64) float64 {
	if !(x >= lo) {
		return lo
	}
	return min(x, hi)
}

// Features writes each group's observation (LearnedLayout) for in into
// obs[g] and advances the per-group RPS moving averages: call it once per
// tick. It does not allocate.
func (l *Learned) Features(in Input, obs [][]float64) {
	c := &l.cfg
	slo := in.SLO
	if slo <= 0 {
		slo = c.SLO
	}
	in.SLO = slo
	dom := domainFeatures{ebLog: -4}
	for i := range in.Apps {
		a, o := &in.Apps[i], &in.Obs.Apps[i]
		var n int32
		if in.want != nil { // the Soldier worked Desired out once this tick (needs)
			n = in.want[i]
		} else {
			n, _ = Desired(a, o, &in)
		}
		l.desired[i] = n // scratch until Targets: read by the group loop below
		dom.demand += float64(n) * a.CPU
		dom.used += float64(o.Replicas) * a.CPU
	}
	dom.binds = in.BudgetCores > 0 && !math.IsInf(in.BudgetCores, 1)
	if !in.Now.IsZero() {
		h, m, s := in.Now.Clock()
		ang := 2 * math.Pi * float64(h*3600+m*60+s) / 86400
		dom.tod0, dom.tod1 = math.Sin(ang), math.Cos(ang)
	}
	if c.ErrorBudget > 0 {
		dom.ebLog = math.Log10(c.ErrorBudget)
	}
	if slo > 0 {
		dom.p99 = clamp(in.Obs.P99/slo, 0, 5)
	}
	for g, sp := range l.groups {
		l.groupFeatures(obs[g], g, sp, &in, &dom)
	}
}

// domainFeatures are the figures of a domain every group's features read.
type domainFeatures struct {
	demand, used float64 // cores of Desired's sizes and of the current targets
	binds        bool    // a budget is in force
	tod0, tod1   float64 // time of day, sin and cos
	ebLog        float64 // log10 of the error budget, -4 when none
	p99          float64 // the domain's p99 over its SLO, [0, 5]
}

// groupFeatures writes group g's features (apps sp of in) into f and
// advances its RPS moving average.
func (l *Learned) groupFeatures(f []float64, g int, sp span, in *Input, dom *domainFeatures) {
	c, slo := &l.cfg, in.SLO
	var p99Max, p99Sum, errMax, cpuSum, cpuMax, rps, capReady float64
	var ready, starting, pending, cur, want int32
	for i := sp.first; i < sp.first+sp.n; i++ {
		a, o := &in.Apps[i], &in.Obs.Apps[i]
		r := 0.0
		if slo > 0 {
			r = o.P99 / slo
		}
		p99Max, p99Sum = max(p99Max, r), p99Sum+r
		if c.ErrorBudget > 0 {
			errMax = max(errMax, o.ErrorRate/c.ErrorBudget)
		} else {
			errMax = max(errMax, o.ErrorRate*100)
		}
		cpuSum, cpuMax = cpuSum+o.CPUUtil, max(cpuMax, o.CPUUtil)
		rps += o.Arrivals() // what the app is sized for: its callers' calls when more
		capReady += float64(o.Ready) * a.Capacity
		ready, starting, pending = ready+o.Ready, starting+o.Starting, pending+o.Pending
		cur += o.Replicas
		want += l.desired[i]
	}
	if l.ema[g] < 0 {
		l.ema[g] = rps
	} else {
		l.ema[g] += rpsAlpha * (rps - l.ema[g])
	}
	nf := float64(sp.n)
	for k := range 4 {
		f[k] = 0
	}
	f[min(max(c.Priority, 0), 3)] = 1
	f[4] = math.Log10(max(slo, 1e-3))
	f[5] = dom.ebLog
	f[6] = nf / float64(len(in.Apps))
	f[7] = math.Log1p(nf)
	f[8], f[9], f[11] = 0, 0, 0
	if dom.binds {
		f[8] = clamp(dom.demand/in.BudgetCores, 0, 4)
		f[9] = 1
		f[11] = clamp((in.BudgetCores-dom.used)/in.BudgetCores, -1, 1)
	}
	f[10] = in.Headroom
	f[12] = clamp(p99Max, 0, 5)
	f[13] = clamp(p99Sum/nf, 0, 5)
	f[14] = dom.p99
	f[15] = clamp(errMax, 0, 5)
	f[16] = clamp(cpuSum/nf, 0, 1)
	f[17] = clamp(cpuMax, 0, 1)
	f[18] = 0
	if l.ema[g] > 0 {
		f[18] = clamp(rps/l.ema[g]-1, -1, 1)
	}
	f[19] = 0
	if capReady > 0 {
		f[19] = clamp(rps/capReady, 0, 3)
	} else if rps > 0 {
		f[19] = 3
	}
	all := float64(ready + starting + pending)
	f[20], f[21], f[22] = 1, 0, 0
	if all > 0 {
		f[20], f[21], f[22] = float64(ready)/all, float64(starting)/all, float64(pending)/all
	}
	f[23] = clamp(math.Log(float64(max(want, 1))/float64(max(cur, 1))), -2, 2)
	f[24], f[25] = dom.tod0, dom.tod1
}

// Targets sizes every app from its group's action act[g] (LearnedActions,
// decoded by DecodeKnobs) with Desired, the group's headroom and staffing
// safety in place of in's, and fits the result into the budget
// (Distribute), writing into out. It does not allocate.
func (l *Learned) Targets(in Input, act [][]float64, out []int32) Distribution {
	if in.SLO <= 0 {
		in.SLO = l.cfg.SLO
	}
	for g, sp := range l.groups {
		k := DecodeKnobs(act[g])
		l.knobs[g] = k
		gin := in
		gin.Headroom, gin.Safety = max(0, in.Headroom+k.Headroom), k.Safety
		for i := sp.first; i < sp.first+sp.n; i++ {
			l.desired[i], l.risky[i] = Desired(&in.Apps[i], &in.Obs.Apps[i], &gin)
		}
	}
	return Distribute(in.Apps, l.desired, l.risky, in.BudgetCores, out)
}

// Decide implements Policy: features, the network's mean action per group
// (the actor alone: the critic is for training), then Targets. It does not
// allocate.
func (l *Learned) Decide(in Input, out []int32) string {
	l.Features(in, l.feat)
	// The action layout is Gaussian only: the action is the actor's mean,
	// every group's in one batched pass.
	l.pol.LatentMeans(l.tape, l.feat, l.acts)
	return l.DecideWith(in, l.acts, out)
}

// DecideWith is Decide with the actions act (one per group, LearnedActions)
// given instead of the network's: Targets, and the reason. The trainer
// (train.SoldierEnv) decides through it with the actions it draws for the
// features of the same input (Features), so that a Soldier in training
// decides as a deployed one does. It does not allocate.
func (l *Learned) DecideWith(in Input, act [][]float64, out []int32) string {
	d := l.Targets(in, act, out)
	switch {
	case d.Over:
		return "learned: demand over budget: at-risk apps first, the rest pro rata"
	case d.Risky > 0:
		return "learned: sized per group within budget; apps at risk keep their ready replicas"
	}
	return "learned: sized per group within budget"
}
