package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/soldier"
)

func smallEnv(t testing.TB, domains []string, randomise bool, scenarios ...string) SoldierEnvConfig {
	t.Helper()
	cfg, err := config.LoadFile("../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	ec := SoldierEnvConfig{Cluster: cfg, Domains: domains, Episode: 30 * time.Minute, Randomise: randomise}
	for _, name := range scenarios {
		sc, err := config.LoadScenarioFile("../examples/scenarios/train/"+name, cfg)
		if err != nil {
			t.Fatal(err)
		}
		s, err := LoadScenario(sc)
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
	pol, err := soldier.NewLearnedPolicy(rand.New(rand.NewPCG(1, 1)), 0.7, -1)
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
