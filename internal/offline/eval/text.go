package eval

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/regimentd/regiment/internal/offline/sim"
)

// The plain-text tables `regiment sim`, `regiment run` and `regiment eval`
// print on a terminal.

// WriteMetrics writes the metrics of one run, of policy on scenario in
// cluster, as `regiment sim` prints them: the totals, then per tier and per
// domain, then the ceiling-bound apps (WriteCeilingBound); wall is the run's
// wall time in seconds.
func WriteMetrics(out io.Writer, cluster, scenario, policy string, m sim.Metrics, wall float64) {
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
	fmt.Fprintf(tw, "provisioner_stalls\t%d\t(longest %.1f min; %d launch failures, %d of them insufficient capacity)\n",
		m.ProvisionerStalls, m.LongestStallMinutes, m.LaunchFailures, m.InsufficientCapacityFailures)
	fmt.Fprintf(tw, "max_node_requests_2m\t%d\t(node wait p95 %.0f s, max %.0f s; at most %d requested and not started)\n",
		m.MaxNodeRequests2m, m.NodeWaitP95Seconds, m.NodeWaitMaxSeconds, m.MaxNodeQueue)
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
	WriteCeilingBound(out, m.CeilingBound, "in --json")
}

// MaxCeilingRows is how many ceiling-bound apps WriteCeilingBound lists.
const MaxCeilingRows = 10

// WriteCeilingBound lists the apps that breached with max_replicas ready,
// most first: no policy answers those with more replicas. rest says where
// the apps past MaxCeilingRows are listed.
func WriteCeilingBound(out io.Writer, apps []sim.CeilingBound, rest string) {
	if len(apps) == 0 {
		return
	}
	fmt.Fprintf(out, "\n%s breached with max_replicas ready (raise their set's max_replicas; no autoscaler can help them):\n",
		Count(len(apps), "app", "apps"))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "app\tmax_replicas\tbreach_app_minutes")
	for i, a := range apps {
		if i == MaxCeilingRows {
			fmt.Fprintf(tw, "... %d more %s\n", len(apps)-MaxCeilingRows, rest)
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

// WriteTotalsText writes every policy's figures over the whole set as ratios to
// hpa's (report.md's "All scenarios" table); nothing when hpa did not run.
func (r *Report) WriteTotalsText(w io.Writer) {
	hpa := r.Total("hpa")
	if hpa == nil {
		return
	}
	top := ""
	if len(r.Tiers) > 0 {
		top = fmt.Sprintf("P%d breaches", r.Tiers[0].Tier)
	}
	fmt.Fprintf(w, "\nover the whole set (%s), sums of the means over seeds, x hpa:\n", Count(len(r.Scenarios), "scenario", "scenarios"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "policy\tcost\tbreaches\t%s\tbelow max\tbad requests\tenergy\tactions\tnode churn\tpending pods\t\n", top)
	ratio := TotalRatio
	for _, t := range r.Totals {
		p0 := ""
		if top != "" {
			p0 = ratio(t.Tiers[0].BreachAppMinutes, hpa.Tiers[0].BreachAppMinutes)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", t.Policy, ratio(t.CostCoreHours, hpa.CostCoreHours),
			ratio(t.BreachAppMinutes, hpa.BreachAppMinutes), p0,
			ratio(t.BreachAppMinutes-t.BreachAppMinutesAtMax, hpa.BreachAppMinutes-hpa.BreachAppMinutesAtMax),
			ratio(t.BadRequests, hpa.BadRequests), ratio(t.EnergyKWh, hpa.EnergyKWh),
			ratio(t.ScalingActions, hpa.ScalingActions),
			ratio(t.NodeChurn, hpa.NodeChurn), ratio(t.PendingPodHours, hpa.PendingPodHours))
	}
	tw.Flush()
	if reg, ind := r.Total(Regiment), r.Total(Independent); reg != nil && ind != nil {
		fmt.Fprintf(w, "\nthe hierarchy's worth, %s x %s: cost %s, breaches %s, bad requests %s, energy %s\n", Regiment, Independent,
			ratio(reg.CostCoreHours, ind.CostCoreHours), ratio(reg.BreachAppMinutes, ind.BreachAppMinutes),
			ratio(reg.BadRequests, ind.BadRequests), ratio(reg.EnergyKWh, ind.EnergyKWh))
	}
	fmt.Fprintln(w)
}
