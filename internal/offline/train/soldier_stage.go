package train

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// SoldierStage configures TrainSoldier. Its curriculum
// (docs/training.md#the-soldier-stage):
//
//  1. steady: the gate domain alone on the base scenario, no randomisation
//     (10% of the steps);
//  2. cluster: every domain on the base scenario, randomised (Perturb);
//  3. one phase per further scenario (flash sales and batch windows, then
//     the adversarial set, in the order given), every domain, randomised.
//
// Phases 2 and on share the remaining steps equally.
type SoldierStage struct {
	Cluster *domains.Config
	// Scenarios are the training scenarios: the first is the base (steady
	// traffic), the others add events. Episodes are random windows of them.
	Scenarios []sim.Scenario
	Episode   time.Duration // simulated time per episode; default 3h
	Steps     int64         // environment steps (agent decisions), all phases
	Workers   int           // parallel environments; default 2
	Horizon   int           // decision steps per worker per update; default 128
	Seed      uint64
	PPO       rl.Config // default SoldierPPO
	// Domain is the single-domain phase's and the gate's domain; default
	// the first domain of the highest priority.
	Domain string
	// GateEpisodes and CheckEpisodes are the held-in evaluation episodes
	// of the gate and of the reward-outcome check; defaults 8 and 24.
	GateEpisodes, CheckEpisodes int
	Progress, CSV               io.Writer // as Config's
}

// SoldierPPO is the Soldier stage's PPO configuration: the defaults with a
// discount of 0.98 per 10 s tick (a horizon of some 8 minutes, longer than
// a startup and a scale-down cooldown), 4 epochs of 256-step minibatches
// and a learning rate of 3e-4, KL early stop at 0.02.
func SoldierPPO() rl.Config {
	c := rl.DefaultConfig("soldier")
	c.Gamma, c.Epochs, c.MinibatchSize = 0.98, 4, 256
	c.EntropyCoef = 0.001
	return c
}

func (st *SoldierStage) defaults() {
	if st.PPO.Level == "" {
		st.PPO = SoldierPPO()
	}
	if st.GateEpisodes <= 0 {
		st.GateEpisodes = 8
	}
	if st.CheckEpisodes <= 0 {
		st.CheckEpisodes = 24
	}
	if st.Domain == "" && len(st.Cluster.Domains) > 0 {
		best := 0
		for i, d := range st.Cluster.Domains {
			if d.Priority < st.Cluster.Domains[best].Priority {
				best = i
			}
		}
		st.Domain = st.Cluster.Domains[best].Name
	}
}

func (st *SoldierStage) env(domains []string, randomise bool, scenarios []sim.Scenario) func(int) (Env, error) {
	cfg := SoldierEnvConfig{Cluster: st.Cluster, Domains: domains, Scenarios: scenarios, Episode: st.Episode, Randomise: randomise}
	return func(int) (Env, error) { return NewSoldierEnv(cfg) }
}

// Phases is the stage's curriculum.
func (st *SoldierStage) Phases() []Phase {
	st.defaults()
	steady := st.Steps / 10
	rest := st.Steps - steady
	n := int64(len(st.Scenarios)) // cluster on the base, then one per further scenario
	ph := []Phase{
		{Name: "steady", Steps: steady, NewEnv: st.env([]string{st.Domain}, false, st.Scenarios[:1])},
		{Name: "cluster", Steps: rest / n, NewEnv: st.env(nil, true, st.Scenarios[:1])},
	}
	for _, sc := range st.Scenarios[1:] {
		ph = append(ph, Phase{Name: sc.Name, Steps: rest / n, NewEnv: st.env(nil, true, []sim.Scenario{sc})})
	}
	return ph
}

// SoldierResult is what TrainSoldier did.
type SoldierResult struct {
	Run Result
	// Gate is the gate on the held-in single-domain set; GateBefore is the
	// same episodes under the policy training started from.
	Gate, GateBefore GateResult
	// Check is the reward-outcome check over the held-in full-cluster
	// episodes (every scenario, randomised); CheckBefore and CheckAfter
	// sum those episodes' outcomes before and after training.
	Check                   CheckReport
	CheckBefore, CheckAfter GateResult
}

// TrainSoldier trains p (soldier.LearnedLayout; a fresh
// soldier.NewLearnedPolicy or a checkpoint to continue) through the
// curriculum, then evaluates the gate and the reward-outcome check. It
// returns the result even when the gate fails, and stops early with ctx's
// error when ctx ends.
func TrainSoldier(ctx context.Context, p *rl.Policy, st SoldierStage) (SoldierResult, error) {
	var res SoldierResult
	if len(st.Scenarios) == 0 {
		return res, fmt.Errorf("soldier stage: no training scenarios")
	}
	phases := st.Phases()
	gateEnv := st.env([]string{st.Domain}, false, st.Scenarios[:1])
	checkEnv := st.env(nil, true, st.Scenarios)
	workers := max(st.Workers, 1)
	before := p.Clone()
	before.Norm.Frozen = true
	var err error
	gateSeed, checkSeed := st.Seed+1, st.Seed+2

	eps, err := Evaluate(ctx, before, gateEnv, workers, st.GateEpisodes, gateSeed)
	if err != nil {
		return res, err
	}
	res.GateBefore = SoldierGate.Check(eps)
	if eps, err = Evaluate(ctx, before, checkEnv, workers, st.CheckEpisodes, checkSeed); err != nil {
		return res, err
	}
	res.CheckBefore = SoldierGate.Check(eps)

	cfg := Config{Workers: st.Workers, Horizon: st.Horizon, Seed: st.Seed, PPO: st.PPO, Progress: st.Progress, CSV: st.CSV}
	if res.Run, err = Run(ctx, cfg, p, phases); err != nil {
		return res, err
	}
	p.Norm.Frozen = true
	if eps, err = Evaluate(ctx, p, gateEnv, workers, st.GateEpisodes, gateSeed); err != nil {
		return res, err
	}
	res.Gate = SoldierGate.Check(eps)
	if eps, err = Evaluate(ctx, p, checkEnv, workers, st.CheckEpisodes, checkSeed); err != nil {
		return res, err
	}
	res.CheckAfter = SoldierGate.Check(eps)
	res.Check = Check("soldier", soldierTerms, eps)

	names := make([]string, len(st.Scenarios))
	for i, sc := range st.Scenarios {
		names[i] = sc.Name
	}
	prev := p.Provenance
	p.Provenance = rl.Provenance{Stage: "soldier", Steps: prev.Steps + res.Run.Steps, Updates: prev.Updates + int64(res.Run.Updates), Seed: st.Seed,
		Scenarios: names, Metrics: map[string]float64{
			"gate_compliance": res.Gate.Compliance, "gate_before_compliance": res.GateBefore.Compliance,
			"check_compliance": res.CheckAfter.Compliance, "check_before_compliance": res.CheckBefore.Compliance,
			"check_cost_core_hours": res.CheckAfter.CostCoreHours, "check_before_cost_core_hours": res.CheckBefore.CostCoreHours,
			"check_actions": res.CheckAfter.Actions, "check_before_actions": res.CheckBefore.Actions,
		}}
	return res, nil
}

// NewSoldierPolicy returns the Soldier stage's starting policy for cfg: the
// learned Soldier network warm-started on soldier.SqrtStaffing at the config's
// staffing safety, with exploration sigma e^-1.
func NewSoldierPolicy(cfg *domains.Config, seed uint64) (*rl.Policy, error) {
	return soldier.NewLearnedPolicy(rand.New(rand.NewPCG(seed, 0x736f6c64)), cfg.Soldier.StaffingSafety, -1)
}
