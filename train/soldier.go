package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/reward"
	"github.com/regimentd/regiment/rl"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/soldier"
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
// stand-in for the Commander, and the Soldier's Stabiliser and the
// Executor's safety rules in force after it, as a Soldier applies them.
//
// The directives, reset every Commander tick, carry
//
//	headroom_d = h_d
//	budget_d   = min((1 + h_d) x (1 + m) x demand_d x max(0.5, 1 + e), ceiling_d x C)
//
// with demand_d the cores the domain's apps want (what Soldiers report), h_d
// the domain's headroom as the Forecast Commander sets it (standInHeadroom:
// the domain's own or the commander block's, drawn per episode within
// [0.5, 1.5] of it, else within the spread rule's [MinForecastHeadroom,
// MaxForecastHeadroom]), m the episode's margin in [0, 0.2], e a forecast
// error ~ N(0, sigma), sigma in [0.05, 0.15] per episode, and C the
// cluster's capacity: a Commander that follows demand with a noisy
// forecast, whose budgets bind when a domain outgrows its ceiling or the
// forecast falls short. The floor is left out: it is a guarantee, not a
// spend target, and the utilisation term would otherwise pay a quiet domain
// for spending up to it. Without Randomise, h is the configured headroom
// (the spread rule's midpoint when none), m = 0.1 and e = 0.
//
// With SoldierEnvConfig.Commander the budgets come from a real
// commander.Commander instead: every Soldier tick each domain's report
// (wire.DomainReport with the fields a Soldier sends, built from the env's
// observation) goes to its OnReport, and every Commander tick its Tick
// publishes one directive per domain, which sets
//
//	budget_d = directive Cores (share x capacity), headroom_d = directive Headroom
//
// The Commander starts fresh each episode (no report history, no shares in
// force), as a restarted Commander would.
//
// Each group's reward is reward.Soldier over the group (its worst app's
// p99 and error rate against the domain's SLO, the domain's budget
// utilisation, its apps' oscillations and cold starts), with the domain's
// configured weights, plus the churn and cost terms (soldierTerms).
type SoldierEnv struct {
	cfg      SoldierEnvConfig
	cluster  *domains.Config // the simulated cluster (a subset with Domains)
	doms     []*envDomain
	spec     Spec
	ratio    int // Soldier ticks per Commander tick
	s        *sim.Sim
	tick     int
	margin   float64
	fcSigma  float64
	r        *rand.Rand
	terms    []float64
	episodeN int
	cmd      *commanderDriver // nil: the stand-in
	// traffic is each scenario's traffic with window-mapped timeseries
	// blocks pinned to their scenario's window (pinWindowPeaks).
	traffic [][]domains.Traffic
}

