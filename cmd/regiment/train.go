package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
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
	if f.configPath == "" || f.scenarios == "" || f.Out == "" || f.Stage == "" || args > 0 {
		return "--config, --scenario, --stage and --out are required, and nothing else"
	}
	if err := f.Check(); err != nil {
		return err.Error()
	}
	return ""
}

// runTrain loads the config, calibrates it on --episodes when given, loads
// the scenarios and trains (train.RunStage). Usage errors exit 2, failures 1.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("regiment train", trainUsage, stderr)
	var f trainFlags
	f.bind(fs)
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	usage := cli.UsageFailer(fs, stderr)
	if why := f.problem(fs.NArg()); why != "" {
		return usage("%s", why)
	}
	fail := cli.Failer("regiment train", stderr)
	cfg, err := config.LoadFile(f.configPath)
	if err != nil {
		return fail(err)
	}
	if f.Stage == train.StageJoint {
		if f.InitSoldier, f.InitCommander = train.JointStart(cfg, f.InitSoldier, f.InitCommander); f.InitSoldier == "" || f.InitCommander == "" {
			return usage("the joint stage needs a Soldier and a Commander checkpoint: give --init-soldier and --init-commander, or name checkpoints in the config's soldier and commander policies")
		}
	}
	if err := f.Prepare(ctx, cfg, f.episodes, cli.SplitList(f.scenarios), stdout, stderr); err != nil {
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
