package train

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/regimentd/regiment/internal/core/rl"
)

// CommanderGate is the Commander stage's gate
// (docs/training.md#the-commander-stage): on a fixed held-in set of episodes
// (training scenarios, fixed seeds) the learned Commander's mean action must
// keep SLO compliance within GateComplianceSlack of the Forecast heuristic's
// and cost no more provisioned core-hours than it, on the very same episodes
// (same scenario window, scaling, events, noise and Soldiers).
type CommanderGate struct {
	Episodes int `json:"episodes"`
	// Compliance is the mean per-step SLO compliance (compliant share of
	// app-ticks with traffic), learned and heuristic.
	Compliance          float64 `json:"compliance"`
	HeuristicCompliance float64 `json:"heuristic_compliance"`
	// CostCoreHours is the provisioned node core-hours summed over the
	// episodes, learned and heuristic.
	CostCoreHours          float64 `json:"cost_core_hours"`
	HeuristicCostCoreHours float64 `json:"heuristic_cost_core_hours"`
	// Return is the mean undiscounted episode return, learned and heuristic.
	Return          float64 `json:"return"`
	HeuristicReturn float64 `json:"heuristic_return"`
	Pass            bool    `json:"pass"`
}

// GateComplianceSlack is how far below the heuristic's compliance the
// learned Commander may be and pass the gate: 0.1 percentage points, the
// seed-to-seed noise of compliance on a held-in episode set.
const GateComplianceSlack = 0.001

func (g CommanderGate) String() string {
	verdict := "FAIL"
	if g.Pass {
		verdict = "pass"
	}
	return fmt.Sprintf("commander gate %s on %d held-in episodes: compliance %.4f (heuristic %.4f, slack %.3f), cost %.1f core-hours (heuristic %.1f, %.3fx), return %.2f (heuristic %.2f)",
		verdict, g.Episodes, g.Compliance, g.HeuristicCompliance, GateComplianceSlack, g.CostCoreHours, g.HeuristicCostCoreHours,
		g.CostCoreHours/g.HeuristicCostCoreHours, g.Return, g.HeuristicReturn)
}

// EvaluateCommanderGate runs episodes held-in episodes of env twice, once
// with p's mean action and once with the Forecast heuristic, episode k
// drawn from a generator seeded (seed, k) both times, and scores the gate.
// p is not changed (its normaliser is frozen for the evaluation and
// restored).
func EvaluateCommanderGate(ctx context.Context, env *CommanderEnv, p *rl.Policy, episodes int, seed uint64) (CommanderGate, error) {
	frozen := p.Norm.Frozen
	p.Norm.Frozen = true
	defer func() { p.Norm.Frozen = frozen }()
	spec := env.Spec()
	n := len(env.cfg.Domains)
	obs := [][]float64{make([]float64, spec.Obs.Dim())}
	act := [][]float64{make([]float64, spec.Act.Dim())}
	rew := make([]float64, 1)
	pa := p.NewAction()
	zero := make([]float64, spec.Act.Dim())
	ZeroResidual(zero, n)
	g := CommanderGate{Episodes: episodes}
	for k := range episodes {
		for _, learned := range []bool{true, false} {
			if err := ctx.Err(); err != nil {
				return g, err
			}
			env.Reset(rand.New(rand.NewPCG(seed, uint64(k))), obs)
			var compliance, cost, ret float64
			steps := 0
			for done := false; !done; steps++ {
				if learned {
					p.Mean(obs[0], pa)
					copy(act[0], pa.Env)
				} else {
					copy(act[0], zero)
				}
				var out Outcome
				done, out = env.Step(act, obs, rew)
				compliance += out.Compliance
				cost += out.CostCoreHours
				ret += rew[0]
			}
			if learned {
				g.Compliance += compliance / float64(steps) / float64(episodes)
				g.CostCoreHours += cost
				g.Return += ret / float64(episodes)
			} else {
				g.HeuristicCompliance += compliance / float64(steps) / float64(episodes)
				g.HeuristicCostCoreHours += cost
				g.HeuristicReturn += ret / float64(episodes)
			}
		}
	}
	g.Pass = g.Compliance >= g.HeuristicCompliance-GateComplianceSlack && g.CostCoreHours <= g.HeuristicCostCoreHours
	return g, nil
}

// CommanderStage configures TrainCommander.
type CommanderStage struct {
	Env CommanderEnvOptions
	// Init, when not nil, is the policy to resume from (a Commander
	// checkpoint for the same domains): it is trained in place and there is
	// no warm start (WarmStart and Arch are ignored). Its observation
	// normaliser continues from its running statistics (Run unfreezes it).
	Init      *rl.Policy
	WarmStart WarmStartOptions
	// Name is the training phase's name in progress lines and the CSV;
	// default "commander".
	Name string
	// Steps is the PPO environment steps after cloning; 0 stops after
	// cloning.
	Steps   int64
	Workers int    // parallel environments; default 2
	Horizon int    // steps per worker per update; default 512 (two episodes)
	Seed    uint64 // seeds cloning, PPO and the gate's episodes (seed + 1)
	PPO     rl.Config
	// Arch is the actor's and the critic's architecture; default 2 x 64 tanh.
	Arch rl.Arch
	// GateEpisodes is the number of held-in episodes of the gate; default 16.
	GateEpisodes int
	// GateSeed seeds the gate's episodes; 0: Seed + 1. Runs that share it
	// (the rounds of joint fine-tuning) are gated on the same episodes.
	GateSeed uint64
	Progress io.Writer // progress lines, as Run's
	CSV      io.Writer // per-update CSV, as Run's
}

