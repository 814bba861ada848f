package train

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/infile"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// The stages RunStage trains (Options.Stage).
const (
	StageSoldier   = "soldier"
	StageCommander = "commander"
	StageJoint     = "joint"
)

// Options is one training run, `regiment train`'s flags once its config and
// scenarios are loaded.
type Options struct {
	Config *domains.Config
	// Scenarios, the first the base; each must outlast Episode (regiment
	// train refuses one that does not).
	Scenarios []sim.Scenario
	Stage     string        // StageSoldier, StageCommander or StageJoint
	Steps     int64         // environment steps (agent decisions); the joint stage splits them over rounds and levels
	Envs      int           // parallel environments
	Seed      uint64        // training seed
	Episode   time.Duration // simulated time per episode (Soldier and joint stages)
	LR        float64       // PPO learning rate; 0: the stage's default
	// Init is the checkpoint the Soldier stage continues from; "": a fresh
	// warm-started policy.
	Init string
	// InitSoldier and InitCommander are the checkpoints the joint stage
	// starts from (JointStart), Rounds its rounds.
	InitSoldier, InitCommander string
	Rounds                     int
	// Out is the directory the checkpoints, gate.json, check.json and
	// train.csv go to; it must exist.
	Out string
}

// RunStage trains o's stage and writes its checkpoints, gate.json,
// check.json and train.csv (one row per PPO update) into o.Out. The gates'
// and checks' verdicts go to out, a progress line per update to progress.
// Training is deterministic for a seed and a number of environments.
func RunStage(ctx context.Context, o Options, out, progress io.Writer) error {
	var run func(context.Context, Options, io.Writer, io.Writer, io.Writer) error
	switch o.Stage {
	case StageSoldier:
		run = runSoldier
	case StageCommander:
		run = runCommander
	case StageJoint:
		run = runJoint
	default:
		return fmt.Errorf("unknown stage %q (want soldier, commander or joint)", o.Stage)
	}
	csv, err := os.Create(filepath.Join(o.Out, "train.csv"))
	if err != nil {
		return err
	}
	defer csv.Close()
	return run(ctx, o, csv, out, progress)
}

// JointStart is where the joint stage starts: the checkpoints given, else
// the config's policies when they name checkpoints; "" when neither does.
func JointStart(cfg *domains.Config, initSoldier, initCommander string) (string, string) {
	if initSoldier == "" && cfg.Soldier.Policy != soldier.ProportionalPolicy && cfg.Soldier.Policy != "" {
		initSoldier = cfg.Soldier.Policy
	}
	if initCommander == "" && cfg.Commander.Policy != commander.ForecastPolicy && cfg.Commander.Policy != "" {
		initCommander = cfg.Commander.Policy
	}
	return initSoldier, initCommander
}

func runSoldier(ctx context.Context, o Options, csv, out, progress io.Writer) error {
	var p *rl.Policy
	var err error
	if o.Init != "" {
		p, err = loadPolicy(o.Init, soldier.LearnedLayout())
	} else {
		p, err = NewSoldierPolicy(o.Config, o.Seed)
	}
	if err != nil {
		return err
	}
	st := SoldierStage{Cluster: o.Config, Scenarios: o.Scenarios, Episode: o.Episode, Steps: o.Steps, Workers: o.Envs, Seed: o.Seed,
		Progress: progress, CSV: csv, PPO: SoldierPPO()}
	if o.LR > 0 {
		st.PPO.LR = o.LR
	}
	res, err := TrainSoldier(ctx, p, st)
	if err != nil {
		return err
	}
	p.Provenance.Date = time.Now().UTC()
	if err := saveCheckpoint(filepath.Join(o.Out, "soldier.ckpt"), p); err != nil {
		return err
	}
	gate := map[string]any{"gate": res.Gate, "gate_before_training": res.GateBefore,
		"check_episodes_after": res.CheckAfter, "check_episodes_before": res.CheckBefore,
		"steps": res.Run.Steps, "updates": res.Run.Updates, "seconds": res.Run.Elapsed.Seconds(), "steps_per_second": res.Run.StepsPerSec()}
	if err := writeJSON(filepath.Join(o.Out, "gate.json"), gate); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(o.Out, "check.json"), res.Check); err != nil {
		return err
	}
	res.Check.Write(out)
	fmt.Fprintf(out, "soldier gate %s: compliance %.4f on %d held-in single-domain episodes (gate %.2f; before training %.4f)\n",
		verdict(res.Gate.Pass), res.Gate.Compliance, res.Gate.Episodes, res.Gate.MinCompliance, res.GateBefore.Compliance)
	fmt.Fprintf(out, "full-cluster held-in episodes, before -> after: compliance %.4f -> %.4f, cost %.1f -> %.1f core-hours, actions %.1f -> %.1f per episode\n",
		res.CheckBefore.Compliance, res.CheckAfter.Compliance, res.CheckBefore.CostCoreHours, res.CheckAfter.CostCoreHours, res.CheckBefore.Actions, res.CheckAfter.Actions)
	fmt.Fprintf(out, "%d env steps, %d updates in %s: %.0f env steps/s\n", res.Run.Steps, res.Run.Updates, res.Run.Elapsed.Round(time.Second), res.Run.StepsPerSec())
	return nil
}

