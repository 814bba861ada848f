package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/reward"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/internal/offline/simcluster"
	"github.com/regimentd/regiment/wire"
)

// SoldierEnvConfig configures the Soldier stage's environment.
type SoldierEnvConfig struct {
	Cluster *domains.Config
	// Domains the episode simulates; nil: all of the cluster's. A subset
	// runs a cluster of those domains alone (calls into other domains are
	// dropped), for the single-domain phase of the curriculum.
	Domains []string
	// Scenarios are drawn uniformly at each Reset; each episode starts at a
	// random minute of its scenario's window [Start, Start+Duration-Episode].
	Scenarios []sim.Scenario
	Episode   time.Duration // simulated time per episode; default 3h
	// Randomise perturbs every episode (Perturb): traffic scaling, noise,
	// random events, and the budget's forecast error.
	Randomise bool
	// Commander, when not nil, replaces the stand-in Commander: a
	// commander.Commander running this learned Commander policy (layout
	// commander.ObsLayout of Cluster; frozen, mean action, guards in force)
	// sets every domain's budget and headroom from its directives (see
	// SoldierEnv). It needs every domain (Domains nil). Each env clones it.
	Commander *rl.Policy
	// Recorder, when not nil, gives each domain's Soldier its recorder (nil
	// for none), as simcluster.NewPolicy's: a Soldier that records also
	// writes its reasons in full.
	Recorder func(domain string) soldier.Recorder
}

// soldierTerms are the reward terms a Soldier env reports: package reward's
// Soldier terms, then two the env adds to price what the Soldier's own
// terms leave free (reward.Soldier pays lower latency at any cost, and its
// utilisation term is centred on the budget, not on demand):
//
//	churn = -(writes to the group's apps this tick) / (apps of the group)   weight churnWeight
//	cost  = -min(2, domain cores of the targets / domain budget) / 2         weight costWeight
//
// The stand-in budget follows demand, so cost prices over-provisioning
// relative to demand.
var soldierTerms = []string{"adherence", "utilisation", "alignment", "oscillation", "cold_start", "churn", "cost"}

// Weights of the env's own terms.
const (
	churnWeight = 0.5
	costWeight  = 1.0
)

// SoldierEnv is the Soldier stage: the simulator with every domain's
// Soldier acting through the learned policy (one agent per app group of
// every domain, one shared network) against budgets set by a frozen
// stand-in for the Commander.
//
// Each domain's Soldier is a soldier.Soldier, the one the daemons and the
// evaluation run (simcluster.Policy), observing and acting through a
// simcluster.View of the simulation: every step is one soldier.Soldier.Tick,
// so the policy's targets go through soldier.Decide (the rollback ladder,
// the automatic fallback, the mode, the Stabiliser, the operator's pins and
// the Executor's guards) exactly as deployed, and its report is the one a
// Soldier sends. The only difference is where the policy's action comes
// from: the trainer draws it from the features of the input the Soldier's
// next Decide will see (soldier.Soldier.PolicyInput, soldier.Learned.Features)
// and the Soldier's policy sizes with it (soldier.Learned.DecideWith)
// instead of the network's mean. TestSoldierEnvDecidesAsADeployedSoldier
// pins this.
//
// The order of a step is simcluster.Policy's: the Soldiers tick (observe,
// decide, write, report), the simulator steps, and the Commander ticks when
// due, on the Soldiers' reports, before the next Soldier tick; at Reset the
// Soldiers tick once in their fallback (no directive yet) and the Commander
// ticks on those reports, as commander.Run's first tick waits for every
// domain's. An episode of E simulated time is E / tick - 1 steps.
//
// The stand-in Commander's directives, one per domain at every Commander
// tick (term 1, seq counting from 1, TTL the config's directive_ttl),
// carry
//
//	headroom_d = h_d
//	budget_d   = min((1 + h_d) x (1 + m) x demand_d x max(0.5, 1 + e), ceiling_d x C)
//
// with demand_d the demand cores of the domain's last report, h_d the
// domain's headroom as the Forecast Commander sets it (standInHeadroom: the
// domain's own or the commander block's, drawn per episode within [0.5,
// 1.5] of it, else within the spread rule's [MinForecastHeadroom,
// MaxForecastHeadroom]), m the episode's margin in [0, 0.2], e a forecast
// error ~ N(0, sigma), sigma in [0.05, 0.15] per episode, and C the
// cluster's capacity: a Commander that follows demand with a noisy
// forecast, whose budgets bind when a domain outgrows its ceiling or the
// forecast falls short. The floor is left out: it is a guarantee, not a
// spend target, and the utilisation term would otherwise pay a quiet domain
// for spending up to it. Without Randomise, h is the configured headroom
// (the spread rule's midpoint when none), m = 0.1 and e = 0.
//
// With SoldierEnvConfig.Commander the directives come from a real
// commander.Commander instead, fed every Soldier's report (its OnReport)
// and ticking with its own Tick. It starts fresh each episode (no report
// history, no shares in force), as a restarted Commander would.
//
// Each group's reward is reward.Soldier over the group (its worst app's
// p99 and error rate against the domain's SLO, the domain's budget
// utilisation, its apps' oscillations and cold starts), with the domain's
// configured weights, plus the churn and cost terms (soldierTerms); the
// budget is the cores of the directive in force.
type SoldierEnv struct {
	cfg      SoldierEnvConfig
	cluster  *domains.Config // the simulated cluster (a subset with Domains)
	doms     []*envDomain
	spec     Spec
	ratio    int // Soldier ticks per Commander tick
	s        *sim.Sim
	tick     int // Soldier ticks in the episode, Reset's included
	margin   float64
	fcSigma  float64
	r        *rand.Rand
	terms    []float64
	episodeN int
	seq      uint64           // the stand-in's directives
	cmd      *commanderDriver // nil: the stand-in
	before   []int32          // the targets before this step's Soldier ticks
	sc       domains.Scenario // the episode's, after Reset
	traces   map[string][]trace.Series
	// traffic is each scenario's traffic with window-mapped timeseries
	// blocks pinned to their scenario's window (pinWindowPeaks).
	traffic [][]domains.Traffic
}

