package train

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/rl"
)

// targetEnv is a synthetic env: each of its agents sees its own target in
// [-1, 1] and is paid -(action - target)^2; episodes last 8 steps.
type targetEnv struct {
	agents, t int
	target    []float64
	r         *rand.Rand
	terms     []float64
}

func (e *targetEnv) Spec() Spec {
	return Spec{Obs: rl.ScalarLayout("target", 1, []string{"target"}),
		Act: rl.ActionLayout{Segments: []rl.Segment{{Name: "a", Kind: rl.Gaussian, Size: 1}}}, Agents: e.agents, Terms: []string{"error"}}
}

func (e *targetEnv) Reset(r *rand.Rand, obs [][]float64) {
	e.r, e.t = r, 0
	e.target = make([]float64, e.agents)
	e.terms = make([]float64, 1)
	e.next(obs)
}

func (e *targetEnv) next(obs [][]float64) {
	for a := range e.target {
		e.target[a] = 2*e.r.Float64() - 1
		obs[a][0] = e.target[a]
	}
}

func (e *targetEnv) Step(act [][]float64, obs [][]float64, rew []float64) (bool, Outcome) {
	e.terms[0] = 0
	for a := range rew {
		d := act[a][0] - e.target[a]
		rew[a] = -d * d
		e.terms[0] += rew[a] / float64(e.agents)
	}
	e.t++
	e.next(obs)
	return e.t == 8, Outcome{Terms: e.terms, Compliance: 1 + e.terms[0]}
}

func trainTarget(t *testing.T, seed uint64) (*rl.Policy, string) {
	t.Helper()
	env := (&targetEnv{agents: 3}).Spec()
	spec := rl.DefaultSpec(env.Obs, env.Act)
	spec.Actor = rl.Arch{Hidden: []int{16}, Activations: []rl.Activation{rl.Tanh}}
	spec.Critic = spec.Actor
	spec.InitLogStd = -0.5
	pol, err := rl.NewPolicy(spec, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	ppo := rl.DefaultConfig("test")
	ppo.LR = 3e-3
	ppo.Gamma = 0.5
	var progress bytes.Buffer
	cfg := Config{Workers: 2, Horizon: 32, Seed: seed, PPO: ppo, Progress: &progress}
	phases := []Phase{{Name: "target", Steps: 2 * 3 * 32 * 40, NewEnv: func(int) (Env, error) { return &targetEnv{agents: 3}, nil }}}
	res, err := Run(context.Background(), cfg, pol, phases)
	if err != nil {
		t.Fatal(err)
	}
	if res.Updates != 40 || res.Steps != 2*3*32*40 {
		t.Fatalf("%d updates, %d steps; want 40 and %d", res.Updates, res.Steps, 2*3*32*40)
	}
	return pol, progress.String()
}

// TestRunLearnsFromMergedAgentsAndRepeats trains a shared policy for three
// agents in two parallel envs: the mean action must follow each agent's
// own target, and two runs with one seed must end with the same weights.
func TestRunLearnsFromMergedAgentsAndRepeats(t *testing.T) {
	pol, progress := trainTarget(t, 5)
	act := pol.NewAction()
	worst := 0.0
	for _, x := range []float64{-0.8, -0.3, 0, 0.4, 0.9} {
		pol.Mean([]float64{x}, act)
		worst = max(worst, math.Abs(act.Env[0]-x))
	}
	if worst > 0.2 {
		t.Errorf("after training the mean action misses its target by up to %.3f", worst)
	}
	if !strings.Contains(progress, "steps/s") || strings.Count(progress, "\n") != 40 {
		t.Errorf("want 40 progress lines, got:\n%s", progress)
	}
	again, _ := trainTarget(t, 5)
	for i, v := range pol.Params() {
		if again.Params()[i] != v {
			t.Fatalf("parameter %d differs between two runs of seed 5", i)
		}
	}
}

// TestBootstrapFoldsTheNextValueIntoACut pins the cut: the last reward gets
// gamma V(s') and the step is done, so GAE does not run into the next
// segment.
func TestBootstrapFoldsTheNextValueIntoACut(t *testing.T) {
	r := rl.NewRollout(2, 1, 1)
	a := &rl.Action{Input: []float64{0}, Latent: []float64{0}}
	r.Add(a, 1, false)
	r.Add(a, 2, false)
	bootstrap(r, 0.5)
	if r.Reward[1] != 2.5 || !r.Done[1] || r.Done[0] {
		t.Fatalf("rewards %v dones %v, want [1 2.5] [false true]", r.Reward, r.Done)
	}
}
