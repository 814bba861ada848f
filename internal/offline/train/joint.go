package train

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// JointStage configures TrainJoint: joint fine-tuning of a learned Soldier
// and a learned Commander, alternating between the levels with the other
// one frozen (docs/training.md#joint-fine-tuning).
type JointStage struct {
	Cluster *domains.Config
	// Scenarios are the training scenarios, the first the base (as the
	// Soldier and Commander stages' Scenarios).
	Scenarios []sim.Scenario
	// Rounds is the number of alternations; default 2. Each round trains
	// the Commander level, then the Soldier level.
	Rounds int
	// Steps is the environment steps of the whole run. Each round gets
	// Steps / Rounds, split equally between its two levels (a Commander
	// step is one Commander tick; a Soldier step one app group's decision).
	Steps   int64
	Workers int // parallel environments; default 2
	Seed    uint64
	// Episode is the Soldier level's simulated time per episode; default 3h.
	Episode time.Duration
	// Commander shapes the Commander level's episodes (its Soldier field is
	// set every round to the current Soldier).
	Commander CommanderEnvOptions
	// SoldierPPO and CommanderPPO default to SoldierPPO() and
	// rl.DefaultConfig("commander").
	SoldierPPO, CommanderPPO rl.Config
	// CommanderGateEpisodes (default 16) and SoldierGateEpisodes (default
	// 8) are the gates' held-in episodes; CheckEpisodes (default 24 for the
	// Soldier level, 16 for the Commander level when 0) the reward-outcome
	// checks'.
	CommanderGateEpisodes, SoldierGateEpisodes, CheckEpisodes int
	Progress, CSV                                             io.Writer // as Config's
}

// JointRound is what one round of TrainJoint did.
type JointRound struct {
	Round int `json:"round"` // 1-based
	// Commander level: the run, the Commander gate (against the Forecast
	// heuristic, with the round's Soldier frozen) and the reward-outcome
	// check over held-in episodes.
	CommanderRun   Result        `json:"commander_run"`
	CommanderGate  CommanderGate `json:"commander_gate"`
	CommanderCheck CheckReport   `json:"commander_check"`
	// Soldier level, with the round's Commander frozen: the run, the
	// Soldier gate (held-in single-domain episodes under the stand-in
	// Commander, as the Soldier stage's gate) and the reward-outcome check
	// over held-in full-cluster episodes under the learned Commander, with
	// those episodes' outcomes.
	SoldierRun      Result      `json:"soldier_run"`
	SoldierGate     GateResult  `json:"soldier_gate"`
	SoldierCheck    CheckReport `json:"soldier_check"`
	SoldierOutcomes GateResult  `json:"soldier_check_outcomes"`
}

// Pass reports whether both of the round's gates passed.
func (r JointRound) Pass() bool { return r.CommanderGate.Pass && r.SoldierGate.Pass }

func (st *JointStage) defaults() {
	if st.Rounds <= 0 {
		st.Rounds = 2
	}
	if st.Workers <= 0 {
		st.Workers = 2
	}
	if st.SoldierPPO.Level == "" {
		st.SoldierPPO = SoldierPPO()
	}
	if st.CommanderPPO.Level == "" {
		st.CommanderPPO = rl.DefaultConfig("commander")
	}
	if st.CommanderGateEpisodes <= 0 {
		st.CommanderGateEpisodes = 16
	}
	if st.SoldierGateEpisodes <= 0 {
		st.SoldierGateEpisodes = 8
	}
	if st.CheckEpisodes <= 0 {
		st.CheckEpisodes = 24
	}
}

