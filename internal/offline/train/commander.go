package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/reward"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// CommanderEnvOptions shape the Commander env's episodes and their domain
// randomisation. Zero fields take the defaults named on each.
type CommanderEnvOptions struct {
	// Episode is the simulated time the learned Commander acts in one
	// episode. Default 4h (240 Commander ticks of 60 s).
	Episode time.Duration
	// Warmup is simulated time before the episode in which the Forecast
	// heuristic allocates, so forecasters have history and replicas match
	// demand when the learned policy takes over. Default 30m.
	Warmup time.Duration
	// ForecastNoise is the range [lo, hi] of the per-episode standard
	// deviation of the multiplicative noise on the forecast features the
	// policy sees. Default [0.05, 0.15].
	ForecastNoise [2]float64
	// Scale is the range [lo, hi] of the per-episode, per-domain factor on
	// each traffic block's peak_rps. Default [0.8, 1.25].
	Scale [2]float64
	// TimeseriesScale is the range [lo, hi] of a further per-episode factor,
	// drawn log-uniformly, on the peak_rps of timeseries traffic whose
	// peak_rps_of is "trace". Such a trace's maximum over the whole file
	// maps to peak_rps, and the World Cup 98 training days 1-40 peak at a
	// tenth of the tournament's maximum (22,073 against 225,138 requests
	// per minute), so unscaled training episodes would only ever see a
	// tenth of the load the config is sized for. Traffic with peak_rps_of
	// "window" (the seed-scale scenarios) already peaks at peak_rps over
	// its scenario's window and gets no further factor: at seed scale 10x
	// fills the pool and breaks the world. Default [1, 10].
	TimeseriesScale [2]float64
	// CostWeight is the weight of the cost term in the stage's reward
	// unless the config's reward block sets commander cost. Default 2, four
	// times the deployed default 0.5: with the deployed weights a core-hour
	// is worth less than a p99 improvement that is already inside the SLO
	// (adherence sqrt(1 - p99/SLO) keeps paying for lower latency), so PPO
	// buys compliance with cost, while the stage's gate asks for no more
	// cost than the heuristic.
	CostWeight float64
	// EventProb is the chance that an episode gets a random flash sale on
	// a random domain (multiplier 1.5 to 3, ramp 2m, hold 10 to 30 min).
	// Default 0.5; a negative value disables random events.
	EventProb float64
	// Soldier, when not nil, is the learned Soldiers' network (layout
	// soldier.LearnedLayout), given in memory: it replaces the config's
	// soldier policy. Every episode gets fresh soldier.Learned policies on
	// it; the env does not change it.
	Soldier *rl.Policy
}

func (o *CommanderEnvOptions) defaults() {
	if o.Episode <= 0 {
		o.Episode = 4 * time.Hour
	}
	if o.Warmup <= 0 {
		o.Warmup = 30 * time.Minute
	}
	if o.ForecastNoise == [2]float64{} {
		o.ForecastNoise = [2]float64{0.05, 0.15}
	}
	if o.Scale == [2]float64{} {
		o.Scale = [2]float64{0.8, 1.25}
	}
	if o.TimeseriesScale == [2]float64{} {
		o.TimeseriesScale = [2]float64{1, 10}
	}
	if o.CostWeight <= 0 {
		o.CostWeight = 2
	}
	if o.EventProb == 0 {
		o.EventProb = 0.5
	}
}

// CommanderTerms names the Commander reward terms an Outcome reports, in
// reward.CommanderBreakdown order.
var CommanderTerms = []string{"adherence", "degradation", "cost", "churn", "proactivity", "floor_proximity", "energy"}

