package train

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// smallWorld loads examples/small.hcl and its day scenario.
func smallWorld(t testing.TB) (*domains.Config, sim.Scenario) {
	t.Helper()
	return loadWorld(t, "../../../examples/small.hcl", "../../../examples/scenarios/small-day.hcl")
}

// loadWorld loads the config at cfgPath and the scenario at scenarioPath
// with its traces.
func loadWorld(t testing.TB, cfgPath, scenarioPath string) (*domains.Config, sim.Scenario) {
	t.Helper()
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile(scenarioPath, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, sim.Scenario{Scenario: sc, Traces: tr}
}

func TestCommanderEnvDrivenByTheHeuristicIsTheForecastHierarchy(t *testing.T) {
	cfg, sc := smallWorld(t)
	opt := CommanderEnvOptions{Episode: time.Hour, Warmup: 20 * time.Minute, Scale: [2]float64{1, 1}, TimeseriesScale: [2]float64{1, 1}, EventProb: -1}
	e, err := NewCommanderEnv(cfg, []sim.Scenario{sc}, opt)
	if err != nil {
		t.Fatal(err)
	}
	spec := e.Spec()
	if spec.Agents != 1 || spec.Obs.Dim() != len(commander.Layout(cfg)) || spec.Act.Dim() != 3*len(cfg.Domains)+1 {
		t.Fatalf("spec %+v", spec)
	}
	r := rand.New(rand.NewPCG(1, 2))
	obs := [][]float64{make([]float64, spec.Obs.Dim())}
	act := [][]float64{make([]float64, spec.Act.Dim())}
	rew := make([]float64, 1)
	e.Reset(r, obs)
	ZeroResidual(act[0], len(cfg.Domains))
	steps, cost, actions := 0, 0.0, 0
	for done := false; !done; {
		var out Outcome
		done, out = e.Step(act, obs, rew)
		steps++
		cost += out.CostCoreHours
		actions += out.Actions
		if len(out.Terms) != len(spec.Terms) || math.IsNaN(rew[0]) || rew[0] < -3 || rew[0] > 1.3 {
			t.Fatalf("step %d: reward %v, terms %v", steps, rew[0], out.Terms)
		}
		if out.Compliance < 0 || out.Compliance > 1 {
			t.Fatalf("step %d: compliance %v", steps, out.Compliance)
		}
	}
	if steps != 60 {
		t.Errorf("%d steps in a one-hour episode, want 60", steps)
	}

	// The same episode run by the hierarchy with its own Forecast policy.
	ep := e.Episode()
	s, err := sim.New(cfg, &ep, sc.Traces)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := simcluster.NewPolicy(cfg, nil, nil, simcluster.WithCommander(&commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}), simcluster.WithPool(s))
	if err != nil {
		t.Fatal(err)
	}
	for !s.Done() {
		pol.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
	}
	want, got := s.Metrics(), e.Sim().Metrics()
	if got.CostCoreHours != want.CostCoreHours || got.SLOCompliance != want.SLOCompliance || got.ScalingActions != want.ScalingActions {
		t.Errorf("env driven by the heuristic: cost %.2f core-hours, compliance %.4f; the Forecast hierarchy: %.2f, %.4f",
			got.CostCoreHours, got.SLOCompliance, want.CostCoreHours, want.SLOCompliance)
	}
	if got.ScalingActions < actions {
		t.Errorf("the env counted %d actions in the episode, the simulator %d in the whole run", actions, got.ScalingActions)
	}
	t.Logf("cost %.2f core-hours (env's episode part %.2f), compliance %.4f", got.CostCoreHours, cost, got.SLOCompliance)
}

func TestCommanderEnvActionsReachTheSoldiers(t *testing.T) {
	cfg, sc := smallWorld(t)
	opt := CommanderEnvOptions{Episode: time.Hour, Warmup: 20 * time.Minute, Scale: [2]float64{1, 1}, TimeseriesScale: [2]float64{1, 1}, EventProb: -1}
	n := len(cfg.Domains)
	run := func(headroom float64) (ret, cost, costTerm float64) { // headroom: the residual on every headroom logit
		e, err := NewCommanderEnv(cfg, []sim.Scenario{sc}, opt)
		if err != nil {
			t.Fatal(err)
		}
		spec := e.Spec()
		obs := [][]float64{make([]float64, spec.Obs.Dim())}
		act := [][]float64{make([]float64, spec.Act.Dim())}
		rew := make([]float64, 1)
		e.Reset(rand.New(rand.NewPCG(3, 4)), obs)
		ZeroResidual(act[0], n)
		for i := range n {
			act[0][2*n+1+i] = headroom // the residual on the headroom logit
		}
		for done := false; !done; {
			var out Outcome
			done, out = e.Step(act, obs, rew)
			ret += rew[0]
			cost += out.CostCoreHours
			costTerm += out.Terms[2]
		}
		return ret, cost, costTerm
	}
	_, hCost, hTerm := run(0)
	_, bigCost, bigTerm := run(3)
	t.Logf("heuristic headroom: %.1f core-hours (cost term %.3f); headroom odds x e^3: %.1f (%.3f)", hCost, hTerm, bigCost, bigTerm)
	if !(bigCost > 1.05*hCost) || !(bigTerm < hTerm) {
		t.Errorf("headroom odds x e^3 cost %.1f core-hours (cost term %.3f), the heuristic's headroom %.1f (%.3f): want more cost", bigCost, bigTerm, hCost, hTerm)
	}
}

