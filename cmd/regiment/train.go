package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/regimentd/regiment/calibrate"
	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/infile"
	"github.com/regimentd/regiment/rl"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/soldier"
	"github.com/regimentd/regiment/train"
)

// trainUsage is what `regiment train --help` prints before the flags.
const trainUsage = `Usage: regiment train --config F --scenario F[,F...] --stage soldier|commander|joint --out DIR
                      [--steps N] [--envs N] [--seed S] [--init CKPT] [--episodes DIR] [--episode D] [--lr X]
                      [--init-soldier CKPT] [--init-commander CKPT] [--rounds N]   (joint stage)

Trains a learned policy with PPO on the simulator
(docs/training.md#regiment-train) and writes into DIR:
  soldier.ckpt or commander.ckpt   the trained policy
  gate.json                        the stage's gate on its held-in episodes
  check.json                       the reward-outcome check (soldier stage)
  train.csv                        one row per PPO update (the progress lines)
A progress line per update goes to stderr.

--stage joint fine-tunes a learned Soldier and a learned Commander together:
it starts from --init-soldier and --init-commander (each defaulting to the
config's soldier / commander policy when that names a checkpoint) and runs
--rounds rounds of (1) Commander updates with the current Soldier frozen,
resuming the Commander as it is (no warm start), then (2) Soldier updates
with budgets and headroom from a Commander running the current learned
Commander, frozen. Each round gets --steps / --rounds env steps, half per
level. After every round it runs both gates and the reward-outcome checks and
writes soldier.ckpt, commander.ckpt (the latest round's; each round's also in
DIR/roundN/), gate.json and check.json (one entry per round so far) into DIR.
--lr applies to both levels.

Example:
  regiment train --config examples/small.hcl --stage soldier --out out/soldier \
    --scenario examples/scenarios/train/small-base.hcl,examples/scenarios/train/small-flash-batch.hcl,examples/scenarios/train/small-adversarial.hcl
`

// trainFlags are regiment train's flags: the joint stage's settings and the
// rest.
type trainFlags struct {
	jointRun
	configPath, scenarios, stage, initPath, episodes string
}

func (f *trainFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.configPath, "config", "", "cluster config `file` (HCL); required")
	fs.StringVar(&f.scenarios, "scenario", "", "comma-separated training scenario `files` (HCL); the first is the base; required")
	fs.StringVar(&f.stage, "stage", "", "`stage` to train: soldier, commander or joint; required")
	fs.Int64Var(&f.steps, "steps", 1_000_000, "environment steps (agent decisions) to train on")
	fs.IntVar(&f.envs, "envs", 2, "parallel environments")
	fs.Uint64Var(&f.seed, "seed", 1, "training seed")
	fs.StringVar(&f.out, "out", "", "output `directory` (created); required")
	fs.StringVar(&f.initPath, "init", "", "checkpoint `file` to continue training from (soldier stage)")
	fs.StringVar(&f.initSoldier, "init-soldier", "", "Soldier checkpoint `file` the joint stage starts from (default: the config's soldier policy, if a checkpoint)")
	fs.StringVar(&f.initCommander, "init-commander", "", "Commander checkpoint `file` the joint stage starts from (default: the config's commander policy, if a checkpoint)")
	fs.IntVar(&f.rounds, "rounds", 2, "joint stage: rounds of Commander then Soldier updates; --steps is split equally over rounds and levels")
	fs.StringVar(&f.episodes, "episodes", "", "calibrate the simulator on the episodes recorded in `DIR` first")
	fs.DurationVar(&f.episode, "episode", 3*time.Hour, "simulated time per training episode")
	fs.Float64Var(&f.lr, "lr", 0, "PPO learning rate (0: the stage's default)")
}

