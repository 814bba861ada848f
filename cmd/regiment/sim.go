package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/regimentd/regiment/eval"
	"github.com/regimentd/regiment/sim"
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
peak_nodes, pending_pod_hours, sim_seconds and wall_seconds, per domain too,
and the apps that breached with max_replicas ready: demand their ceiling
cannot serve, which no autoscaler fixes. Same config, scenario and seed give
the same metrics, byte for byte with --json. Besides the policies below, the
bounds of docs/evaluation.md (oracle-now+P, oracle-expected+P, ...) run too.

Example:
  regiment sim --config examples/paymentscale.hcl --scenario examples/scenarios/diurnal.hcl --policy static

Flags:
`

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sim", simUsage, stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL); required")
	scenarioPath := fs.String("scenario", "", "scenario `file` (HCL); required")
	policy := fs.String("policy", "static", "policy that sets replicas: "+policyNames)
	seed := fs.Uint64("seed", 0, "override the scenario's seed (0: keep it)")
	duration := fs.Duration("duration", 0, "override the scenario's duration, e.g. 6h (0: keep it)")
	asJSON := fs.Bool("json", false, "print metrics as JSON on stdout (wall time goes to stderr)")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *configPath == "" || *scenarioPath == "" || fs.NArg() > 0 {
		return usageFailer("sim", fs, stderr)("--config and --scenario are required, and nothing else")
	}
	w, err := loadWorld(*configPath, *scenarioPath)
	if err != nil {
		fmt.Fprintf(stderr, "regiment sim: %v\n", err)
		return 1
	}
	if *seed != 0 {
		w.sc.Seed = *seed
	}
	if *duration > 0 {
		w.sc.Duration = *duration
		if w.sc.Warmup >= w.sc.Duration {
			fmt.Fprintf(stderr, "regiment sim: --duration %s is within the scenario's warm-up (%s): no tick would be accounted\n", w.sc.Duration, w.sc.Warmup)
			return 1
		}
	}
	s, err := w.newSimFor(*policy)
	if err != nil {
		fmt.Fprintf(stderr, "regiment sim: %v\n", err)
		return 1
	}
	p, err := w.newPolicy(*policy, s)
	if err != nil {
		fmt.Fprintf(stderr, "regiment sim: %v\n", err)
		return 2
	}
	bar := newProgress(stderr)
	start := time.Now()
	for !s.Done() {
		if ctx.Err() != nil {
			bar.done()
			fmt.Fprintln(stderr, "regiment sim: interrupted")
			return 1
		}
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
		bar.update(false, "simulating %s: %s of %s", w.sc.Name, s.Now().Sub(w.sc.Start), w.sc.Duration)
	}
	bar.done()
	wall := time.Since(start).Seconds()
	m := s.Metrics()
	if *asJSON {
		out, _ := json.MarshalIndent(simReport{Config: w.cfg.Cluster.Name, Scenario: w.sc.Name, Policy: *policy, Seed: w.sc.Seed, Metrics: m}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
		fmt.Fprintf(stderr, "wall_seconds %.3f (%.0fx real time)\n", wall, m.SimSeconds/wall)
		return 0
	}
	printMetrics(stdout, w.cfg.Cluster.Name, w.sc.Name, *policy, m, wall)
	return 0
}

func printMetrics(out io.Writer, cluster, scenario, policy string, m sim.Metrics, wall float64) {
	fmt.Fprintf(out, "cluster %s, scenario %s, policy %s\n\n", cluster, scenario, policy)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "cost_core_hours\t%.1f\t(cost %.2f)\n", m.CostCoreHours, m.Cost)
	fmt.Fprintf(tw, "slo_compliance\t%.4f\n", m.SLOCompliance)
	fmt.Fprintf(tw, "breach_app_minutes\t%.1f\t(%.1f of them with max_replicas ready)\n", m.BreachAppMinutes, m.BreachAppMinutesAtMax)
	fmt.Fprintf(tw, "bad_requests\t%.4g\t(bad_request_ratio %.5f of %.4g requests: failed or over the p99 target)\n", m.BadRequests, m.BadRequestRatio, m.Requests)
	fmt.Fprintf(tw, "energy_kwh\t%.4g\t(idle watts a node + watts a busy core)\n", m.EnergyKWh)
	fmt.Fprintf(tw, "scaling_actions\t%d\n", m.ScalingActions)
	fmt.Fprintf(tw, "max_scale_ups_30s\t%d\t(most apps whose target rose within 30 s)\n", m.MaxScaleUps30s)
	fmt.Fprintf(tw, "scale_out\t%s\t(correlated episodes)\n", fmtScaleOut(m.ScaleOut))
	fmt.Fprintf(tw, "scale_out_all\t%s\t(every episode)\n", fmtScaleOut(m.ScaleOutAll))
	fmt.Fprintf(tw, "peak_nodes\t%d\n", m.PeakNodes)
	fmt.Fprintf(tw, "node_churn\t%d\t(%d provisions, %d removals; node_churn_per_hour %.2f)\n",
		m.NodeChurn, m.NodeProvisions, m.NodeRemovals, m.NodeChurnPerHour)
	fmt.Fprintf(tw, "avg_cpu_utilisation\t%.3f\t(busy core-hours / cost_core_hours)\n", m.AvgCPUUtilisation)
	fmt.Fprintf(tw, "peak_pods\t%d\n", m.PeakPods)
	floorShare := 0.0
	if m.CostCoreHours > 0 {
		floorShare = m.FloorCoreHours / m.CostCoreHours
	}
	fmt.Fprintf(tw, "floor_core_hours\t%.1f\t(%.2f of cost_core_hours)\n", m.FloorCoreHours, floorShare)
	fmt.Fprintf(tw, "pending_pod_hours\t%.1f\n", m.PendingPodHours)
	fmt.Fprintf(tw, "priority_inversions\t%d\t(%d of P3 while P0 waits; %d preemptions)\n", m.PriorityInversions, m.P3WhileP0Waits, m.Preemptions)
	fmt.Fprintf(tw, "sim_seconds\t%.0f\n", m.SimSeconds)
	fmt.Fprintf(tw, "wall_seconds\t%.3f\t(%.0fx real time)\n", wall, m.SimSeconds/wall)
	tw.Flush()
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "tier\tdomains\tbad_request_ratio\tenergy_kwh\tpending_pod_hours\tfloor_core_hours\tscale_out\tscale_out_all")
	for _, t := range m.Tiers {
		fmt.Fprintf(tw, "P%d\t%s\t%.5f\t%.4g\t%.2f\t%.1f\t%s\t%s\n", t.Priority, strings.Join(t.Domains, ","), t.BadRequestRatio, t.EnergyKWh, t.PendingPodHours,
			t.FloorCoreHours, fmtScaleOut(t.ScaleOut), fmtScaleOut(t.ScaleOutAll))
	}
	tw.Flush()
	fmt.Fprintln(out)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "domain\ttier\tcore_hours\tslo_compliance\tbreach_app_minutes\tat_max\tbad_request_ratio\tenergy_kwh\tscaling_actions\tpending_pod_hours\tfloor_core_hours\tscale_out")
	for _, d := range m.Domains {
		fmt.Fprintf(tw, "%s\tP%d\t%.1f\t%.4f\t%.1f\t%.1f\t%.5f\t%.4g\t%d\t%.2f\t%.1f\t%s\n", d.Name, d.Priority, d.CoreHours, d.SLOCompliance,
			d.BreachAppMinutes, d.BreachAppMinutesAtMax, d.BadRequestRatio, d.EnergyKWh, d.ScalingActions, d.PendingPodHours, d.FloorCoreHours, fmtScaleOut(d.ScaleOut))
	}
	tw.Flush()
	printCeilingBound(out, m.CeilingBound, "in --json")
}

// maxCeilingRows is how many ceiling-bound apps printMetrics lists.
const maxCeilingRows = 10

// printCeilingBound lists the apps that breached with max_replicas ready,
// most first: no policy answers those with more replicas. rest says where
// the apps past maxCeilingRows are listed.
func printCeilingBound(out io.Writer, apps []sim.CeilingBound, rest string) {
	if len(apps) == 0 {
		return
	}
	fmt.Fprintf(out, "\n%s breached with max_replicas ready (raise their set's max_replicas; no autoscaler can help them):\n",
		eval.Count(len(apps), "app", "apps"))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "app\tmax_replicas\tbreach_app_minutes")
	for i, a := range apps {
		if i == maxCeilingRows {
			fmt.Fprintf(tw, "... %d more %s\n", len(apps)-maxCeilingRows, rest)
			break
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\n", a.App, a.MaxReplicas, a.BreachAppMinutes)
	}
	tw.Flush()
}

// fmtScaleOut is "N episodes (K open), p50 D, p95 D", or "0 episodes".
func fmtScaleOut(s sim.ScaleOut) string {
	if s.Episodes == 0 {
		return "0 episodes"
	}
	d := func(seconds float64) time.Duration {
		return time.Duration(seconds * float64(time.Second)).Round(time.Second)
	}
	return fmt.Sprintf("%d episodes (%d open), p50 %s, p95 %s", s.Episodes, s.Open, d(s.P50Seconds), d(s.P95Seconds))
}
