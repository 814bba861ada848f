package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// stepBuffers are the observation, action and reward buffers to step an
// env of spec s by hand.
func stepBuffers(s Spec) (obs, act [][]float64, rew []float64) {
	obs, act = make([][]float64, s.Agents), make([][]float64, s.Agents)
	for i := range obs {
		obs[i], act[i] = make([]float64, s.Obs.Dim()), make([]float64, s.Act.Dim())
	}
	return obs, act, make([]float64, s.Agents)
}

func smallEnv(t testing.TB, domains []string, randomise bool, scenarios ...string) SoldierEnvConfig {
	t.Helper()
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	ec := SoldierEnvConfig{Cluster: cfg, Domains: domains, Episode: 30 * time.Minute, Randomise: randomise}
	for _, name := range scenarios {
		s, err := scenario.Load(cfg, "../../../examples/scenarios/train/"+name)
		if err != nil {
			t.Fatal(err)
		}
		ec.Scenarios = append(ec.Scenarios, s)
	}
	return ec
}

// TestSoldierEnvWarmStartServesAndRepeats runs the untrained (warm-started)
// policy's mean action for a few episodes on the full small cluster: the
// episodes repeat exactly for a seed and keep most app-ticks within SLO.
func TestSoldierEnvWarmStartServesAndRepeats(t *testing.T) {
	ec := smallEnv(t, nil, true, "small-base.hcl")
	pol, err := soldier.NewLearnedPolicy(rand.New(rand.NewPCG(1, 1)), 3, -1)
	if err != nil {
		t.Fatal(err)
	}
	newEnv := func(int) (Env, error) { return NewSoldierEnv(ec) }
	run := func() []Episode {
		eps, err := Evaluate(context.Background(), pol, newEnv, 2, 4, 7)
		if err != nil {
			t.Fatal(err)
		}
		return eps
	}
	a, b := run(), run()
	for i := range a {
		if a[i].Return != b[i].Return || a[i].CostCoreHours != b[i].CostCoreHours || a[i].Actions != b[i].Actions {
			t.Fatalf("episode %d differs between runs: %+v vs %+v", i, a[i], b[i])
		}
		if a[i].Steps != 179 {
			t.Fatalf("episode %d: %d steps, want 179 (30 min of 10 s ticks, the first Reset's fallback tick)", i, a[i].Steps)
		}
		if a[i].Compliance < 0.9 || math.IsNaN(a[i].Return) || a[i].CostCoreHours <= 0 {
			t.Errorf("episode %d: compliance %.4f, return %v, cost %v", i, a[i].Compliance, a[i].Return, a[i].CostCoreHours)
		}
	}
	t.Logf("episodes: %+v", a)
}

// The Soldier env's episodes cut from a seed-scale scenario (which maps its
// window's peak to peak_rps) replay the scenario's demand at their minutes.
func TestSoldierEnvKeepsTheSeedScaleScenariosDemand(t *testing.T) {
	cfg, base := seedWorld(t, "diurnal.hcl")
	quiet := *base.Scenario
	noiseless(&quiet)
	base.Scenario = &quiet
	e, err := NewSoldierEnv(SoldierEnvConfig{Cluster: cfg, Scenarios: []sim.Scenario{base}, Episode: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	obs := make([][]float64, e.Spec().Agents)
	for i := range obs {
		obs[i] = make([]float64, e.Spec().Obs.Dim())
	}
	di := cfg.Domain("merchant")
	tick := cfg.Soldier.Tick
	for seed := range uint64(2) {
		e.Reset(rand.New(rand.NewPCG(seed, 12)), obs)
		done := e.s.StepsDone()
		start := e.s.Now().Add(-time.Duration(done) * tick)
		shift := int(start.Sub(base.Start) / tick)
		n := 100
		got := simDemand(e.s, cfg, di, done+1, n)
		want := domainDemand(t, cfg, quiet, base.Traces, di, shift+done+1, n)
		worst := worstRatio(got, want)
		t.Logf("seed %d: episode from %s, merchant demand %.0f-%.0f rps, worst relative difference %.2g", seed,
			start.Format(time.RFC3339), slices.Min(got), slices.Max(got), worst)
		if worst > 1e-6 {
			t.Errorf("seed %d: the episode from %s replays merchant's demand up to %.3gx off the scenario's at the same minutes",
				seed, start.Format(time.RFC3339), 1+worst)
		}
	}
}

// The stand-in Commander gives a domain the headroom the Forecast
// Commander would: the domain's own, else the commander block's, each
// varied within [0.5, 1.5] of itself, else the spread rule's range.
func TestStandInHeadroomFollowsTheConfig(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/seedscale.hcl")
	if err != nil {
		t.Fatal(err)
	}
	own, shared := -1, -1
	for i, d := range cfg.Domains {
		switch {
		case d.Headroom > 0 && own < 0:
			own = i
		case d.Headroom == 0 && shared < 0:
			shared = i
		}
	}
	if own < 0 || shared < 0 || cfg.Commander.Headroom <= 0 {
		t.Fatalf("examples/seedscale.hcl no longer has a domain with its own headroom, one without, and a commander headroom")
	}
	h := cfg.Domains[own].Headroom
	if got := standInHeadroom(cfg, own, 0); math.Abs(got-0.5*h) > 1e-12 {
		t.Errorf("%s at u 0: %v, want half its own %v", cfg.Domains[own].Name, got, h)
	}
	if got := standInHeadroom(cfg, shared, 1); math.Abs(got-1.5*cfg.Commander.Headroom) > 1e-12 {
		t.Errorf("%s at u 1: %v, want 1.5x the commander's %v", cfg.Domains[shared].Name, got, cfg.Commander.Headroom)
	}
	cfg.Commander.Headroom = 0
	if got := standInHeadroom(cfg, shared, 0.5); math.Abs(got-0.08) > 1e-12 {
		t.Errorf("no headroom configured, u 0.5: %v, want the spread rule's midpoint 0.08", got)
	}
}