// problem is what is wrong with the flags, or "".
func (f *trainFlags) problem(args int) string {
	switch {
	case f.configPath == "" || f.scenarios == "" || f.out == "" || f.stage == "" || args > 0:
		return "--config, --scenario, --stage and --out are required, and nothing else"
	case f.stage != "soldier" && f.stage != "commander" && f.stage != "joint":
		return fmt.Sprintf("unknown stage %q (want soldier, commander or joint)", f.stage)
	case f.steps < 1:
		return "--steps must be at least 1"
	case f.envs < 1:
		return "--envs must be at least 1"
	case f.episode < 10*time.Minute:
		return "--episode must be at least 10m"
	case f.lr < 0:
		return "--lr must not be negative"
	case f.rounds < 1:
		return "--rounds must be at least 1"
	case f.stage != "joint" && (f.initSoldier != "" || f.initCommander != ""):
		return "--init-soldier and --init-commander are for the joint stage (the soldier stage continues from --init)"
	case f.stage == "joint" && f.initPath != "":
		return "--init is for the soldier stage: the joint stage starts from --init-soldier and --init-commander"
	case f.stage == "joint" && f.steps < 2*int64(f.rounds):
		return "--steps must be at least 2 x --rounds for the joint stage"
	}
	return ""
}

// train trains the stage on scs, writing into f.out.
func (f *trainFlags) train(ctx context.Context, cfg *domains.Config, scs []sim.Scenario, csv io.Writer, stdout, stderr io.Writer) error {
	switch f.stage {
	case "soldier":
		return trainSoldier(ctx, cfg, scs, f.initPath, f.steps, f.envs, f.seed, f.episode, f.lr, f.out, csv, stdout, stderr)
	case "commander":
		return trainCommander(ctx, cfg, scs, f.steps, f.envs, f.seed, f.lr, f.out, csv, stdout, stderr)
	}
	return f.jointRun.train(ctx, cfg, scs, csv, stdout, stderr)
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("train", trainUsage, stderr)
	var f trainFlags
	f.bind(fs)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	usage := usageFailer("train", fs, stderr)
	if why := f.problem(fs.NArg()); why != "" {
		return usage("%s", why)
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "regiment train: %v\n", err)
		return 1
	}
	cfg, err := config.LoadFile(f.configPath)
	if err != nil {
		return fail(err)
	}
	if f.stage == "joint" {
		if f.initSoldier, f.initCommander = jointInit(cfg, f.initSoldier, f.initCommander); f.initSoldier == "" || f.initCommander == "" {
			return usage("the joint stage needs a Soldier and a Commander checkpoint: give --init-soldier and --init-commander, or name checkpoints in the config's soldier and commander policies")
		}
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fail(err)
	}
	if f.episodes != "" {
		if cfg, err = calibrateFirst(ctx, cfg, f.episodes, f.out, stdout, stderr); err != nil {
			return fail(err)
		}
	}
	scs, err := loadTrainScenarios(cfg, f.scenarios, f.episode)
	if err != nil {
		return fail(err)
	}
	csvFile, err := os.Create(filepath.Join(f.out, "train.csv"))
	if err != nil {
		return fail(err)
	}
	defer csvFile.Close()
	if f.stage == "commander" && f.initPath != "" {
		return usage("--init is for the soldier stage: the commander stage starts from the Forecast heuristic")
	}
	start := time.Now()
	if err := f.train(ctx, cfg, scs, csvFile, stdout, stderr); err != nil {
		if ctx.Err() != nil {
			return fail(errors.New("interrupted"))
		}
		return fail(err)
	}
	fmt.Fprintf(stdout, "trained in %s; wrote %s\n", time.Since(start).Round(time.Second), f.out)
	return 0
}

