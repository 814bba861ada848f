package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/calibrate"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
	"github.com/regimentd/regiment/internal/offline/train"
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

// trainFlags are regiment train's flags: the run's options and the files
// they are loaded from.
type trainFlags struct {
	train.Options
	configPath, scenarios, episodes string
}

func (f *trainFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.configPath, "config", "", "cluster config `file` (HCL); required")
	fs.StringVar(&f.scenarios, "scenario", "", "comma-separated training scenario `files` (HCL); the first is the base; required")
	fs.StringVar(&f.Stage, "stage", "", "`stage` to train: soldier, commander or joint; required")
	fs.Int64Var(&f.Steps, "steps", 1_000_000, "environment steps (agent decisions) to train on")
	fs.IntVar(&f.Envs, "envs", 2, "parallel environments")
	fs.Uint64Var(&f.Seed, "seed", 1, "training seed")
	fs.StringVar(&f.Out, "out", "", "output `directory` (created); required")
	fs.StringVar(&f.Init, "init", "", "checkpoint `file` to continue training from (soldier stage)")
	fs.StringVar(&f.InitSoldier, "init-soldier", "", "Soldier checkpoint `file` the joint stage starts from (default: the config's soldier policy, if a checkpoint)")
	fs.StringVar(&f.InitCommander, "init-commander", "", "Commander checkpoint `file` the joint stage starts from (default: the config's commander policy, if a checkpoint)")
	fs.IntVar(&f.Rounds, "rounds", 2, "joint stage: rounds of Commander then Soldier updates; --steps is split equally over rounds and levels")
	fs.StringVar(&f.episodes, "episodes", "", "calibrate the simulator on the episodes recorded in `DIR` first")
	fs.DurationVar(&f.Episode, "episode", 3*time.Hour, "simulated time per training episode")
	fs.Float64Var(&f.LR, "lr", 0, "PPO learning rate (0: the stage's default)")
}

// problem is what is wrong with the flags, or "".
func (f *trainFlags) problem(args int) string {
	switch {
	case f.configPath == "" || f.scenarios == "" || f.Out == "" || f.Stage == "" || args > 0:
		return "--config, --scenario, --stage and --out are required, and nothing else"
	case f.Stage != train.StageSoldier && f.Stage != train.StageCommander && f.Stage != train.StageJoint:
		stages := []string{train.StageSoldier, train.StageCommander, train.StageJoint}
		if s, ok := cli.Suggest(f.Stage, stages); ok {
			return fmt.Sprintf("unknown stage %q; did you mean %s?", f.Stage, s)
		}
		return fmt.Sprintf("unknown stage %q (want soldier, commander or joint)", f.Stage)
	case f.Steps < 1:
		return "--steps must be at least 1"
	case f.Envs < 1:
		return "--envs must be at least 1"
	case f.Episode < 10*time.Minute:
		return "--episode must be at least 10m"
	case f.LR < 0:
		return "--lr must not be negative"
	case f.Rounds < 1:
		return "--rounds must be at least 1"
	case f.Stage != train.StageJoint && (f.InitSoldier != "" || f.InitCommander != ""):
		return "--init-soldier and --init-commander are for the joint stage (the soldier stage continues from --init)"
	case f.Stage == train.StageJoint && f.Init != "":
		return "--init is for the soldier stage: the joint stage starts from --init-soldier and --init-commander"
	case f.Stage == train.StageCommander && f.Init != "":
		return "--init is for the soldier stage: the commander stage starts from the Forecast heuristic"
	case f.Stage == train.StageJoint && f.Steps < 2*int64(f.Rounds):
		return "--steps must be at least 2 x --rounds for the joint stage"
	}
	return ""
}

// runTrain loads the config, calibrates it on --episodes when given, loads
// the scenarios and trains (train.RunStage). Usage errors exit 2, failures 1.
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
	fail := failer("train", stderr)
	cfg, err := config.LoadFile(f.configPath)
	if err != nil {
		return fail(err)
	}
	if f.Stage == train.StageJoint {
		if f.InitSoldier, f.InitCommander = train.JointStart(cfg, f.InitSoldier, f.InitCommander); f.InitSoldier == "" || f.InitCommander == "" {
			return usage("the joint stage needs a Soldier and a Commander checkpoint: give --init-soldier and --init-commander, or name checkpoints in the config's soldier and commander policies")
		}
	}
	if err := os.MkdirAll(f.Out, 0o755); err != nil {
		return fail(err)
	}
	if f.episodes != "" {
		if cfg, err = calibrateFirst(ctx, cfg, f.episodes, f.Out, stdout, stderr); err != nil {
			return fail(err)
		}
	}
	f.Config = cfg
	if f.Scenarios, err = loadTrainScenarios(cfg, f.scenarios, f.Episode); err != nil {
		return fail(err)
	}
	start := time.Now()
	if err := train.RunStage(ctx, f.Options, stdout, stderr); err != nil {
		if ctx.Err() != nil {
			return fail(errors.New("interrupted"))
		}
		return fail(err)
	}
	fmt.Fprintf(stdout, "trained in %s; wrote %s\n", time.Since(start).Round(time.Second), f.Out)
	return 0
}

// calibrateFirst calibrates cfg on the episodes recorded in episodes, writes
// out/calibration.json and the report, and returns the calibrated config.
func calibrateFirst(ctx context.Context, cfg *domains.Config, episodes, out string, stdout, stderr io.Writer) (*domains.Config, error) {
	fmt.Fprintf(stderr, "calibrating the simulator on %s\n", episodes)
	cal, err := Calibrate(ctx, cfg, episodes, stderr)
	if err != nil {
		return nil, fmt.Errorf("calibrate on %q: %w", episodes, err)
	}
	if err := cli.WriteJSON(filepath.Join(out, "calibration.json"), cal); err != nil {
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
	scs, err := scenario.LoadAll(cfg, cli.SplitList(list))
	if err != nil {
		return nil, err
	}
	for i, sc := range scs {
		if sc.Duration < episode {
			return nil, fmt.Errorf("scenario %s lasts %s, shorter than an episode (--episode %s)", cli.SplitList(list)[i], sc.Duration, episode)
		}
	}
	return scs, nil
}