// envDomain is one domain's Soldier in the env.
type envDomain struct {
	di       int
	cfg      soldier.Config
	l        *soldier.Learned
	pol      *trainerPolicy
	sol      *soldier.Soldier // one per episode
	view     *simcluster.View
	rec      soldier.Recorder      // SoldierEnvConfig.Recorder's, or nil
	obs      soldier.Observation   // the domain after the step, for the reward
	lastUp   []int                 // tick of each app's last scale-up; -1e9 never
	wrote    []int                 // writes per group this step
	osc      []bool                // per app: scaled down this step within the oscillation window of a scale-up
	gin      []reward.SoldierInput // per group: this step's reward input
	headroom float64               // the stand-in's headroom this episode
	demand   float64               // demand cores of the domain's last report
	agent0   int                   // index of the domain's first group among the env's agents
}

// trainerPolicy is a domain's Soldier policy in the env: the learned
// policy sizing with the actions the trainer gave for this tick
// (soldier.Learned.DecideWith).
type trainerPolicy struct {
	l   *soldier.Learned
	act [][]float64 // per group, set by Step
}

// Decide implements soldier.Policy.
func (p *trainerPolicy) Decide(in soldier.Input, out []int32) string {
	return p.l.DecideWith(in, p.act, out)
}

// NewSoldierEnv builds a Soldier env. It does not start an episode.
func NewSoldierEnv(cfg SoldierEnvConfig) (*SoldierEnv, error) {
	if len(cfg.Scenarios) == 0 {
		return nil, fmt.Errorf("soldier env: no scenarios")
	}
	if cfg.Episode <= 0 {
		cfg.Episode = 3 * time.Hour
	}
	cl := cfg.Cluster
	if cfg.Domains != nil {
		sub := *cl
		sub.Domains = nil
		for _, name := range cfg.Domains {
			di := cl.Domain(name)
			if di < 0 {
				return nil, fmt.Errorf("soldier env: unknown domain %q", name)
			}
			sub.Domains = append(sub.Domains, cl.Domains[di])
		}
		cl = &sub
	}
	for _, sc := range cfg.Scenarios {
		if sc.Scenario.Duration < cfg.Episode {
			return nil, fmt.Errorf("soldier env: scenario %q lasts %s, shorter than an episode (%s)", sc.Scenario.Name, sc.Scenario.Duration, cfg.Episode)
		}
	}
	e := &SoldierEnv{cfg: cfg, cluster: cl, ratio: max(1, int(cl.Commander.Tick/cl.Soldier.Tick))}
	for _, sc := range cfg.Scenarios {
		tr, err := pinWindowPeaks(sc, cl.Soldier.Tick)
		if err != nil {
			return nil, fmt.Errorf("soldier env: scenario %q: %w", sc.Scenario.Name, err)
		}
		e.traffic = append(e.traffic, tr)
	}
	if cfg.Commander != nil {
		if cfg.Domains != nil {
			return nil, fmt.Errorf("soldier env: a learned Commander needs every domain, not a subset")
		}
		d, err := newCommanderDriver(e, cfg.Commander.Clone())
		if err != nil {
			return nil, fmt.Errorf("soldier env: %w", err)
		}
		e.cmd = d
	}
	agents := 0
	for di, d := range cl.Domains {
		scfg, err := soldier.NewConfig(cl, d.Name)
		if err != nil {
			return nil, err
		}
		// The learned policy acts through DecideWith with the trainer's
		// actions; the network given here only fixes the layouts.
		pol, err := soldier.NewLearnedPolicy(rand.New(rand.NewPCG(0, 0)), cl.Soldier.StaffingSafety, 0)
		if err != nil {
			return nil, err
		}
		l, err := soldier.NewLearned(pol, scfg)
		if err != nil {
			return nil, err
		}
		n := len(scfg.Apps)
		ed := &envDomain{
			di: di, cfg: scfg, l: l, pol: &trainerPolicy{l: l}, view: simcluster.NewView(cl, di, nil),
			obs:    soldier.Observation{Apps: make([]soldier.AppObservation, n)},
			lastUp: make([]int, n), wrote: make([]int, l.Groups()),
			osc: make([]bool, n), gin: make([]reward.SoldierInput, l.Groups()),
			agent0: agents,
		}
		if cfg.Recorder != nil {
			ed.rec = cfg.Recorder(d.Name)
		}
		e.doms = append(e.doms, ed)
		agents += l.Groups()
	}
	e.spec = Spec{Obs: soldier.LearnedLayout(), Act: soldier.LearnedActions(), Agents: agents, Terms: soldierTerms}
	e.terms = make([]float64, len(soldierTerms))
	return e, nil
}

