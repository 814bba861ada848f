package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// The built-in example `regiment run` uses without flags.
const (
	defaultConfig   = "examples/tenth.hcl"
	defaultScenario = "examples/scenarios/tenth-day.hcl"
)

// runUsage is what `regiment run --help` prints before the flags.
const runUsage = `Usage: regiment run [--config F] [--scenario F] [--speed N] [--duration D] [--data DIR]
                    [--log-level L] [--log-format text|json] [--progress-every D]

Runs the whole system on one machine: an embedded NATS server, the Commander,
one Soldier per domain and a simulated cluster replaying the scenario's
traffic, on an accelerated clock. Directives and reports really cross NATS;
every step is recorded in DIR/regiment.db. It ends with a summary next to the
same Soldiers without their Commander (regiment-independent: what the
hierarchy is worth), the Kubernetes HPA, the perfect-foresight oracle (the
limit) and static provisioning on the same traffic, and the apps that breached with their
max_replicas ready (no autoscaler serves those). Inspect the episodes
afterwards with "regiment episodes list --data DIR".

Progress: on a terminal a live line on stderr; otherwise (a pod, CI, a
pipe) a log line "progress" every --progress-every (30s), in --log-format.

Examples:
  regiment run                                   # a tenth of the seed-scale world, 24 h
  regiment run --duration 2h --speed 600         # two simulated hours at 600x
  regiment run --config examples/paymentscale.hcl --scenario examples/scenarios/flash-sale.hcl

Flags:
`

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("regiment run", runUsage, stderr)
	configPath := fs.String("config", defaultConfig, "cluster config `file` (HCL)")
	scenarioPath := fs.String("scenario", defaultScenario, "scenario `file` (HCL) driving the simulated cluster")
	speed := fs.Float64("speed", 0, "simulated seconds per wall second; 0: as fast as possible")
	duration := fs.Duration("duration", 0, "override the scenario's duration, e.g. 6h")
	dataDir := fs.String("data", "data", "`dir`ectory for the episode store (regiment.db), kept across runs; the embedded NATS server keeps its JetStream in a temporary directory of the run's own")
	logLevel := fs.String("log-level", "warn", "log `level`: trace, debug, info, warn, error")
	logFormat := fs.String("log-format", cli.LogText, cli.LogFormatUsage)
	every := fs.Duration("progress-every", cli.ProgressEvery, "when stderr is not a terminal (a pod, CI), log a progress line this often; 0: never")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "regiment run: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	log, err := cli.NewLogger("regiment", *logLevel, *logFormat, stderr)
	if err != nil {
		return cli.UsageFailer(fs, stderr)("%v", err)
	}
	w, err := scenario.LoadWorld(*configPath, *scenarioPath)
	if err != nil {
		fmt.Fprintf(stderr, "regiment run: %v\n", err)
		if *configPath == defaultConfig {
			fmt.Fprintln(stderr, "regiment run: the built-in example is read from the repository: run from its root, or pass --config and --scenario")
		}
		return 1
	}
	if err := w.Override(0, *duration); err != nil {
		fmt.Fprintf(stderr, "regiment run: %v\n", err)
		return 1
	}
	sum, err := runSystem(ctx, w, *dataDir, *speed, log, cli.NewProgressLog(stderr, *logFormat, *every))
	if err != nil {
		fmt.Fprintf(stderr, "regiment run: %v\n", err)
		return 1
	}
	printSummary(stdout, w, sum)
	return 0
}

// runSummary is what a run did, and its baselines on the same traffic.
type runSummary struct {
	daemon.SystemRun
	baselines []sim.Metrics // summaryBaselines
}

// runSystem runs the Commander and Soldiers over an embedded NATS server
// against a simulated cluster (daemon.RunSystem), then the summary's
// baselines on the same traffic.
func runSystem(ctx context.Context, w scenario.World, dataDir string, speed float64, log hclog.Logger, bar *cli.Progress) (sum runSummary, err error) {
	s, err := w.NewSim()
	if err != nil {
		return sum, err
	}
	sum.SystemRun, err = daemon.RunSystem(ctx, w.Config, s, dataDir, speed, log, func(simElapsed, wall time.Duration) {
		bar.Update(false, "%s  %s of %s  (%.0fx real time)", w.Name, simElapsed, w.Duration, simElapsed.Seconds()/max(wall.Seconds(), 1e-9))
	})
	bar.Done()
	if err != nil {
		return sum, err
	}
	for _, name := range summaryBaselines {
		if sum.Stopped {
			break
		}
		bar.Update(true, "running the %s baseline on the same traffic", name)
		bs, err := w.NewSimOn(baseline.World(name, w.Config))
		if err != nil {
			return sum, err
		}
		p, err := newPolicy(w, name, bs)
		if err != nil {
			return sum, err
		}
		sum.baselines = append(sum.baselines, bs.Run(p))
	}
	bar.Done()
	return sum, nil
}

// summaryBaselines are the policies `regiment run` compares itself with:
// its own Soldiers without the Commander (the ablation: what the hierarchy
// is worth), the Kubernetes HPA teams run today, the oracle (perfect
// foresight: the limit), and static provisioning for the known peak.
var summaryBaselines = []string{eval.Independent, "hpa", "oracle", "static"}

func printSummary(out io.Writer, w scenario.World, sum runSummary) {
	sum.WriteSummary(out, w.Config, w.Name, summaryBaselines, sum.baselines)
	printCeilingBound(out, sum.Metrics.CeilingBound, "(regiment sim --json lists them all)")
	sum.WriteStored(out)
}
