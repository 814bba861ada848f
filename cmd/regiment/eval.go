package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// evalUsage is what `regiment eval --help` prints before the flags; its
// verbs take the known policies, twice.
const evalUsage = `Usage: regiment eval --config F --scenario F[,F...] --out DIR [--policies P,...] [--ablation] [--seeds N] [--workers N] [--duration D]

Runs every scenario x policy x seed on the same traffic (seed k of a scenario
is its seed + k, for every policy) and writes into DIR:
  report.json   every run, the mean, min and max over seeds per scenario x policy, and
                each policy's sums over the whole set
  report.md     tables per scenario with ratios against hpa, oracle gap, share of the
                hpa-to-oracle gap captured; nodes, pods and scale-out times; the
                provisioner's stalls (runs with one) and bursts of node requests; per
                priority tier; and the whole set's sums against hpa's, which it also prints
  series.csv    per-minute demand, replicas, breaching apps and pending pods per domain (seed 0)
  *.png         demand and replicas per domain, breach timeline, nodes, pending pods per
                tier, cost against SLO compliance, and with hpa each policy's cost against
                its breaches over the whole set (trade-off.png)
Metrics are defined in docs/evaluation.md#metrics. Known policies: %s; and, for
experiments, the bounds of docs/evaluation.md (oracle-now+P, oracle-expected+P, ...).

Example:
  regiment eval --config examples/paymentscale.hcl \
    --scenario examples/scenarios/diurnal.hcl,examples/scenarios/flash-sale.hcl \
    --policies %s --seeds 3 --out eval-out

Flags:
`

// runEval runs policies side by side on scenarios and writes the report
// (package eval). Usage errors exit 2, failures 1.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := cli.Failer("regiment eval", stderr)
	known := eval.Policies()
	fs := cli.NewFlagSet("regiment eval", fmt.Sprintf(evalUsage, strings.Join(known, ", "), strings.Join(known, ",")), stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL); required")
	scenarios := fs.String("scenario", "", "comma-separated scenario `files` (HCL); required")
	policies := fs.String("policies", strings.Join(known, ","), "comma-separated `policies` to compare")
	seeds := fs.Int("seeds", 1, "runs per scenario and policy; run k uses the scenario's seed + k")
	out := fs.String("out", "", "report `directory` (created); required")
	workers := fs.Int("workers", runtime.NumCPU(), "runs simulated at once")
	duration := fs.Duration("duration", 0, "override every scenario's duration, e.g. 6h (0: keep it)")
	ablation := fs.Bool("ablation", true, "with regiment, also run regiment-independent (its Soldiers without the Commander) right after it")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	usage := cli.UsageFailer(fs, stderr)
	if *configPath == "" || *scenarios == "" || *out == "" || fs.NArg() > 0 {
		return usage("--config, --scenario and --out are required, and nothing else")
	}
	pols := cli.SplitList(*policies)
	if *ablation {
		pols = eval.WithAblation(pols)
	}
	for _, p := range pols {
		if !slices.Contains(known, p) && !baseline.Known(p) {
			return usage("%v", eval.UnknownPolicy(p, known))
		}
	}
	switch {
	case len(pols) == 0:
		return usage("--policies names no policy")
	case *seeds < 1:
		return usage("--seeds must be at least 1")
	case *workers < 1:
		return usage("--workers must be at least 1")
	case *duration < 0:
		return usage("--duration must not be negative")
	}

	cfg, err := config.LoadFile(*configPath)
	if err != nil {
		return fail(err)
	}
	opts := eval.Options{Config: cfg, Policies: pols, Seeds: *seeds, Workers: *workers, Duration: *duration}
	if opts.Scenarios, err = scenario.LoadAll(cfg, cli.SplitList(*scenarios)); err != nil {
		return fail(err)
	}
	if err := opts.Validate(); err != nil {
		return usage("%v", err)
	}

	return evaluate(ctx, opts, *out, stdout, stderr)
}

// evaluate runs opts with a progress bar on stderr, writes the report into
// out and returns the exit code.
func evaluate(ctx context.Context, opts eval.Options, out string, stdout, stderr io.Writer) int {
	fail := cli.Failer("regiment eval", stderr)
	bar := cli.NewProgress(stderr)
	total := len(opts.Scenarios) * len(opts.Policies) * opts.Seeds
	bar.Update(true, "evaluating: %s 0/%d runs on %d workers", cli.BarCells(0, total), total, min(opts.Workers, total))
	opts.Progress = func(done, total int) {
		elapsed := bar.Elapsed()
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done)).Round(time.Second)
		bar.Update(true, "evaluating: %s %d/%d runs, %s elapsed, ETA %s", cli.BarCells(done, total), done, total,
			elapsed.Round(time.Second), eta)
	}
	report, err := eval.Run(ctx, opts)
	if err != nil {
		bar.Done()
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "regiment eval: interrupted")
			return 1
		}
		return fail(err)
	}
	bar.Update(true, "writing the report and plots to %s", out)
	paths, err := report.Write(out)
	bar.Done()
	if err != nil {
		return fail(err)
	}
	plots := 0
	for _, p := range paths {
		if filepath.Ext(p) == ".png" {
			plots++
		}
	}
	fmt.Fprintf(stdout, "%d runs (%s x %s x %s) in %s on %d workers\n", len(report.Runs),
		eval.Count(len(opts.Scenarios), "scenario", "scenarios"), eval.Count(len(opts.Policies), "policy", "policies"), eval.Count(opts.Seeds, "seed", "seeds"),
		time.Duration(report.WallSeconds*float64(time.Second)).Round(100*time.Millisecond), min(opts.Workers, total))
	report.WriteTotalsText(stdout)
	fmt.Fprintf(stdout, "wrote %s, %s, %s and %d plots\n", filepath.Join(out, "report.json"),
		filepath.Join(out, "report.md"), filepath.Join(out, "series.csv"), plots)
	return 0
}