// jointInit is where the joint stage starts: the checkpoints given, else the
// config's policies when they name checkpoints (resolved paths); "" when
// neither does.
func jointInit(cfg *domains.Config, initSoldier, initCommander string) (string, string) {
	if initSoldier == "" && cfg.Soldier.Policy != soldier.ProportionalPolicy && cfg.Soldier.Policy != "" {
		initSoldier = cfg.Soldier.Policy
	}
	if initCommander == "" && cfg.Commander.Policy != commander.ForecastPolicy && cfg.Commander.Policy != "" {
		initCommander = cfg.Commander.Policy
	}
	return initSoldier, initCommander
}

// calibrateFirst calibrates cfg on the episodes recorded in episodes, writes
// out/calibration.json and the report, and returns the calibrated config.
func calibrateFirst(ctx context.Context, cfg *domains.Config, episodes, out string, stdout, stderr io.Writer) (*domains.Config, error) {
	fmt.Fprintf(stderr, "calibrating the simulator on %s\n", episodes)
	cal, err := Calibrate(ctx, cfg, episodes, stderr)
	if err != nil {
		return nil, fmt.Errorf("calibrate on %q: %w", episodes, err)
	}
	if err := writeJSON(filepath.Join(out, "calibration.json"), cal); err != nil {
		return nil, err
	}
	// What was fitted and how well the calibrated simulator replays the
	// recording (Pearson r per series), before any training on it.
	if err := calibrate.WriteReport(stdout, cal); err != nil {
		return nil, err
	}
	if !cal.After.Pass() {
		fmt.Fprintf(stdout, "\nWARNING: some replayed series stay below r = %.2f after calibration; training goes on with the calibrated simulator\n\n", cal.After.Target)
	}
	return cal.Config, nil
}

// loadTrainScenarios loads the comma-separated scenario files of list, each
// with its traces; every one must outlast a training episode.
func loadTrainScenarios(cfg *domains.Config, list string, episode time.Duration) ([]sim.Scenario, error) {
	scs, err := loadScenarios(cfg, list)
	if err != nil {
		return nil, err
	}
	for i, sc := range scs {
		if sc.Duration < episode {
			return nil, fmt.Errorf("scenario %s lasts %s, shorter than an episode (--episode %s)", splitList(list)[i], sc.Duration, episode)
		}
	}
	return scs, nil
}

func trainSoldier(ctx context.Context, cfg *domains.Config, scs []sim.Scenario, initPath string, steps int64, envs int, seed uint64, episode time.Duration, lr float64, out string, csv io.Writer, stdout, stderr io.Writer) error {
	var p *rl.Policy
	var err error
	if initPath != "" {
		f, err := infile.Open(initPath)
		if err != nil {
			return fmt.Errorf("load checkpoint %q: %w", initPath, err)
		}
		p, err = rl.Load(f, soldier.LearnedLayout())
		f.Close()
		if err != nil {
			return fmt.Errorf("load checkpoint %q: %w", initPath, err)
		}
	} else if p, err = train.NewSoldierPolicy(cfg, seed); err != nil {
		return err
	}
	st := train.SoldierStage{Cluster: cfg, Scenarios: scs, Episode: episode, Steps: steps, Workers: envs, Seed: seed,
		Progress: stderr, CSV: csv, PPO: train.SoldierPPO()}
	if lr > 0 {
		st.PPO.LR = lr
	}
	res, err := train.TrainSoldier(ctx, p, st)
	if err != nil {
		return err
	}
	p.Provenance.Date = time.Now().UTC()
	if err := saveCheckpoint(filepath.Join(out, "soldier.ckpt"), p); err != nil {
		return err
	}
	gate := map[string]any{"gate": res.Gate, "gate_before_training": res.GateBefore,
		"check_episodes_after": res.CheckAfter, "check_episodes_before": res.CheckBefore,
		"steps": res.Run.Steps, "updates": res.Run.Updates, "seconds": res.Run.Elapsed.Seconds(), "steps_per_second": res.Run.StepsPerSec()}
	if err := writeJSON(filepath.Join(out, "gate.json"), gate); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, "check.json"), res.Check); err != nil {
		return err
	}
	res.Check.Write(stdout)
	verdict := "FAIL"
	if res.Gate.Pass {
		verdict = "pass"
	}
	fmt.Fprintf(stdout, "soldier gate %s: compliance %.4f on %d held-in single-domain episodes (gate %.2f; before training %.4f)\n",
		verdict, res.Gate.Compliance, res.Gate.Episodes, res.Gate.MinCompliance, res.GateBefore.Compliance)
	fmt.Fprintf(stdout, "full-cluster held-in episodes, before -> after: compliance %.4f -> %.4f, cost %.1f -> %.1f core-hours, actions %.1f -> %.1f per episode\n",
		res.CheckBefore.Compliance, res.CheckAfter.Compliance, res.CheckBefore.CostCoreHours, res.CheckAfter.CostCoreHours, res.CheckBefore.Actions, res.CheckAfter.Actions)
	fmt.Fprintf(stdout, "%d env steps, %d updates in %s: %.0f env steps/s\n", res.Run.Steps, res.Run.Updates, res.Run.Elapsed.Round(time.Second), res.Run.StepsPerSec())
	return nil
}