// CommanderEnv is the Commander stage's environment: the simulator running
// Regiment's hierarchy (simcluster.Policy) with the Soldiers frozen on the
// config's soldier policy (proportional or a checkpoint) and the Commander
// driven by the trainer. One agent; one step is one Commander tick
// (cfg.Commander.Tick, 60 s = 6 Soldier ticks by default). The action is a
// residual on the Forecast heuristic's (commander.ActionLayout,
// Forecast.WithResidual), and the result goes through the Commander's
// guards as a deployed policy's would.
//
// An episode starts at a random minute of a random training scenario's
// window [Start, Start+Duration-Warmup-Episode], with the scenario's demand
// at those minutes (a window-mapped trace keeps the scenario's mapping:
// pinWindowPeaks), each domain's peak_rps scaled, maybe a random flash
// sale, and per-episode forecast noise; it runs Warmup under the Forecast heuristic, then Episode under
// the trainer.
//
// The reward of a step is reward.Commander with the config's weights (cost
// CostWeight unless the config sets it),
// averaged over the step's Soldier ticks, on the true (unlagged) per-domain
// p99 and error rate, whether the domain breached only at its apps'
// ceilings (sim.Telemetry.CeilingBound), the shares in force and, as cost,
// the provisioned node cores over the pool's capacity. Churn and
// proactivity are 0 (not measured, as in the Commander's records).
type CommanderEnv struct {
	cfg   *domains.Config
	scens []sim.Scenario
	// traffic is each scenario's traffic with window-mapped timeseries
	// blocks pinned to their scenario's window (pinWindowPeaks).
	traffic [][]domains.Traffic
	opt     CommanderEnvOptions
	spec    Spec
	w       reward.CommanderWeights
	n       int // domains
	ratio   int // Soldier ticks per Commander tick
	steps   int // Commander steps per episode

	r      *rand.Rand // the episode's, from Reset
	s      *sim.Sim
	pol    *simcluster.Policy
	drv    *driven
	t      int     // steps taken in the episode
	fnoise float64 // this episode's forecast noise sd
	fcIdx  []int   // indices of the forecast features in the observation
	// soldierPol is the learned Soldiers' network, read once by
	// NewCommanderEnv (nil: the Soldiers run a built-in policy); every
	// episode gets fresh soldier.Learned policies on it.
	soldierPol *rl.Policy
	sc         domains.Scenario

	out     []reward.DomainOutcome // one tick's outcomes
	p99     []float64              // ratio x n: per tick and domain
	errs    []float64              // ratio x n
	ceiling []bool                 // ratio x n: the domain breached only at its apps' ceilings (Telemetry.CeilingBound)
	cost    []float64              // ratio: node cores per tick
	power   []float64              // ratio: watts per tick (domains.Cluster's power model)
	cpu     []float64              // per app: cores per replica, for its busy cores
	terms   []float64
	targets []int32 // targets before a Soldier tick, to count changes
}

// NewCommanderEnv returns the Commander env for cfg (validated, defaults
// applied) on the training scenarios scenarios (each with its traces; their
// windows are where episodes start). The Soldiers run cfg.Soldier.Policy,
// resolved by soldier.NewPolicy: set it to a checkpoint path to
// train against learned Soldiers (read once here, so replacing the file
// during training changes nothing).
func NewCommanderEnv(cfg *domains.Config, scenarios []sim.Scenario, opt CommanderEnvOptions) (*CommanderEnv, error) {
	opt.defaults()
	if len(scenarios) == 0 {
		return nil, fmt.Errorf("commander env: no training scenarios")
	}
	ratio := max(1, int(cfg.Commander.Tick/cfg.Soldier.Tick))
	for _, sc := range scenarios {
		if sc.Duration < opt.Warmup+opt.Episode {
			return nil, fmt.Errorf("commander env: scenario %q lasts %s, shorter than warmup %s plus episode %s", sc.Name, sc.Duration, opt.Warmup, opt.Episode)
		}
	}
	soldierPol := opt.Soldier
	for _, d := range cfg.Domains { // the frozen Soldiers' policy must load
		scfg, err := soldier.NewConfig(cfg, d.Name)
		var sp soldier.Policy
		switch {
		case err != nil:
		case soldierPol != nil:
			_, err = soldier.NewLearned(soldierPol, scfg)
			if err != nil {
				return nil, fmt.Errorf("commander env: learned soldier: %w", err)
			}
			continue
		default:
			sp, err = soldier.NewPolicy(cfg, scfg)
		}
		if err != nil {
			return nil, fmt.Errorf("commander env: %w", err)
		}
		if l, ok := sp.(*soldier.Learned); ok {
			soldierPol = l.Policy()
		}
	}
	n := len(cfg.Domains)
	e := &CommanderEnv{
		cfg: cfg, scens: scenarios, opt: opt, n: n, ratio: ratio, soldierPol: soldierPol,
		steps: int(opt.Episode / cfg.Commander.Tick),
		w:     reward.DefaultCommanderWeights(),
		spec: Spec{Obs: commander.ObsLayout(cfg), Act: commander.ActionLayout(n), Agents: 1,
			Terms: slices.Clone(CommanderTerms)},
		out: make([]reward.DomainOutcome, n), p99: make([]float64, ratio*n), errs: make([]float64, ratio*n), ceiling: make([]bool, ratio*n),
		cost: make([]float64, ratio), terms: make([]float64, len(CommanderTerms)),
		power: make([]float64, ratio),
	}
	for _, a := range cfg.Apps() {
		e.cpu = append(e.cpu, a.CPUPerReplica)
	}
	for _, sc := range scenarios {
		tr, err := pinWindowPeaks(sc, cfg.Soldier.Tick)
		if err != nil {
			return nil, fmt.Errorf("commander env: scenario %q: %w", sc.Name, err)
		}
		e.traffic = append(e.traffic, tr)
	}
	e.w.Cost = opt.CostWeight
	for name, v := range cfg.Reward.Commander {
		if err := e.w.Set(name, v); err != nil {
			return nil, fmt.Errorf("commander env: %w", err)
		}
	}
	for i, f := range commander.Layout(cfg) {
		if strings.Contains(f, ".forecast_p80_") {
			e.fcIdx = append(e.fcIdx, i)
		}
	}
	e.drv = &driven{residual: make([]float64, e.spec.Act.Dim()), heuristic: commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}}
	return e, nil
}