// envDomain is one domain's Soldier in the env.
type envDomain struct {
	di, first int // domain index and first app id in the simulated cluster
	cfg       soldier.Config
	l         *soldier.Learned
	stab      soldier.Stabiliser // holds the policy's small and short-lived changes, as a Soldier's
	need      []float64          // per app: Need at the directive's headroom, what the Stabiliser judges
	exec      *soldier.Executor
	obs       soldier.Observation
	in        soldier.Input
	proposed  []int32
	guards    []soldier.Guard
	writes    []soldier.Change
	lastUp    []int                 // tick of each app's last scale-up; -1e9 never
	wrote     []int                 // writes per group this step
	osc       []bool                // per app: scaled down this step within the oscillation window of a scale-up
	gin       []reward.SoldierInput // per group: this step's reward input
	budget    float64
	headroom  float64   // the directive's headroom this episode
	agent0    int       // index of the domain's first group among the env's agents
	rpsHist   []float64 // domain RPS per Soldier tick, last 15 min (ring), for reports
	rpsN      int       // ticks in rpsHist, <= len(rpsHist)
	scratch   []float64
	callers   [][]soldier.Caller // per app, its callers
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
	hist := max(1, int(15*time.Minute/cl.Soldier.Tick))
	first := 0
	agents := 0
	for di, d := range cl.Domains {
		scfg, err := soldier.NewConfig(cl, d.Name)
		if err != nil {
			return nil, err
		}
		// The learned policy acts through Targets with the trainer's
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
			di: di, first: first, cfg: scfg, l: l, callers: soldier.Callers(cl, di),
			exec: soldier.NewExecutor(soldier.ExecutorConfig{
				OverageCap: cl.Soldier.OverageCap, ScaleDownCooldown: cl.Soldier.ScaleDownCooldown,
				ErrorRateVeto: cl.Soldier.ErrorRateVeto, MaxWritesPerTick: cl.Soldier.MaxWritesPerTick,
			}, n),
			obs:      soldier.Observation{Apps: make([]soldier.AppObservation, n)},
			proposed: make([]int32, n), need: make([]float64, n), lastUp: make([]int, n), wrote: make([]int, l.Groups()),
			osc: make([]bool, n), gin: make([]reward.SoldierInput, l.Groups()),
			agent0: agents, rpsHist: make([]float64, hist), scratch: make([]float64, max(n, hist)),
		}
		ed.in = soldier.InputFor(cl.Soldier)
		ed.in.Apps, ed.in.Obs, ed.in.SLO = scfg.Apps, &ed.obs, scfg.SLO
		e.doms = append(e.doms, ed)
		first += n
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
	e.s, e.tick = s, 0
	e.episodeN++
	for _, d := range e.doms {
		n := len(d.cfg.Apps)
		*d.exec = *soldier.NewExecutor(soldier.ExecutorConfig{
			OverageCap: e.cluster.Soldier.OverageCap, ScaleDownCooldown: e.cluster.Soldier.ScaleDownCooldown,
			ErrorRateVeto: e.cluster.Soldier.ErrorRateVeto, MaxWritesPerTick: e.cluster.Soldier.MaxWritesPerTick,
		}, n)
		for i := range d.lastUp {
			d.lastUp[i] = -1 << 30
		}
		d.l.Reset()
		d.stab = soldier.Stabiliser{}
		d.rpsN = 0
	}
	e.observe()
	if e.cmd != nil {
		e.cmd.reset()
	}
	e.setBudgets()
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

// observe reads every domain's observation from the simulator, as the
// simcluster view does: lagged telemetry, the targets in force.
func (e *SoldierEnv) observe() {
	t, targets := e.s.Telemetry(), e.s.Targets()
	rps := func(id int) float64 { return t.Apps[id].RPS }
	for _, d := range e.doms {
		for i := range d.obs.Apps {
			a := &t.Apps[d.first+i]
			d.obs.Apps[i] = soldier.AppObservation{RPS: a.RPS, CallerRPS: soldier.CallerRPS(d.callers[i], rps),
				P99: a.P99, ErrorRate: a.ErrorRate, CPUUtil: a.CPURequestUtil,
				Ready: a.Ready, Starting: a.Starting, Pending: a.Pending, Replicas: targets[d.first+i]}
		}
		d.obs.P99, d.obs.ErrorRate = t.DomainP99(d.di), t.Domains[d.di].ErrorRate
		d.in.Now = e.s.Now()
	}
}

// setBudgets runs a Commander tick: the learned Commander's when the env
// has one, else the stand-in's (see SoldierEnv).
func (e *SoldierEnv) setBudgets() {
	if e.cmd != nil {
		e.cmd.tick()
		return
	}
	capacity := e.cluster.Cluster.CapacityCores
	for _, d := range e.doms {
		d.in.BudgetCores, d.in.Headroom = math.Inf(1), 0
		demand := soldier.DemandCores(d.in)
		f := (1 + d.headroom) * (1 + e.margin)
		if e.fcSigma > 0 {
			f *= max(0.5, 1+e.fcSigma*e.r.NormFloat64())
		}
		dc := e.cluster.Domains[d.di]
		d.budget = min(demand*f, dc.Ceiling*capacity)
		d.in.BudgetCores, d.in.Headroom = d.budget, d.headroom
	}
}

func (e *SoldierEnv) features(obs [][]float64) {
	for _, d := range e.doms {
		d.l.Features(d.in, obs[d.agent0:d.agent0+d.l.Groups()])
	}
}

// Step implements Env.
func (e *SoldierEnv) Step(act [][]float64, obs [][]float64, rew []float64) (bool, Outcome) {
	now := e.s.Now()
	targets := e.s.Targets()
	osc := int(reward.OscillationWindow / e.cluster.Soldier.Tick)
	actions := 0
	for _, d := range e.doms {
		d.l.Targets(d.in, act[d.agent0:d.agent0+d.l.Groups()], d.proposed)
		for i := range d.need {
			d.need[i] = soldier.Need(&d.cfg.Apps[i], &d.obs.Apps[i], &d.in)
		}
		d.stab.Apply(d.proposed, &d.obs, d.need, e.cluster.Soldier.Tolerance)
		d.guards, d.writes = d.exec.Apply(now, d.cfg.Apps, &d.obs, d.budget, d.proposed, d.guards[:0], d.writes[:0])
		clear(d.wrote)
		clear(d.osc)
		for _, w := range d.writes {
			prev := targets[d.first+w.App]
			targets[d.first+w.App] = w.Replicas
			d.wrote[d.cfg.Apps[w.App].Group]++
			switch {
			case w.Replicas > prev:
				d.lastUp[w.App] = e.tick
			case e.tick-d.lastUp[w.App] <= osc:
				d.osc[w.App] = true // scaled down within the window of a scale-up
			}
		}
		actions += len(d.writes)
	}
	e.s.Step()
	e.tick++
	e.observe()
	if e.cmd != nil {
		e.cmd.report()
	}
	if e.tick%e.ratio == 0 {
		e.setBudgets()
	}
	clear(e.terms)
	t := e.s.Telemetry()
	breached, apps, used := 0, 0, 0.0
	for _, d := range e.doms {
		dt := &t.Domains[d.di]
		breached += int(dt.BreachedApps)
		apps += len(d.cfg.Apps)
		used += dt.CoresUsed
		dUsed := 0.0
		for i, a := range d.cfg.Apps {
			dUsed += float64(d.obs.Apps[i].Replicas) * a.CPU
		}
		cost := -min(2, dUsed/max(d.budget, 1e-9)) / 2
		for g := range d.gin {
			d.gin[g] = reward.SoldierInput{SLO: d.cfg.SLO, ErrorBudget: d.cfg.ErrorBudget, BudgetCores: d.budget, UsedCores: dUsed}
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
	for k := range e.terms {
		e.terms[k] /= float64(e.spec.Agents)
	}
	e.features(obs)
	out := Outcome{Terms: e.terms, Compliance: 1 - float64(breached)/float64(max(apps, 1)), Actions: actions}
	hours := e.cluster.Soldier.Tick.Hours()
	if cph := e.cluster.Cluster.CostPerCoreHour; cph > 0 {
		out.CostCoreHours = t.Cluster.CostPerHour / cph * hours
	} else {
		out.CostCoreHours = used * hours
	}
	return e.s.Done(), out
}
