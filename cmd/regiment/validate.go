package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// validateUsage is what `regiment validate --help` prints before the flags.
const validateUsage = `Usage: regiment validate --config F [--scenario F]

Checks a cluster config, and a scenario against it, and reports every problem
at once as file:line,col: problem; hint. Prometheus queries are parsed with
Prometheus's PromQL parser, its position in the query given. Trace paths in a scenario resolve
against the scenario file's directory; every trace is read and checked as
regiment sim reads it, with the same errors (file and line). With a scenario it
also replays the scenario's demand and warns of the apps it drives past what
their max_replicas serve at 98% utilisation: they breach under any autoscaler.
Exits 0 and prints a summary if all is well (warnings included), 1 if there are
problems, 2 on a usage error.

Example:
  regiment validate --config examples/paymentscale.hcl --scenario examples/scenarios/flash-sale.hcl

Flags:
`

// runValidate checks a config and optionally a scenario, printing every
// problem of both to stderr (exit 1) or a one-line summary to stdout (exit 0).
// Usage errors exit 2.
func runValidate(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("regiment validate", validateUsage, stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL); required")
	scenarioPath := fs.String("scenario", "", "scenario `file` (HCL) to check against the config")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	if *configPath == "" || fs.NArg() > 0 {
		return cli.UsageFailer(fs, stderr)("--config is required, and takes no arguments")
	}

	cfg, sc, overloads, ok := scenario.Check(*configPath, *scenarioPath, func(err error) { fmt.Fprintln(stderr, err) })
	if !ok {
		return 1
	}
	warnOverloads(stderr, overloads)
	fmt.Fprintln(stdout, config.Summary(cfg, sc))
	return 0
}

// warnOverloads warns of the apps whose demand in the scenario outgrows
// their max_replicas (sim.Overloads), most minutes first, at most
// maxCeilingRows of them: a warning, not a problem (exit 0).
func warnOverloads(w io.Writer, apps []sim.Overload) {
	if len(apps) == 0 {
		return
	}
	they, their := "they breach whatever scales them", "their set's"
	if len(apps) == 1 {
		they, their = "it breaches whatever scales it", "its set's"
	}
	fmt.Fprintf(w, "warning: the scenario's demand outgrows the max_replicas of %s: %s "+
		"(raise %s max_replicas to at least the replicas the peak needs)\n", eval.Count(len(apps), "app", "apps"), they, their)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "app\tmax_replicas\tpeak needs\tpeak at\tminutes over")
	for i, a := range apps {
		if i == maxCeilingRows {
			fmt.Fprintf(tw, "... %d more\n", len(apps)-maxCeilingRows)
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t+%s\t%.1f\n", a.App, a.MaxReplicas, a.PeakReplicas, config.ShortDuration(a.PeakAt), a.Minutes)
	}
	tw.Flush()
}