// Spec implements Env.
func (e *CommanderEnv) Spec() Spec { return e.spec }

// Reset implements Env: a new randomised episode, warmed up under the
// Forecast heuristic; obs[0] is the first observation the trainer acts on.
// It panics if the simulator or the hierarchy cannot be built, which
// NewCommanderEnv's checks rule out for valid scenarios.
func (e *CommanderEnv) Reset(r *rand.Rand, obs [][]float64) {
	sc, traces := e.scenario(r)
	s, err := sim.New(e.cfg, &sc, traces)
	if err != nil {
		panic(fmt.Sprintf("train: commander env: %v", err))
	}
	opts := []simcluster.Option{simcluster.WithCommander(e.drv), simcluster.WithPool(s)}
	if e.soldierPol != nil {
		opts = append(opts, simcluster.WithSoldiers(func(scfg soldier.Config) (soldier.Policy, error) {
			return soldier.NewLearned(e.soldierPol, scfg)
		}))
	}
	pol, err := simcluster.NewPolicy(e.cfg.WithPlanned(s.Planned()), nil, nil, opts...)
	if err != nil {
		panic(fmt.Sprintf("train: commander env: %v", err))
	}
	e.r, e.s, e.pol, e.t, e.sc = r, s, pol, 0, sc
	e.fnoise = e.opt.ForecastNoise[0] + r.Float64()*(e.opt.ForecastNoise[1]-e.opt.ForecastNoise[0])
	if len(e.targets) != len(s.Targets()) {
		e.targets = make([]int32, len(s.Targets()))
	}
	e.drv.warm = true
	for range int(e.opt.Warmup/e.cfg.Commander.Tick) * e.ratio {
		pol.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	e.drv.warm = false
	e.observe(obs[0])
}

// scenario draws an episode: a random training scenario, a random start
// minute in its window, each domain's peak_rps scaled (timeseries traffic
// further by TimeseriesScale), the scenario's own
// events that fall in the episode (a repeating one from its first repeat at
// or after the start), and maybe a random flash sale.
func (e *CommanderEnv) scenario(r *rand.Rand) (domains.Scenario, map[string][]trace.Series) {
	bi := r.IntN(len(e.scens))
	base := e.scens[bi]
	sc := *base.Scenario
	span := sc.Duration - e.opt.Warmup - e.opt.Episode
	shift := time.Duration(r.Int64N(int64(span/time.Minute)+1)) * time.Minute
	sc.Start = sc.Start.Add(shift)
	sc.Duration = e.opt.Warmup + e.opt.Episode
	sc.Seed = r.Uint64()
	sc.Traffic = slices.Clone(e.traffic[bi])
	ts := e.opt.TimeseriesScale[0] * math.Pow(e.opt.TimeseriesScale[1]/e.opt.TimeseriesScale[0], r.Float64())
	for i := range sc.Traffic {
		sc.Traffic[i].PeakRPS *= e.opt.Scale[0] + r.Float64()*(e.opt.Scale[1]-e.opt.Scale[0])
		if orig := base.Traffic[i]; orig.Format == domains.FormatTimeseries && orig.PeakRPSOf != domains.PeakOfWindow {
			sc.Traffic[i].PeakRPS *= ts
		}
	}
	sc.Events = nil
	for _, ev := range base.Events {
		at := ev.At - shift
		if at < 0 && ev.Every > 0 { // the first repeat at or after the episode's start
			at += (-at + ev.Every - 1) / ev.Every * ev.Every
		}
		ev.AnnouncedAt += at - ev.At // the calendar's time moves with the event's
		ev.At = at
		if ev.At >= 0 && ev.At < sc.Duration {
			sc.Events = append(sc.Events, ev)
		}
	}
	if e.opt.EventProb > 0 && r.Float64() < e.opt.EventProb {
		sc.Events = append(sc.Events, domains.Event{
			Kind: domains.EventFlashSale, Domain: e.cfg.Domains[r.IntN(e.n)].Name,
			Multiplier: 1.5 + 1.5*r.Float64(), Ramp: 2 * time.Minute, Hold: time.Duration(10+r.IntN(21)) * time.Minute,
			At: e.opt.Warmup + time.Duration(r.Int64N(int64(e.opt.Episode/time.Minute)))*time.Minute,
		})
	}
	return sc, base.Traces
}

// pinWindowPeaks returns sc's traffic with every timeseries block whose
// peak maps over the scenario's window (peak_rps_of = "window") re-expressed
// over the whole trace, so that an episode cut from the scenario keeps the
// scenario's demand minute for minute instead of mapping its own, shorter
// window's peak to peak_rps (which would lift a night to the day's peak):
//
//	PeakRPS' = PeakRPS x max(trace) / max(trace over the scenario's window)
//
// with peak_rps_of "trace", the window's maximum as the simulator maps it
// (sim.WindowPeak). Other blocks
// (trace-mapped, azure-functions) are returned as they are.
func pinWindowPeaks(sc sim.Scenario, soldierTick time.Duration) ([]domains.Traffic, error) {
	out := slices.Clone(sc.Traffic)
	for i := range out {
		tr := &out[i]
		if tr.Format != domains.FormatTimeseries || tr.PeakRPSOf != domains.PeakOfWindow {
			continue
		}
		series := sc.Traces[tr.Domain]
		if len(series) == 0 || len(series[0].Values) == 0 {
			return nil, fmt.Errorf("traffic %q: trace %q has no series", tr.Domain, tr.Trace)
		}
		traceMax, windowMax := series[0].Max(), sim.WindowPeak(series[0], sc.Start, sc.Duration, soldierTick)
		if windowMax <= 0 {
			return nil, fmt.Errorf("traffic %q: trace %q is all zero in the scenario's window", tr.Domain, tr.Trace)
		}
		tr.PeakRPS *= traceMax / windowMax
		tr.PeakRPSOf = domains.PeakOfTrace
	}
	return out, nil
}

// Step implements Env: act[0] (laid out as commander.ActionLayout) is the
// Commander's action at this tick; the hierarchy then runs one Commander
// tick of Soldier ticks. It does not allocate.
func (e *CommanderEnv) Step(act [][]float64, obs [][]float64, rew []float64) (bool, Outcome) {
	copy(e.drv.residual, act[0])
	s, n := e.s, e.n
	var out Outcome
	var traffic0, breach0 float64
	for di := range n {
		t, b := s.DomainTicks(di)
		traffic0, breach0 = traffic0+t, breach0+b
	}
	nodeCores := e.cfg.Cluster.NodeCores
	ticks := 0
	for k := 0; k < e.ratio && !s.Done(); k++ {
		copy(e.targets, s.Targets())
		e.pol.Decide(s.Now(), s.Telemetry(), s.Targets())
		for i, v := range s.Targets() {
			if v != e.targets[i] {
				out.Actions++
			}
		}
		s.Step()
		cur := s.Current()
		for di := range n {
			e.p99[k*n+di], e.errs[k*n+di], e.ceiling[k*n+di] = cur.DomainP99(di), cur.Domains[di].ErrorRate, cur.CeilingBound(di)
		}
		e.cost[k] = float64(cur.Cluster.Nodes+cur.Cluster.ProvisioningNodes) * nodeCores
		busy := 0.0 // busy cores, as sim.Metrics counts them
		for i := range cur.Apps {
			a := &cur.Apps[i]
			busy += a.CPUUtil * float64(a.Ready) * e.cpu[i]
		}
		cl := &e.cfg.Cluster
		e.power[k] = float64(cur.Cluster.Nodes+cur.Cluster.ProvisioningNodes)*cl.NodeIdleWatts + busy*cl.BusyCoreWatts
		out.CostCoreHours += e.cost[k] * s.Tick().Hours()
		ticks++
	}
	var traffic1, breach1 float64
	for di := range n {
		t, b := s.DomainTicks(di)
		traffic1, breach1 = traffic1+t, breach1+b
	}
	out.Compliance = 1
	if dt := traffic1 - traffic0; dt > 0 {
		out.Compliance = 1 - (breach1-breach0)/dt
	}
	e.t++
	done := e.t >= e.steps || s.Done()
	o := e.observe(obs[0]) // shares in force during the step are o's PrevShare

	clear(e.terms)
	total := 0.0
	for k := range ticks {
		for di := range n {
			d := &o.Domains[di]
			e.out[di] = reward.DomainOutcome{P99: e.p99[k*n+di], SLO: d.SLO, ErrorRate: e.errs[k*n+di], ErrorBudget: d.ErrorBudget,
				Weight: d.Weight, Share: d.PrevShare, Floor: d.Floor, Demand: d.DemandCores / e.cfg.Cluster.CapacityCores,
				CeilingBound: e.ceiling[k*n+di]}
		}
		b := reward.Commander(reward.CommanderInput{Domains: e.out, Cost: e.cost[k], ReferenceCost: e.cfg.Cluster.CapacityCores,
			PowerWatts: e.power[k], ReferencePowerWatts: e.refPower()}, e.w)
		total += b.Total
		e.terms[0] += b.Adherence
		e.terms[1] += b.Degradation
		e.terms[2] += b.Cost
		e.terms[3] += b.Churn
		e.terms[4] += b.Proactivity
		e.terms[5] += b.FloorProximity
		e.terms[6] += b.Energy
	}
	if ticks > 0 {
		total /= float64(ticks)
		for i := range e.terms {
			e.terms[i] /= float64(ticks)
		}
	}
	rew[0] = total
	out.Terms = e.terms
	return done, out
}

// observe builds the observation at the simulator's current time without
// publishing (Commander.Decide; the tick that follows at the same time
// builds the same one), writes the policy's view of it into dst (forecast
// features with this episode's noise) and returns it.
func (e *CommanderEnv) observe(dst []float64) *commander.Observation {
	o, _ := e.pol.Commander().Decide(e.s.Now())
	copy(dst, o.Vector)
	for _, i := range e.fcIdx {
		// The features are log1p(rps): perturb the rate, not its log.
		v := math.Expm1(dst[i]) * math.Max(0, 1+e.fnoise*e.r.NormFloat64())
		dst[i] = math.Log1p(v)
	}
	return o
}

// Episode returns the scenario of the current episode (after Reset):
// warmup then episode, randomised.
func (e *CommanderEnv) Episode() domains.Scenario { return e.sc }

// Sim returns the current episode's simulation.
func (e *CommanderEnv) Sim() *sim.Sim { return e.s }

// Heuristic writes the Forecast heuristic's action at the current
// observation (the one the last Reset or Step returned, without forecast
// noise) into a.
func (e *CommanderEnv) Heuristic(a *commander.Action) {
	e.drv.heuristic.Decide(e.drv.last, a)
}

// ZeroResidual writes the action that leaves the Forecast heuristic's
// unchanged into env (laid out as commander.ActionLayout(n)): uniform
// shares, zero urgency and headroom residuals.
func ZeroResidual(env []float64, n int) {
	for i := range n + 1 {
		env[i] = 1 / float64(n+1)
	}
	clear(env[n+1:])
}

// driven is the Commander policy the env drives: during warmup the Forecast
// heuristic, then the heuristic with the residual the trainer set. It
// remembers the observation it last saw.
type driven struct {
	warm      bool
	heuristic commander.Forecast
	residual  []float64
	last      *commander.Observation
}

func (d *driven) Decide(o *commander.Observation, a *commander.Action) string {
	d.last = o
	if d.warm {
		return d.heuristic.Decide(o, a)
	}
	d.heuristic.WithResidual(o, d.residual, a)
	return "trainer"
}

// refPower is the whole pool's power at full load, watts: the energy term's
// reference (domains.Cluster's power model).
func (e *CommanderEnv) refPower() float64 {
	cl := &e.cfg.Cluster
	return cl.CapacityCores/cl.NodeCores*cl.NodeIdleWatts + cl.CapacityCores*cl.BusyCoreWatts
}
