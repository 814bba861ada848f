package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/scenario"
	"github.com/regimentd/regiment/soldier"
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
	cfg, err := config.LoadFile("../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	ec := SoldierEnvConfig{Cluster: cfg, Domains: domains, Episode: 30 * time.Minute, Randomise: randomise}
	for _, name := range scenarios {
		s, err := scenario.Load(cfg, "../examples/scenarios/train/"+name)
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
		if a[i].Steps != 180 {
			t.Fatalf("episode %d: %d steps, want 180 (30 min of 10 s ticks)", i, a[i].Steps)
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

// The Soldier env runs the policy's targets through the Stabiliser, as a
// Soldier does: with the warm-start policy (Proportional's sizing) no app
// grows unless its need, floored by its domain's rise (soldier.RiseFloor),
// is past the tolerance, however its load wavers.
func TestSoldierEnvStabilisesAsASoldierDoes(t *testing.T) {
	cfg, sc := seedWorld(t, "diurnal.hcl") // large apps: one replica more is within the tolerance
	ec := SoldierEnvConfig{Cluster: cfg, Scenarios: []sim.Scenario{sc}, Episode: 20 * time.Minute}
	e, err := NewSoldierEnv(ec)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := soldier.NewLearnedPolicy(rand.New(rand.NewPCG(1, 1)), cfg.Soldier.StaffingSafety, -1)
	if err != nil {
		t.Fatal(err)
	}
	obs, act, rew := stepBuffers(e.Spec())
	tol := cfg.Soldier.Tolerance
	past := make([][]float64, len(e.doms)) // per domain, each app's need at the last step
	ups, small := 0, 0
	for seed := range uint64(2) {
		e.Reset(rand.New(rand.NewPCG(seed, 3)), obs)
		for step, done := 0, false; !done; step++ {
			pol.LatentMeans(pol.Actor.NewTape(), obs, act)
			before := slices.Clone(e.s.Targets())
			done, _ = e.Step(act, obs, rew)
			for di, d := range e.doms {
				growth := 1.0
				if step > 0 {
					level, prev := 0.0, 0.0
					for i := range d.need {
						level, prev = level+d.need[i], prev+past[di][i]
					}
					growth = soldier.DomainGrowth(level, prev)
				}
				for _, w := range d.writes {
					cur, a := before[d.first+w.App], d.cfg.Apps[w.App]
					if w.Replicas <= cur || cur < a.Min {
						continue
					}
					ups++
					if float64(w.Replicas) <= float64(cur)*(1+tol) {
						small++
					}
					judged := d.need[w.App]
					if step > 0 {
						judged = soldier.RiseFloor(judged, past[di][w.App], growth, 0.02)
					}
					if judged <= float64(cur)*(1+tol) {
						t.Fatalf("seed %d step %d: %s grew from %d to %d for a need of %.1f replicas, within the tolerance %.2f",
							seed, step, a.Name, cur, w.Replicas, judged, tol)
					}
				}
				past[di] = append(past[di][:0], d.need...)
			}
		}
	}
	if small == 0 {
		t.Fatal("no app grew by less than the tolerance: the test saw nothing the Stabiliser could have held")
	}
	t.Logf("%d scale-ups, %d of them smaller than the tolerance, each for a need past it", ups, small)
}

// The stand-in Commander gives a domain the headroom the Forecast
// Commander would: the domain's own, else the commander block's, each
// varied within [0.5, 1.5] of itself, else the spread rule's range.
func TestStandInHeadroomFollowsTheConfig(t *testing.T) {
	cfg, err := config.LoadFile("../examples/seedscale.hcl")
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