func trainCommander(ctx context.Context, cfg *domains.Config, scs []sim.Scenario, steps int64, envs int, seed uint64, lr float64, out string, csv io.Writer, stdout, stderr io.Writer) error {
	newEnv := func() (*train.CommanderEnv, error) {
		return train.NewCommanderEnv(cfg, scs, train.CommanderEnvOptions{})
	}
	st := train.CommanderStage{Steps: steps, Workers: envs, Seed: seed, Progress: stderr, CSV: csv}
	if lr > 0 {
		st.PPO = rl.DefaultConfig("commander")
		st.PPO.LR = lr
	}
	p, res, err := train.TrainCommander(ctx, newEnv, st)
	if err != nil {
		return err
	}
	eps, err := train.Evaluate(ctx, p, func(int) (train.Env, error) { return newEnv() }, envs, 16, seed+2)
	if err != nil {
		return err
	}
	check := train.Check("commander", train.CommanderTerms, eps)
	p.Provenance.Date = time.Now().UTC()
	if err := saveCheckpoint(filepath.Join(out, "commander.ckpt"), p); err != nil {
		return err
	}
	gate := map[string]any{"gate": res.Gate, "clone": res.Clone, "steps": res.Run.Steps, "updates": res.Run.Updates,
		"seconds": res.Run.Elapsed.Seconds(), "steps_per_second": res.Run.StepsPerSec()}
	if err := writeJSON(filepath.Join(out, "gate.json"), gate); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, "check.json"), check); err != nil {
		return err
	}
	check.Write(stdout)
	fmt.Fprintln(stdout, res.Gate)
	fmt.Fprintf(stdout, "%d env steps, %d updates in %s: %.0f env steps/s\n", res.Run.Steps, res.Run.Updates, res.Run.Elapsed.Round(time.Second), res.Run.StepsPerSec())
	return nil
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
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// jointRun is `regiment train --stage joint`'s invocation.
type jointRun struct {
	initSoldier, initCommander string
	rounds, envs               int
	steps                      int64
	seed                       uint64
	episode                    time.Duration
	lr                         float64
	out                        string
}