// Spec implements Env.
func (e *SoldierEnv) Spec() Spec { return e.spec }

// Reset implements Env: a new episode on a random window of a random
// scenario (its demand at those minutes: a window-mapped trace keeps the
// scenario's mapping, pinWindowPeaks), perturbed when Randomise is set.
func (e *SoldierEnv) Reset(r *rand.Rand, obs [][]float64) {
	e.r = r
	bi := r.IntN(len(e.cfg.Scenarios))
	base := e.cfg.Scenarios[bi]
	sc := *base.Scenario
	sc.Traffic = nil
	for _, tr := range e.traffic[bi] { // the scenario's demand at the episode's minutes
		if e.cluster.Domain(tr.Domain) >= 0 {
			sc.Traffic = append(sc.Traffic, tr)
		}
	}
	sc.Events = nil
	slack := int((base.Scenario.Duration - e.cfg.Episode) / time.Minute)
	shift := time.Duration(r.IntN(slack+1)) * time.Minute
	for _, ev := range base.Scenario.Events {
		if ev.Domain != "" && e.cluster.Domain(ev.Domain) < 0 {
			continue
		}
		ev.At -= shift
		if ev.At+2*ev.Ramp+ev.Hold > 0 || ev.Every > 0 {
			sc.Events = append(sc.Events, ev)
		}
	}
	sc.Start = base.Scenario.Start.Add(shift)
	sc.Duration = e.cfg.Episode
	sc.Seed = r.Uint64()
	e.margin, e.fcSigma = 0.1, 0
	for _, d := range e.doms {
		d.headroom = standInHeadroom(e.cluster, d.di, 0.5)
	}
	if e.cfg.Randomise {
		Perturb(&sc, e.cluster, r)
		e.margin = 0.2 * r.Float64()
		e.fcSigma = 0.05 + 0.1*r.Float64()
		for _, d := range e.doms {
			d.headroom = standInHeadroom(e.cluster, d.di, r.Float64())
		}
	}
	s, err := sim.New(e.cluster, &sc, base.Traces)
	if err != nil {
		// Scenarios are validated when loaded; a window outside its trace
		// is a configuration error the caller must see.
		panic(fmt.Sprintf("soldier env: episode of scenario %q from %s: %v", sc.Name, sc.Start.Format(time.RFC3339), err))
	}
	e.s, e.tick, e.seq, e.sc, e.traces = s, 0, 0, sc, base.Traces
	e.episodeN++
	if len(e.before) != len(s.Targets()) {
		e.before = make([]int32, len(s.Targets()))
	}
	for _, d := range e.doms {
		for i := range d.lastUp {
			d.lastUp[i] = -1 << 30
		}
		d.l.Reset()
		d.sol = soldier.New(d.cfg, d.pol, d.view, d.view, e, d.rec)
	}
	if e.cmd != nil {
		e.cmd.reset()
	}
	// The first tick, as simcluster.Policy's: the Soldiers in their
	// fallback, then the Commander on their reports.
	e.tickSoldiers()
	e.tickCommander()
	e.s.Step()
	e.tick++
	e.features(obs)
}