func runCommander(ctx context.Context, o Options, csv, out, progress io.Writer) error {
	newEnv := func() (*CommanderEnv, error) { return NewCommanderEnv(o.Config, o.Scenarios, CommanderEnvOptions{}) }
	st := CommanderStage{Steps: o.Steps, Workers: o.Envs, Seed: o.Seed, Progress: progress, CSV: csv}
	if o.LR > 0 {
		st.PPO = rl.DefaultConfig("commander")
		st.PPO.LR = o.LR
	}
	p, res, err := TrainCommander(ctx, newEnv, st)
	if err != nil {
		return err
	}
	eps, err := Evaluate(ctx, p, func(int) (Env, error) { return newEnv() }, o.Envs, 16, o.Seed+2)
	if err != nil {
		return err
	}
	check := Check("commander", CommanderTerms, eps)
	p.Provenance.Date = time.Now().UTC()
	if err := saveCheckpoint(filepath.Join(o.Out, "commander.ckpt"), p); err != nil {
		return err
	}
	gate := map[string]any{"gate": res.Gate, "clone": res.Clone, "steps": res.Run.Steps, "updates": res.Run.Updates,
		"seconds": res.Run.Elapsed.Seconds(), "steps_per_second": res.Run.StepsPerSec()}
	if err := writeJSON(filepath.Join(o.Out, "gate.json"), gate); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(o.Out, "check.json"), check); err != nil {
		return err
	}
	check.Write(out)
	fmt.Fprintln(out, res.Gate)
	fmt.Fprintf(out, "%d env steps, %d updates in %s: %.0f env steps/s\n", res.Run.Steps, res.Run.Updates, res.Run.Elapsed.Round(time.Second), res.Run.StepsPerSec())
	return nil
}

func runJoint(ctx context.Context, o Options, csv, out, progress io.Writer) error {
	sp, err := loadPolicy(o.InitSoldier, soldier.LearnedLayout())
	if err != nil {
		return err
	}
	cp, err := loadPolicy(o.InitCommander, commander.ObsLayout(o.Config))
	if err != nil {
		return err
	}
	if _, err := commander.NewLearned(cp, o.Config); err != nil {
		return fmt.Errorf("load checkpoint %q: %w", o.InitCommander, err)
	}
	st := JointStage{Cluster: o.Config, Scenarios: o.Scenarios, Rounds: o.Rounds, Steps: o.Steps, Workers: o.Envs, Seed: o.Seed,
		Episode: o.Episode, Progress: progress, CSV: csv, SoldierPPO: SoldierPPO(), CommanderPPO: rl.DefaultConfig("commander")}
	if o.LR > 0 {
		st.SoldierPPO.LR, st.CommanderPPO.LR = o.LR, o.LR
	}
	l := &jointLog{dir: o.Out, rounds: o.Rounds, sp: sp, cp: cp, out: out}
	_, err = TrainJoint(ctx, sp, cp, st, l.after)
	return err
}

// jointLog writes what the joint stage has done after each of its rounds.
type jointLog struct {
	dir    string
	rounds int
	sp, cp *rl.Policy
	out    io.Writer
	gates  []jointGates
	checks []jointChecks
}

