package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// simReport is what `regiment sim --json` prints. It holds no wall-clock
// figure, so it is a pure function of config, scenario, seed and policy.
type simReport struct {
	Config   string `json:"config"`
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	Seed     uint64 `json:"seed"`
	sim.Metrics
}

// simUsage is what `regiment sim --help` prints before the flags.
const simUsage = `Usage: regiment sim --config F --scenario F [--policy NAME] [--json]

Simulates the scenario on the config's cluster with one policy and prints
cost_core_hours, slo_compliance, breach_app_minutes, scaling_actions,
peak_nodes, the provisioner's stalls and largest burst of node requests,
pending_pod_hours, sim_seconds and wall_seconds, per domain too, and the
apps that breached with max_replicas ready: demand their ceiling cannot
serve, which no autoscaler fixes. Same config, scenario and seed give
the same metrics, byte for byte with --json. Besides the policies below, the
bounds of docs/evaluation.md (oracle-now+P, oracle-expected+P, ...) run too.

Example:
  regiment sim --config examples/paymentscale.hcl --scenario examples/scenarios/diurnal.hcl --policy static

Flags:
`

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fail := cli.Failer("regiment sim", stderr)
	fs := cli.NewFlagSet("regiment sim", simUsage, stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL); required")
	scenarioPath := fs.String("scenario", "", "scenario `file` (HCL); required")
	policy := fs.String("policy", "static", "policy that sets replicas: "+policyNames)
	seed := fs.Uint64("seed", 0, "override the scenario's seed (0: keep it)")
	duration := fs.Duration("duration", 0, "override the scenario's duration, e.g. 6h (0: keep it)")
	asJSON := fs.Bool("json", false, "print metrics as JSON on stdout (wall time goes to stderr)")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	if *configPath == "" || *scenarioPath == "" || fs.NArg() > 0 {
		return cli.UsageFailer(fs, stderr)("--config and --scenario are required, and nothing else")
	}
	w, err := scenario.LoadWorld(*configPath, *scenarioPath)
	if err != nil {
		return fail(err)
	}
	if err := w.Override(*seed, *duration); err != nil {
		fmt.Fprintf(stderr, "regiment sim: %v\n", err)
		return 1
	}
	s, err := w.NewSimOn(baseline.World(*policy, w.Config))
	if err != nil {
		return fail(err)
	}
	p, err := newPolicy(w, *policy, s)
	if err != nil {
		fmt.Fprintf(stderr, "regiment sim: %v\n", err)
		return 2
	}
	bar := cli.NewProgress(stderr)
	start := time.Now()
	err = w.Simulate(ctx, s, p, func(elapsed time.Duration) {
		bar.Update(false, "simulating %s: %s of %s", w.Name, elapsed, w.Duration)
	})
	if err != nil {
		bar.Done()
		fmt.Fprintln(stderr, "regiment sim: interrupted")
		return 1
	}
	bar.Done()
	wall := time.Since(start).Seconds()
	m := s.Metrics()
	if *asJSON {
		out, _ := json.MarshalIndent(simReport{Config: w.Config.Cluster.Name, Scenario: w.Name, Policy: *policy, Seed: w.Seed, Metrics: m}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
		fmt.Fprintf(stderr, "wall_seconds %.3f (%.0fx real time)\n", wall, m.SimSeconds/wall)
		return 0
	}
	eval.WriteMetrics(stdout, w.Config.Cluster.Name, w.Name, *policy, m, wall)
	return 0
}

// maxCeilingRows is how many ceiling-bound apps the lists show
// (eval.MaxCeilingRows).
const maxCeilingRows = eval.MaxCeilingRows

// printCeilingBound is run's list of ceiling-bound apps (eval.WriteCeilingBound).
var printCeilingBound = eval.WriteCeilingBound