// standInHeadroom is the stand-in Commander's headroom for domain di at
// quantile u in [0, 1] of its range: as the Forecast Commander sets it, the
// domain's own headroom or else the commander block's, times 0.5 + u, or
// else the spread rule's range [MinForecastHeadroom, MaxForecastHeadroom] at
// u. A Soldier is trained on the margins it will be given.
func standInHeadroom(cl *domains.Config, di int, u float64) float64 {
	h := cl.Domains[di].Headroom
	if h <= 0 {
		h = cl.Commander.Headroom
	}
	if h > 0 {
		return h * (0.5 + u)
	}
	return commander.MinForecastHeadroom + (commander.MaxForecastHeadroom-commander.MinForecastHeadroom)*u
}

// tickSoldiers ticks every domain's Soldier at the simulator's time (its
// trainer policy sizing with the actions Step set); their writes go into
// the simulator's targets and their reports to PublishReport.
func (e *SoldierEnv) tickSoldiers() {
	now, t, targets := e.s.Now(), e.s.Telemetry(), e.s.Targets()
	for _, d := range e.doms {
		d.view.Set(t, targets)
		if _, err := d.sol.Tick(context.Background(), now); err != nil {
			// The view and the publisher never fail, nor a Commander's
			// directive intake on directives the env makes.
			panic(fmt.Sprintf("soldier env: domain %s: %v", d.cfg.Domain, err))
		}
	}
}

// PublishReport implements soldier.Publisher: the stand-in keeps the
// domain's demand, and a learned Commander takes the report.
func (e *SoldierEnv) PublishReport(_ context.Context, r wire.DomainReport) error {
	di := e.cluster.Domain(r.Domain)
	e.doms[di].demand = r.DemandCores // doms are in cluster order
	if e.cmd != nil {
		e.cmd.onReport(di, r)
	}
	return nil
}

// tickCommander runs a Commander tick at the simulator's time: the learned
// Commander's when the env has one, else the stand-in's (see SoldierEnv).
// Each domain's Soldier takes its directive through its intake.
func (e *SoldierEnv) tickCommander() {
	if e.cmd != nil {
		e.cmd.tick(e.s.Now())
		return
	}
	now, capacity := e.s.Now(), e.cluster.Cluster.CapacityCores
	e.seq++
	for _, d := range e.doms {
		f := (1 + d.headroom) * (1 + e.margin)
		if e.fcSigma > 0 {
			f *= max(0.5, 1+e.fcSigma*e.r.NormFloat64())
		}
		budget := min(d.demand*f, e.cluster.Domains[d.di].Ceiling*capacity)
		dir := wire.Directive{
			Version: wire.Version, Cluster: d.cfg.Cluster, Domain: d.cfg.Domain, Term: 1, Seq: e.seq, IssuedAt: now,
			TTL: wire.Duration(e.cluster.Commander.DirectiveTTL), Share: budget / capacity, Cores: budget,
			Headroom: min(d.headroom, 1), Policy: "stand-in",
		}
		if ok, why := d.sol.OnDirective(dir, now); !ok {
			panic(fmt.Sprintf("soldier env: the stand-in's directive for %s was refused: %s", d.cfg.Domain, why))
		}
	}
}

// features writes every group's observation for the next Soldier tick:
// the learned policy's features of the input that tick's Decide will see.
func (e *SoldierEnv) features(obs [][]float64) {
	now, t, targets := e.s.Now(), e.s.Telemetry(), e.s.Targets()
	for _, d := range e.doms {
		d.view.Set(t, targets)
		in, err := d.sol.PolicyInput(context.Background(), now)
		if err != nil {
			panic(fmt.Sprintf("soldier env: domain %s: %v", d.cfg.Domain, err))
		}
		d.l.Features(in, obs[d.agent0:d.agent0+d.l.Groups()])
	}
}