// jointGates is a round's entry of the joint stage's gate.json.
type jointGates struct {
	Round           int           `json:"round"`
	Pass            bool          `json:"pass"`
	CommanderGate   CommanderGate `json:"commander_gate"`
	SoldierGate     GateResult    `json:"soldier_gate"`
	SoldierOutcomes GateResult    `json:"soldier_check_outcomes"`
	CommanderSteps  int64         `json:"commander_steps"`
	CommanderRate   float64       `json:"commander_steps_per_second"`
	SoldierSteps    int64         `json:"soldier_steps"`
	SoldierRate     float64       `json:"soldier_steps_per_second"`
}

// jointChecks is a round's entry of the joint stage's check.json.
type jointChecks struct {
	Round     int         `json:"round"`
	Commander CheckReport `json:"commander"`
	Soldier   CheckReport `json:"soldier"`
}

// after saves round r's pair at the top of dir and in dir/roundN/ (a later
// round may fail a gate an earlier one passed), rewrites gate.json and
// check.json with every round so far and prints the round's verdicts.
func (l *jointLog) after(r JointRound) error {
	now := time.Now().UTC()
	l.sp.Provenance.Date, l.cp.Provenance.Date = now, now
	roundDir := filepath.Join(l.dir, fmt.Sprintf("round%d", r.Round))
	if err := os.MkdirAll(roundDir, 0o755); err != nil {
		return err
	}
	for _, dir := range []string{l.dir, roundDir} {
		if err := saveCheckpoint(filepath.Join(dir, "soldier.ckpt"), l.sp); err != nil {
			return err
		}
		if err := saveCheckpoint(filepath.Join(dir, "commander.ckpt"), l.cp); err != nil {
			return err
		}
	}
	l.gates = append(l.gates, jointGates{Round: r.Round, Pass: r.Pass(), CommanderGate: r.CommanderGate, SoldierGate: r.SoldierGate, SoldierOutcomes: r.SoldierOutcomes,
		CommanderSteps: r.CommanderRun.Steps, CommanderRate: r.CommanderRun.StepsPerSec(), SoldierSteps: r.SoldierRun.Steps, SoldierRate: r.SoldierRun.StepsPerSec()})
	l.checks = append(l.checks, jointChecks{Round: r.Round, Commander: r.CommanderCheck, Soldier: r.SoldierCheck})
	if err := writeJSON(filepath.Join(l.dir, "gate.json"), l.gates); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(l.dir, "check.json"), l.checks); err != nil {
		return err
	}
	fmt.Fprintf(l.out, "round %d/%d\n", r.Round, l.rounds)
	r.CommanderCheck.Write(l.out)
	r.SoldierCheck.Write(l.out)
	fmt.Fprintf(l.out, "  %s\n", r.CommanderGate)
	fmt.Fprintf(l.out, "  soldier gate %s: compliance %.4f on %d held-in single-domain episodes (gate %.2f)\n",
		verdict(r.SoldierGate.Pass), r.SoldierGate.Compliance, r.SoldierGate.Episodes, r.SoldierGate.MinCompliance)
	fmt.Fprintf(l.out, "  full cluster under the learned commander: compliance %.4f, cost %.1f core-hours, actions %.1f per episode\n",
		r.SoldierOutcomes.Compliance, r.SoldierOutcomes.CostCoreHours, r.SoldierOutcomes.Actions)
	fmt.Fprintf(l.out, "  commander level %d env steps at %.0f/s, soldier level %d env steps at %.0f/s\n",
		r.CommanderRun.Steps, r.CommanderRun.StepsPerSec(), r.SoldierRun.Steps, r.SoldierRun.StepsPerSec())
	return nil
}

// verdict is a gate's word: "pass" or "FAIL".
func verdict(pass bool) string {
	if pass {
		return "pass"
	}
	return "FAIL"
}

// loadPolicy reads the checkpoint at path, whose observation layout must be
// layout.
func loadPolicy(path string, layout rl.Layout) (*rl.Policy, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	defer f.Close()
	p, err := rl.Load(f, layout)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %q: %w", path, err)
	}
	return p, nil
}

func saveCheckpoint(path string, p *rl.Policy) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save checkpoint %q: %w", path, err)
	}
	if err := p.Save(f); err != nil {
		f.Close()
		return fmt.Errorf("save checkpoint %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save checkpoint %q: %w", path, err)
	}
	return nil
}

// writeJSON writes v to path as indented JSON with a final newline.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = os.WriteFile(path, append(b, '\n'), 0o644)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