func TestWarmStartActsAsTheHeuristic(t *testing.T) {
	cfg, sc := smallWorld(t)
	opt := CommanderEnvOptions{Episode: time.Hour, Warmup: 20 * time.Minute}
	e, err := NewCommanderEnv(cfg, []sim.Scenario{sc}, opt)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	p, err := rl.NewPolicy(rl.DefaultSpec(e.Spec().Obs, e.Spec().Act), r)
	if err != nil {
		t.Fatal(err)
	}
	st, err := WarmStartCommander(e, p, r, WarmStartOptions{Episodes: 2, Epochs: 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples, value loss %.4f -> %.4f", st.Samples, st.ValueLoss0, st.ValueLoss)
	if st.Samples != 120 || !(st.ValueLoss < 0.1*st.ValueLoss0) {
		t.Fatalf("%d samples, value loss %.4f -> %.4f: want 120 samples and the loss under 10%% of the start", st.Samples, st.ValueLoss0, st.ValueLoss)
	}
	// On a fresh episode the warm-started policy decides the heuristic's
	// action exactly.
	l, err := commander.NewLearned(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	obs := [][]float64{make([]float64, e.Spec().Obs.Dim())}
	e.Reset(rand.New(rand.NewPCG(9, 9)), obs)
	n := len(cfg.Domains)
	want, got := commander.NewAction(n), commander.NewAction(n)
	e.Heuristic(&want)
	l.Decide(e.drv.last, &got)
	for i := range n {
		if math.Abs(got.Shares[i]-want.Shares[i]) > 1e-12 || math.Abs(got.Headroom[i]-want.Headroom[i]) > 1e-12 {
			t.Errorf("domain %s: warm-started share %v headroom %v, heuristic %v %v", cfg.Domains[i].Name,
				got.Shares[i], got.Headroom[i], want.Shares[i], want.Headroom[i])
		}
	}
}

func TestCommanderGate(t *testing.T) {
	cfg, sc := smallWorld(t)
	opt := CommanderEnvOptions{Episode: time.Hour, Warmup: 20 * time.Minute}
	newEnv := func() (*CommanderEnv, error) { return NewCommanderEnv(cfg, []sim.Scenario{sc}, opt) }
	p, res, err := TrainCommander(context.Background(), newEnv, CommanderStage{
		WarmStart: WarmStartOptions{Episodes: 2}, Steps: 0, Seed: 7, GateEpisodes: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Gate
	t.Log(g)
	if g.CostCoreHours != g.HeuristicCostCoreHours || g.Compliance != g.HeuristicCompliance || !g.Pass {
		t.Errorf("the warm-started Commander is not the heuristic on the gate's episodes: %v", g)
	}
	if p.Provenance.Stage != "commander" || !p.Norm.Frozen {
		t.Errorf("provenance %+v, normaliser frozen %v", p.Provenance, p.Norm.Frozen)
	}

	// A Commander that always asks for much more headroom provisions more
	// and fails the gate's cost rule.
	e, err := newEnv()
	if err != nil {
		t.Fatal(err)
	}
	n := len(cfg.Domains)
	last := len(p.Actor.Sizes()) - 2
	w, b := p.Actor.Layer(p.Actor.Params(), last)
	for i := 2 * n; i < 3*n; i++ {
		clear(w[i*p.Actor.Sizes()[last] : (i+1)*p.Actor.Sizes()[last]])
		b[i] = 3 // headroom odds x e^3
	}
	bad, err := EvaluateCommanderGate(context.Background(), e, p, 3, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(bad)
	if bad.Pass || !(bad.CostCoreHours > bad.HeuristicCostCoreHours) {
		t.Errorf("a Commander that over-provisions passes the gate: %v", bad)
	}
}

func TestCommanderEnvReadsTheLearnedSoldierOnce(t *testing.T) {
	cfg, sc := smallWorld(t)
	src, err := os.ReadFile("../../../models/soldier.ckpt")
	if err != nil {
		t.Skipf("no learned Soldier checkpoint: %v", err)
	}
	path := filepath.Join(t.TempDir(), "soldier.ckpt")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	c := *cfg
	c.Soldier.Policy = path
	e, err := NewCommanderEnv(&c, []sim.Scenario{sc}, CommanderEnvOptions{Episode: 10 * time.Minute, Warmup: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil { // episodes must not read it again
		t.Fatal(err)
	}
	spec := e.Spec()
	obs := [][]float64{make([]float64, spec.Obs.Dim())}
	act := [][]float64{make([]float64, spec.Act.Dim())}
	rew := make([]float64, 1)
	ZeroResidual(act[0], len(c.Domains))
	for ep := range 2 {
		e.Reset(rand.New(rand.NewPCG(uint64(ep), 1)), obs)
		steps := 0
		for done := false; !done; steps++ {
			done, _ = e.Step(act, obs, rew)
		}
		if steps != 10 {
			t.Fatalf("episode %d: %d steps, want 10", ep, steps)
		}
	}
}

// seedWorld loads examples/seedscale.hcl and the seed-scale training
// scenario file name (examples/scenarios/seed/train).
func seedWorld(t testing.TB, name string) (*domains.Config, sim.Scenario) {
	t.Helper()
	return loadWorld(t, "../../../examples/seedscale.hcl", "../../../examples/scenarios/seed/train/"+name)
}

// domainDemand is the noise-free demand of domain di, summed over its apps,
// at the simulator's ticks from..from+n-1 (tick k is the one the k-th Step
// runs), for scenario sc.
func domainDemand(t *testing.T, cfg *domains.Config, sc domains.Scenario, traces map[string][]trace.Series, di, from, n int) []float64 {
	t.Helper()
	noiseless(&sc)
	s, err := sim.New(cfg, &sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	return simDemand(s, cfg, di, from, n)
}

// noiseless turns off every noise of sc: the multiplicative noise, Poisson
// arrivals and the domains' bursts; and the apps' own components, whose
// pairing with the apps' shares comes from the seed (which an env's episode
// draws afresh), so that a domain's sum is the trace's whatever the seed.
// Its traffic is copied.
func noiseless(sc *domains.Scenario) {
	sc.Noise = 0
	sc.ArrivalNoise = domains.NoiseMultiplicative
	sc.Traffic = slices.Clone(sc.Traffic)
	for i := range sc.Traffic {
		sc.Traffic[i].BurstSigma, sc.Traffic[i].AppOwn = 0, 0
	}
}

// simDemand is the demand of domain di of cfg, summed over its apps, that s
// will see at ticks from..from+n-1 (from after the current tick).
func simDemand(s *sim.Sim, cfg *domains.Config, di, from, n int) []float64 {
	f := s.Future()
	apps := cfg.Apps()
	out := make([]float64, 0, n)
	for len(out) < n {
		tick, lambda, _ := f.Next()
		if tick < from {
			continue
		}
		sum := 0.0
		for i, a := range apps {
			if a.Domain == di {
				sum += lambda[i]
			}
		}
		out = append(out, sum)
	}
	return out
}

// worstRatio is the largest relative difference of got from want.
func worstRatio(got, want []float64) float64 {
	worst := 0.0
	for k := range got {
		worst = max(worst, math.Abs(got[k]-want[k])/want[k])
	}
	return worst
}

// At seed scale the scenarios map each window's peak to peak_rps: an episode
// cut from the 24-hour diurnal day must replay the day's demand at its
// minutes (not lift its own window's peak to peak_rps), and gets no further
// timeseries factor (10x the seed's load fills the pool).
func TestCommanderEnvKeepsTheSeedScaleScenariosDemand(t *testing.T) {
	cfg, base := seedWorld(t, "diurnal.hcl")
	e, err := NewCommanderEnv(cfg, []sim.Scenario{base}, CommanderEnvOptions{
		Episode: time.Hour, Warmup: 10 * time.Minute, Scale: [2]float64{1, 1}, EventProb: -1})
	if err != nil {
		t.Fatal(err)
	}
	di := cfg.Domain("merchant") // no callers: its demand is its own trace's
	tick := cfg.Soldier.Tick
	for seed := range uint64(3) {
		ep, traces := e.scenario(rand.New(rand.NewPCG(seed, 11)))
		shift := int(ep.Start.Sub(base.Start) / tick)
		n := int(ep.Duration/tick) - 1
		got := domainDemand(t, cfg, ep, traces, di, 1, n)
		want := domainDemand(t, cfg, *base.Scenario, base.Traces, di, shift+1, n)
		worst := worstRatio(got, want)
		t.Logf("seed %d: episode from %s, merchant demand %.0f-%.0f rps, worst relative difference %.2g", seed,
			ep.Start.Format(time.RFC3339), slices.Min(got), slices.Max(got), worst)
		if worst > 1e-6 { // the simulator keeps trace shapes in float32
			t.Errorf("seed %d: the episode from %s replays merchant's demand up to %.3gx off the scenario's at the same minutes",
				seed, ep.Start.Format(time.RFC3339), 1+worst)
		}
	}
}

// An episode cut from a scenario keeps the operator's calendar where it
// was: an announced event's calendar time moves with the episode's start,
// as its own time does, so the Commander plans for it at the same minute.
func TestCommanderEnvKeepsTheCalendarsTimes(t *testing.T) {
	cfg, base := seedWorld(t, "postmortem.hcl")
	want := (&domains.Scenario{Start: base.Start, Duration: base.Duration, Events: base.Events}).Planned()
	if len(want) != 2 {
		t.Fatalf("the training postmortem announces %d events, want its 2 sale events", len(want))
	}
	e, err := NewCommanderEnv(cfg, []sim.Scenario{base}, CommanderEnvOptions{
		Episode: time.Hour, Warmup: 10 * time.Minute, Scale: [2]float64{1, 1}, EventProb: -1})
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for seed := range uint64(20) {
		ep, _ := e.scenario(rand.New(rand.NewPCG(seed, 3)))
		planned += len(ep.Planned())
		for _, got := range ep.Planned() {
			if !slices.ContainsFunc(want, func(w domains.Planned) bool { return w.Domain == got.Domain && w.Start.Equal(got.Start) }) {
				t.Fatalf("seed %d: the episode from %s plans %s at %s; the scenario's calendar has %v",
					seed, ep.Start.Format(time.RFC3339), got.Domain, got.Start.Format(time.RFC3339), want)
			}
		}
	}
	if planned == 0 {
		t.Fatal("no episode of 20 held the sale")
	}
}

// Traffic mapped over the whole trace (the small world's) still gets the
// timeseries factor; azure-functions traffic does not.
func TestCommanderEnvScalesTraceMappedTimeseries(t *testing.T) {
	cfg, base := smallWorld(t)
	e, err := NewCommanderEnv(cfg, []sim.Scenario{base}, CommanderEnvOptions{
		Episode: time.Hour, Warmup: 10 * time.Minute, Scale: [2]float64{1, 1}, TimeseriesScale: [2]float64{3, 3}, EventProb: -1})
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := e.scenario(rand.New(rand.NewPCG(1, 1)))
	for i, tr := range ep.Traffic {
		want := base.Traffic[i].PeakRPS
		if tr.Format == domains.FormatTimeseries {
			want *= 3
		}
		if math.Abs(tr.PeakRPS-want) > 1e-9*want || tr.PeakRPSOf != base.Traffic[i].PeakRPSOf {
			t.Errorf("traffic %q (%s, peak of %s): peak_rps %.1f, want %.1f", tr.Domain, tr.Format, base.Traffic[i].PeakRPSOf, tr.PeakRPS, want)
		}
	}
}

// TestCommanderEnvScoresEnergyWhenWeighed: the energy term is the cluster's
// power over the pool's at full load, in (-1, 0) on a running world, and
// enters the reward only with the config's energy weight (default 0).
func TestCommanderEnvScoresEnergyWhenWeighed(t *testing.T) {
	opt := CommanderEnvOptions{Episode: 10 * time.Minute, Warmup: 10 * time.Minute, Scale: [2]float64{1, 1}, TimeseriesScale: [2]float64{1, 1}, EventProb: -1}
	run := func(weight float64) (reward, energy float64) {
		cfg, sc := smallWorld(t)
		if weight > 0 {
			cfg.Reward.Commander = map[string]float64{"energy": weight}
		}
		e, err := NewCommanderEnv(cfg, []sim.Scenario{sc}, opt)
		if err != nil {
			t.Fatal(err)
		}
		spec := e.Spec()
		if spec.Terms[6] != "energy" {
			t.Fatalf("terms %v", spec.Terms)
		}
		obs := [][]float64{make([]float64, spec.Obs.Dim())}
		act := [][]float64{make([]float64, spec.Act.Dim())}
		rew := make([]float64, 1)
		e.Reset(rand.New(rand.NewPCG(5, 6)), obs)
		ZeroResidual(act[0], len(cfg.Domains))
		_, out := e.Step(act, obs, rew)
		return rew[0], out.Terms[6]
	}
	r0, e0 := run(0)
	r1, e1 := run(0.5)
	if !(e0 < 0 && e0 > -1) || e1 != e0 {
		t.Fatalf("energy term %v and %v, want one value in (-1, 0)", e0, e1)
	}
	if math.Abs(r1-(r0+0.5*e0)) > 1e-9 {
		t.Fatalf("reward %v with energy weight 0.5, want %v + 0.5 x %v", r1, r0, e0)
	}
}