// CommanderClone is the warm start's report (WarmStartCommander): the
// policy starts as an exact copy of the Forecast heuristic.
type CommanderClone = WarmStartStats

// CommanderResult is what TrainCommander did.
type CommanderResult struct {
	Clone CommanderClone // the warm start on the heuristic
	Run   Result
	Gate  CommanderGate
}

// TrainCommander trains a learned Commander for the env that newEnv builds
// (every call a fresh NewCommanderEnv on the training scenarios): a new
// policy (observation commander.ObsLayout, action commander.ActionLayout, a
// residual on the Forecast heuristic) warm-started to act exactly as the
// heuristic (WarmStartCommander), then st.Steps of PPO with
// the Soldiers frozen (Run, st.Workers parallel environments), then the
// gate on st.GateEpisodes held-in episodes. It returns the policy even when
// the gate fails (the caller decides what to keep) and stops early, with
// ctx's error, when ctx ends.
func TrainCommander(ctx context.Context, newEnv func() (*CommanderEnv, error), st CommanderStage) (*rl.Policy, CommanderResult, error) {
	if st.GateEpisodes <= 0 {
		st.GateEpisodes = 16
	}
	if st.Horizon <= 0 {
		st.Horizon = 512
	}
	if st.PPO.Level == "" {
		st.PPO = rl.DefaultConfig("commander")
	}
	var res CommanderResult
	env, err := newEnv()
	if err != nil {
		return nil, res, err
	}
	if st.Name == "" {
		st.Name = "commander"
	}
	p := st.Init
	prev := rl.Provenance{}
	if p != nil {
		if err := rl.CheckLayout(p.Spec.Obs, env.Spec().Obs); err != nil {
			return nil, res, fmt.Errorf("commander stage: resume: %w", err)
		}
		if !p.Spec.Action.Equal(env.Spec().Act) {
			return nil, res, fmt.Errorf("commander stage: resume: the policy's action layout %v is not the env's %v", p.Spec.Action.Segments, env.Spec().Act.Segments)
		}
		prev = p.Provenance
	} else {
		spec := rl.DefaultSpec(env.Spec().Obs, env.Spec().Act)
		if len(st.Arch.Hidden) > 0 {
			spec.Actor, spec.Critic = st.Arch, st.Arch
		}
		r := rand.New(rand.NewPCG(st.Seed, 0x636f6d6d))
		if p, err = rl.NewPolicy(spec, r); err != nil {
			return nil, res, err
		}
		if res.Clone, err = WarmStartCommander(env, p, r, st.WarmStart); err != nil {
			return nil, res, err
		}
		if st.Progress != nil {
			fmt.Fprintf(st.Progress, "commander: warm start on the Forecast heuristic, %d steps: value loss %.2f -> %.2f\n",
				res.Clone.Samples, res.Clone.ValueLoss0, res.Clone.ValueLoss)
		}
	}
	if st.Steps > 0 {
		cfg := Config{Workers: st.Workers, Horizon: st.Horizon, Seed: st.Seed, PPO: st.PPO, Progress: st.Progress, CSV: st.CSV}
		phase := Phase{Name: st.Name, Steps: st.Steps, NewEnv: func(int) (Env, error) { return newEnv() }}
		if res.Run, err = Run(ctx, cfg, p, []Phase{phase}); err != nil {
			return p, res, err
		}
	}
	p.Norm.Frozen = true
	if st.GateSeed == 0 {
		st.GateSeed = st.Seed + 1
	}
	if res.Gate, err = EvaluateCommanderGate(ctx, env, p, st.GateEpisodes, st.GateSeed); err != nil {
		return p, res, err
	}
	p.Provenance = rl.Provenance{Stage: "commander", Steps: prev.Steps + res.Run.Steps + int64(res.Clone.Samples), Updates: prev.Updates + int64(res.Run.Updates), Seed: st.Seed,
		Metrics: map[string]float64{
			"gate_compliance": res.Gate.Compliance, "gate_heuristic_compliance": res.Gate.HeuristicCompliance,
			"gate_cost_core_hours": res.Gate.CostCoreHours, "gate_heuristic_cost_core_hours": res.Gate.HeuristicCostCoreHours,
		}}
	if st.Progress != nil {
		fmt.Fprintln(st.Progress, res.Gate)
	}
	return p, res, nil
}