// TrainJoint fine-tunes sp (a Soldier policy, soldier.LearnedLayout) and cp
// (a Commander policy for st.Cluster's domains, commander.ObsLayout) in
// place, for st.Rounds rounds of
//
//  1. the Commander level: PPO on cp resumed as it is (no warm start) in
//     the Commander env with the Soldiers frozen on a copy of sp; then the
//     Commander gate and the reward-outcome check;
//  2. the Soldier level: PPO on sp in Soldier envs whose budgets come from
//     a Commander running a frozen copy of cp (SoldierEnvConfig.Commander),
//     every domain, randomised, one phase per scenario; then the Soldier
//     gate and the reward-outcome check.
//
// It calls after (when not nil) after each round, for the caller to save
// the checkpoints and the round's report, and returns every round's report.
// It is deterministic for st.Seed and stops with ctx's error when ctx ends.
func TrainJoint(ctx context.Context, sp, cp *rl.Policy, st JointStage, after func(JointRound) error) ([]JointRound, error) {
	st.defaults()
	if len(st.Scenarios) == 0 {
		return nil, fmt.Errorf("joint stage: no training scenarios")
	}
	perLevel := st.Steps / int64(st.Rounds) / 2
	if perLevel < 1 {
		return nil, fmt.Errorf("joint stage: %d steps are too few for %d rounds of two levels", st.Steps, st.Rounds)
	}
	csv := st.CSV
	if csv != nil {
		csv = &oneHeader{w: csv}
	}
	commanderChecks := st.CheckEpisodes
	names := make([]string, len(st.Scenarios))
	for i, sc := range st.Scenarios {
		names[i] = sc.Name
	}
	var rounds []JointRound
	for k := 1; k <= st.Rounds; k++ {
		rd := JointRound{Round: k}
		// Training seeds differ per round; the gates and checks use the
		// same held-in episodes every round (Seed+1, Seed+2), comparable
		// across rounds.
		seed := st.Seed + uint64(k)*1000

		// The Commander level, the current Soldier frozen.
		progressf(st.Progress, "joint round %d/%d: commander level, %d env steps, soldier frozen\n", k, st.Rounds, perLevel)
		frozenS := sp.Clone()
		frozenS.Norm.Frozen = true
		opt := st.Commander
		opt.Soldier = frozenS
		newCmdEnv := func() (*CommanderEnv, error) { return NewCommanderEnv(st.Cluster, st.Scenarios, opt) }
		prevC := cp.Provenance
		_, cres, err := TrainCommander(ctx, newCmdEnv, CommanderStage{Init: cp, Name: fmt.Sprintf("r%d/commander", k),
			Steps: perLevel, Workers: st.Workers, Seed: seed, PPO: st.CommanderPPO, GateEpisodes: st.CommanderGateEpisodes, GateSeed: st.Seed + 1,
			Progress: st.Progress, CSV: csv})
		if err != nil {
			return rounds, fmt.Errorf("joint round %d, commander level: %w", k, err)
		}
		rd.CommanderRun, rd.CommanderGate = cres.Run, cres.Gate
		eps, err := Evaluate(ctx, cp, func(int) (Env, error) { return newCmdEnv() }, st.Workers, commanderChecks, st.Seed+2)
		if err != nil {
			return rounds, fmt.Errorf("joint round %d, commander check: %w", k, err)
		}
		rd.CommanderCheck = Check("commander", CommanderTerms, eps)
		cp.Provenance = rl.Provenance{Stage: "joint", Steps: prevC.Steps + cres.Run.Steps, Updates: prevC.Updates + int64(cres.Run.Updates),
			Seed: st.Seed, Scenarios: names, Metrics: map[string]float64{
				"round": float64(k), "gate_compliance": cres.Gate.Compliance, "gate_heuristic_compliance": cres.Gate.HeuristicCompliance,
				"gate_cost_core_hours": cres.Gate.CostCoreHours, "gate_heuristic_cost_core_hours": cres.Gate.HeuristicCostCoreHours,
			}}

		// The Soldier level, the current Commander frozen.
		progressf(st.Progress, "joint round %d/%d: soldier level, %d env steps, commander frozen\n", k, st.Rounds, perLevel)
		frozenC := cp.Clone()
		frozenC.Norm.Frozen = true
		envCfg := func(scs []sim.Scenario) func(int) (Env, error) {
			c := SoldierEnvConfig{Cluster: st.Cluster, Scenarios: scs, Episode: st.Episode, Randomise: true, Commander: frozenC}
			return func(int) (Env, error) { return NewSoldierEnv(c) }
		}
		n := int64(len(st.Scenarios))
		phases := []Phase{{Name: fmt.Sprintf("r%d/soldier/cluster", k), Steps: perLevel / n, NewEnv: envCfg(st.Scenarios[:1])}}
		for _, sc := range st.Scenarios[1:] {
			phases = append(phases, Phase{Name: fmt.Sprintf("r%d/soldier/%s", k, sc.Name), Steps: perLevel / n, NewEnv: envCfg([]sim.Scenario{sc})})
		}
		prevS := sp.Provenance
		cfg := Config{Workers: st.Workers, Horizon: 0, Seed: seed + 3, PPO: st.SoldierPPO, Progress: st.Progress, CSV: csv}
		if rd.SoldierRun, err = Run(ctx, cfg, sp, phases); err != nil {
			return rounds, fmt.Errorf("joint round %d, soldier level: %w", k, err)
		}
		ss := SoldierStage{Cluster: st.Cluster, Scenarios: st.Scenarios, Episode: st.Episode, GateEpisodes: st.SoldierGateEpisodes, CheckEpisodes: st.CheckEpisodes}
		ss.defaults()
		frozen := sp.Norm.Frozen
		sp.Norm.Frozen = true
		eps, err = Evaluate(ctx, sp, ss.env([]string{ss.Domain}, false, st.Scenarios[:1]), st.Workers, ss.GateEpisodes, st.Seed+1)
		if err != nil {
			return rounds, fmt.Errorf("joint round %d, soldier gate: %w", k, err)
		}
		rd.SoldierGate = SoldierGate.Check(eps)
		if eps, err = Evaluate(ctx, sp, envCfg(st.Scenarios), st.Workers, ss.CheckEpisodes, st.Seed+2); err != nil {
			return rounds, fmt.Errorf("joint round %d, soldier check: %w", k, err)
		}
		sp.Norm.Frozen = frozen
		rd.SoldierOutcomes = SoldierGate.Check(eps)
		rd.SoldierCheck = Check("soldier", soldierTerms, eps)
		sp.Provenance = rl.Provenance{Stage: "joint", Steps: prevS.Steps + rd.SoldierRun.Steps, Updates: prevS.Updates + int64(rd.SoldierRun.Updates),
			Seed: st.Seed, Scenarios: names, Metrics: map[string]float64{
				"round": float64(k), "gate_compliance": rd.SoldierGate.Compliance,
				"check_compliance": rd.SoldierOutcomes.Compliance, "check_cost_core_hours": rd.SoldierOutcomes.CostCoreHours,
				"check_actions": rd.SoldierOutcomes.Actions,
			}}
		progressf(st.Progress, "joint round %d/%d: %s; soldier gate pass=%t compliance %.4f; full cluster under the learned commander: compliance %.4f, cost %.1f core-hours, actions %.1f per episode\n",
			k, st.Rounds, rd.CommanderGate, rd.SoldierGate.Pass, rd.SoldierGate.Compliance, rd.SoldierOutcomes.Compliance, rd.SoldierOutcomes.CostCoreHours, rd.SoldierOutcomes.Actions)
		rounds = append(rounds, rd)
		if after != nil {
			if err := after(rd); err != nil {
				return rounds, err
			}
		}
	}
	return rounds, nil
}

func progressf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}

// oneHeader passes writes through but drops the trainer's CSV header after
// the first, so the runs of every round and level share one table.
type oneHeader struct {
	w    io.Writer
	seen bool
}

func (o *oneHeader) Write(b []byte) (int, error) {
	if bytes.Equal(b, []byte(csvHeader)) {
		if o.seen {
			return len(b), nil
		}
		o.seen = true
	}
	return o.w.Write(b)
}
