package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/daemon"
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
		bs, err := w.NewSimFor(name)
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
	m := sum.Metrics
	if sum.Stopped {
		fmt.Fprintf(out, "stopped after %s simulated (interrupted)\n\n", time.Duration(m.SimSeconds)*time.Second)
	}
	fmt.Fprintf(out, "cluster %s, scenario %s: %s simulated in %s (%.0fx real time)\n",
		w.Config.Cluster.Name, w.Name, time.Duration(m.SimSeconds)*time.Second, sum.Wall.Round(time.Millisecond), m.SimSeconds/sum.Wall.Seconds())
	fmt.Fprintf(out, "regiment: commander policy %s, soldier policy %s\n",
		cmp.Or(w.Config.Commander.Policy, commander.ForecastPolicy), cmp.Or(w.Config.Soldier.Policy, soldier.ProportionalPolicy))
	var recommend []string
	for di, d := range w.Config.Domains {
		if w.Config.ModeOf(di).Recommends() {
			recommend = append(recommend, d.Name)
		}
	}
	if len(recommend) > 0 {
		fmt.Fprintf(out, "recommend mode (nothing written; the cluster's HPAs scale them): %s; review with: regiment report\n",
			strings.Join(recommend, ", "))
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\tregiment\t")
	for i := range sum.baselines {
		fmt.Fprintf(tw, "%s\t", summaryBaselines[i])
	}
	fmt.Fprintln(tw)
	row := func(name string, cell func(m sim.Metrics) string) {
		fmt.Fprintf(tw, "%s\t%s\t", name, cell(m))
		for _, b := range sum.baselines {
			fmt.Fprintf(tw, "%s\t", cell(b))
		}
		fmt.Fprintln(tw)
	}
	row("cost (core-hours)", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.CostCoreHours) })
	row("cost", func(m sim.Metrics) string { return fmt.Sprintf("%.2f", m.Cost) })
	row("SLO compliance", func(m sim.Metrics) string { return fmt.Sprintf("%.4f", m.SLOCompliance) })
	row("breach app-minutes", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.BreachAppMinutes) })
	if slices.ContainsFunc(append([]sim.Metrics{m}, sum.baselines...), func(m sim.Metrics) bool { return m.BreachAppMinutesAtMax > 0 }) {
		row("of which at max_replicas", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.BreachAppMinutesAtMax) })
	}
	row("bad-request ratio", func(m sim.Metrics) string { return fmt.Sprintf("%.5f", m.BadRequestRatio) })
	row("energy (kWh)", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.EnergyKWh) })
	row("scaling actions", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.ScalingActions) })
	row("peak nodes", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.PeakNodes) })
	row("node churn", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.NodeChurn) })
	row("pending pod-hours", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.PendingPodHours) })
	tw.Flush()
	if len(sum.baselines) > 0 && !sum.Stopped {
		in := sum.baselines[0] // summaryBaselines[0], regiment-independent
		fmt.Fprintf(out, "\nthe hierarchy's worth, regiment x %s: cost %.3f, breaches %s, bad requests %s\n",
			summaryBaselines[0], ratio(m.CostCoreHours, in.CostCoreHours), ratioText(m.BreachAppMinutes, in.BreachAppMinutes), ratioText(m.BadRequests, in.BadRequests))
	}
	printCeilingBound(out, m.CeilingBound, "(regiment sim --json lists them all)")
	fmt.Fprintf(out, "\n%d episodes, %d steps written to %s; %d replica writes; %d messages rejected\n",
		sum.Episodes, sum.Steps, sum.DBPath, sum.Writes, sum.Rejected)
	fmt.Fprintf(out, "inspect: regiment episodes list --data %s\n", filepath.Dir(sum.DBPath))
}

// ratio is a / b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// ratioText is a / b to two decimals, "n/a" when b is 0.
func ratioText(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}