func (j jointRun) train(ctx context.Context, cfg *domains.Config, scs []sim.Scenario, csv io.Writer, stdout, stderr io.Writer) error {
	sp, err := loadPolicy(j.initSoldier, soldier.LearnedLayout())
	if err != nil {
		return err
	}
	cp, err := loadPolicy(j.initCommander, commander.ObsLayout(cfg))
	if err != nil {
		return err
	}
	if _, err := commander.NewLearned(cp, cfg); err != nil {
		return fmt.Errorf("load checkpoint %q: %w", j.initCommander, err)
	}
	st := train.JointStage{Cluster: cfg, Scenarios: scs, Rounds: j.rounds, Steps: j.steps, Workers: j.envs, Seed: j.seed,
		Episode: j.episode, Progress: stderr, CSV: csv, SoldierPPO: train.SoldierPPO(), CommanderPPO: rl.DefaultConfig("commander")}
	if j.lr > 0 {
		st.SoldierPPO.LR, st.CommanderPPO.LR = j.lr, j.lr
	}
	type gates struct {
		Round           int                 `json:"round"`
		Pass            bool                `json:"pass"`
		CommanderGate   train.CommanderGate `json:"commander_gate"`
		SoldierGate     train.GateResult    `json:"soldier_gate"`
		SoldierOutcomes train.GateResult    `json:"soldier_check_outcomes"`
		CommanderSteps  int64               `json:"commander_steps"`
		CommanderRate   float64             `json:"commander_steps_per_second"`
		SoldierSteps    int64               `json:"soldier_steps"`
		SoldierRate     float64             `json:"soldier_steps_per_second"`
	}
	type checks struct {
		Round     int               `json:"round"`
		Commander train.CheckReport `json:"commander"`
		Soldier   train.CheckReport `json:"soldier"`
	}
	var gs []gates
	var cs []checks
	after := func(r train.JointRound) error {
		now := time.Now().UTC()
		sp.Provenance.Date, cp.Provenance.Date = now, now
		// The latest pair at the top, each round's in roundN/ (a later round
		// may fail a gate an earlier one passed).
		roundDir := filepath.Join(j.out, fmt.Sprintf("round%d", r.Round))
		if err := os.MkdirAll(roundDir, 0o755); err != nil {
			return err
		}
		for _, dir := range []string{j.out, roundDir} {
			if err := saveCheckpoint(filepath.Join(dir, "soldier.ckpt"), sp); err != nil {
				return err
			}
			if err := saveCheckpoint(filepath.Join(dir, "commander.ckpt"), cp); err != nil {
				return err
			}
		}
		gs = append(gs, gates{Round: r.Round, Pass: r.Pass(), CommanderGate: r.CommanderGate, SoldierGate: r.SoldierGate, SoldierOutcomes: r.SoldierOutcomes,
			CommanderSteps: r.CommanderRun.Steps, CommanderRate: r.CommanderRun.StepsPerSec(), SoldierSteps: r.SoldierRun.Steps, SoldierRate: r.SoldierRun.StepsPerSec()})
		cs = append(cs, checks{Round: r.Round, Commander: r.CommanderCheck, Soldier: r.SoldierCheck})
		if err := writeJSON(filepath.Join(j.out, "gate.json"), gs); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(j.out, "check.json"), cs); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "round %d/%d\n", r.Round, j.rounds)
		r.CommanderCheck.Write(stdout)
		r.SoldierCheck.Write(stdout)
		fmt.Fprintf(stdout, "  %s\n", r.CommanderGate)
		verdict := "FAIL"
		if r.SoldierGate.Pass {
			verdict = "pass"
		}
		fmt.Fprintf(stdout, "  soldier gate %s: compliance %.4f on %d held-in single-domain episodes (gate %.2f)\n",
			verdict, r.SoldierGate.Compliance, r.SoldierGate.Episodes, r.SoldierGate.MinCompliance)
		fmt.Fprintf(stdout, "  full cluster under the learned commander: compliance %.4f, cost %.1f core-hours, actions %.1f per episode\n",
			r.SoldierOutcomes.Compliance, r.SoldierOutcomes.CostCoreHours, r.SoldierOutcomes.Actions)
		fmt.Fprintf(stdout, "  commander level %d env steps at %.0f/s, soldier level %d env steps at %.0f/s\n",
			r.CommanderRun.Steps, r.CommanderRun.StepsPerSec(), r.SoldierRun.Steps, r.SoldierRun.StepsPerSec())
		return nil
	}
	_, err = train.TrainJoint(ctx, sp, cp, st, after)
	return err
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