// Step implements Env: act (one action per group) sizes the next Soldier
// tick of every domain; the simulator then steps, and the Commander ticks
// when due.
func (e *SoldierEnv) Step(act [][]float64, obs [][]float64, rew []float64) (bool, Outcome) {
	copy(e.before, e.s.Targets())
	for _, d := range e.doms {
		d.pol.act = act[d.agent0 : d.agent0+d.l.Groups()]
	}
	e.tickSoldiers()
	actions := e.countWrites()
	e.s.Step()
	e.tick++
	if e.tick%e.ratio == 0 {
		e.tickCommander()
	}
	out := e.reward(rew)
	out.Actions = actions
	e.features(obs)
	return e.s.Done(), out
}

// countWrites notes this step's writes per group and the scale-downs
// within the oscillation window of a scale-up, and returns the writes: a
// write is a changed target, since the Executor suppresses no-ops.
func (e *SoldierEnv) countWrites() int {
	targets := e.s.Targets()
	osc := int(reward.OscillationWindow / e.cluster.Soldier.Tick)
	actions := 0
	for _, d := range e.doms {
		clear(d.wrote)
		clear(d.osc)
		first := d.view.First()
		for i, a := range d.cfg.Apps {
			prev, cur := e.before[first+i], targets[first+i]
			if cur == prev {
				continue
			}
			d.wrote[a.Group]++
			actions++
			switch {
			case cur > prev:
				d.lastUp[i] = e.tick
			case e.tick-d.lastUp[i] <= osc:
				d.osc[i] = true // scaled down within the window of a scale-up
			}
		}
	}
	return actions
}

// reward writes each group's reward for the step into rew and returns the
// step's outcome but its actions: the domains as observed after the step,
// their budgets the cores of the directive in force.
func (e *SoldierEnv) reward(rew []float64) Outcome {
	clear(e.terms)
	t, targets := e.s.Telemetry(), e.s.Targets()
	breached, apps, used := 0, 0, 0.0
	for _, d := range e.doms {
		dt := &t.Domains[d.di]
		breached += int(dt.BreachedApps)
		apps += len(d.cfg.Apps)
		used += dt.CoresUsed
		d.view.Set(t, targets)
		_ = d.view.Observe(context.Background(), &d.obs) // a simcluster.View never fails
		budget := 0.0
		if dir, ok := d.sol.Directive(); ok && !dir.Expired(e.s.Now()) {
			budget = dir.Cores
		}
		e.domainReward(d, budget, rew)
	}
	for k := range e.terms {
		e.terms[k] /= float64(e.spec.Agents)
	}
	out := Outcome{Terms: e.terms, Compliance: 1 - float64(breached)/float64(max(apps, 1))}
	hours := e.cluster.Soldier.Tick.Hours()
	if cph := e.cluster.Cluster.CostPerCoreHour; cph > 0 {
		out.CostCoreHours = t.Cluster.CostPerHour / cph * hours
	} else {
		out.CostCoreHours = used * hours
	}
	return out
}

// domainReward writes the rewards of d's groups into rew and adds their
// terms to e.terms (soldierTerms).
func (e *SoldierEnv) domainReward(d *envDomain, budget float64, rew []float64) {
	dUsed := 0.0
	for i, a := range d.cfg.Apps {
		dUsed += float64(d.obs.Apps[i].Replicas) * a.CPU
	}
	cost := -min(2, dUsed/max(budget, 1e-9)) / 2
	for g := range d.gin {
		d.gin[g] = reward.SoldierInput{SLO: d.cfg.SLO, ErrorBudget: d.cfg.ErrorBudget, BudgetCores: budget, UsedCores: dUsed}
	}
	for i, a := range d.cfg.Apps {
		in, o := &d.gin[a.Group], &d.obs.Apps[i]
		in.P99, in.ErrorRate = max(in.P99, o.P99), max(in.ErrorRate, o.ErrorRate)
		in.Apps++
		in.Ready += int(o.Ready)
		in.Replicas += int(o.Ready + o.Starting + o.Pending)
		if d.osc[i] {
			in.Oscillations++
		}
	}
	for g := range d.gin {
		b := reward.Soldier(d.gin[g], d.cfg.Reward)
		churn := -float64(d.wrote[g]) / float64(max(d.gin[g].Apps, 1))
		rew[d.agent0+g] = b.Total + churnWeight*churn + costWeight*cost
		e.terms[0] += b.Adherence
		e.terms[1] += b.Utilisation
		e.terms[2] += b.Alignment
		e.terms[3] += b.Oscillation
		e.terms[4] += b.ColdStart
		e.terms[5] += churn
		e.terms[6] += cost
	}
}
