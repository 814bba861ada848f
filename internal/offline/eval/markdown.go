package eval

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Reference policies the Markdown report compares against, when they ran.
const (
	refHPA    = "hpa"
	refOracle = "oracle"
)

// WriteMarkdown writes report.md: per scenario, the means over seeds with
// ratios against hpa and the oracle gap, a per-tier table, and the plots.
func (r *Report) WriteMarkdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }

	p("# Evaluation: cluster %s\n\n", r.Cluster)
	p("Policies: %s. Seeds: %d per scenario (run k uses the scenario's seed + k, the same traffic for every policy). ",
		strings.Join(r.Policies, ", "), r.Seeds)
	p("Wall time: %s for %d runs.\n\n", fmtWall(r.WallSeconds), len(r.Runs))
	p("Figures are means over seeds (min and max per seed are in report.json). ")
	p("Ratios are a policy's mean over %s's: cost ratio (cost_core_hours), breach ratio (breach_app_minutes), ", refHPA)
	p("actions ratio (scaling_actions); \"n/a\" when %s did not run or its figure is 0. ", refHPA)
	p("Oracle gap is cost_core_hours over the %s's. ", refOracle)
	p("Gap captured is the share of the %s-to-%s cost gap a policy captures, (%s - policy) / (%s - %s) on cost_core_hours: ",
		refHPA, refOracle, refHPA, refHPA, refOracle)
	p("1 for the %s, 0 for %s; \"n/a\" when the %s is less than %.0f%% cheaper than %s. ", refOracle, refHPA, refOracle, 100*minGap, refHPA)
	p("reward_mean is the mean per-tick Commander reward (default weights). ")
	p("Scale-out times are the p50 and p95 durations of correlated scale-out episodes (from the tick an app's demand first ")
	p("exceeds its ready capacity to the tick it covers it again, started within 30 s of those of at least 5%% of the apps), ")
	p("means over the seeds that had one. ")
	p("Every metric is defined in docs/evaluation.md#metrics.\n\n")

	for _, sc := range r.Scenarios {
		hpa := r.Aggregate(sc.Name, refHPA)
		oracle := r.Aggregate(sc.Name, refOracle)
		p("## %s\n\n", sc.Name)
		p("Seed %d (+0..%d), %s simulated per run.\n\n", sc.Seed, r.Seeds-1, time.Duration(sc.SimSeconds*float64(time.Second)))

		gap := hpa != nil && oracle != nil
		p("| policy | cost_core_hours | cost ratio |")
		if oracle != nil {
			p(" oracle gap |")
		}
		if gap {
			p(" gap captured |")
		}
		p(" slo_compliance | breach_app_minutes | breach ratio | bad_request_ratio | bad requests ratio | energy_kwh | energy ratio | scaling_actions | actions ratio | cascade_events | overprovision_pct | reward_mean | wall_seconds |\n")
		p("|---|---:|---:|")
		if oracle != nil {
			p("---:|")
		}
		if gap {
			p("---:|")
		}
		p("---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, pol := range r.Policies {
			a := r.Aggregate(sc.Name, pol)
			if a == nil {
				continue
			}
			p("| %s | %.1f | %s |", pol, a.CostCoreHours.Mean, ratio(a, hpa, costOf))
			if oracle != nil {
				p(" %s |", ratio(a, oracle, costOf))
			}
			if gap {
				p(" %s |", fmtShare(a.GapCaptured))
			}
			p(" %.4f | %.1f | %s | %.5f | %s | %.4g | %s | %.0f | %s | %.0f | %.1f | %.3f | %.1f |\n",
				a.SLOCompliance.Mean, a.BreachAppMinutes.Mean, ratio(a, hpa, breachOf),
				a.BadRequestRatio.Mean, ratio(a, hpa, badOf), a.EnergyKWh.Mean, ratio(a, hpa, energyOf),
				a.ScalingActions.Mean, ratio(a, hpa, actionsOf), a.CascadeEvents.Mean,
				a.OverprovisionPct.Mean, a.RewardMean.Mean, a.WallSeconds.Mean)
		}

		if gap && hpa.GapCaptured == nil {
			p("\nThe %s is less than %.0f%% cheaper than %s here: gap captured is n/a.\n", refOracle, 100*minGap, refHPA)
		}

		p("\nNodes, pods and scale-out (means over seeds; floor share is floor_core_hours / cost_core_hours; ")
		p("episodes are correlated of all, scale-out times of the correlated ones):\n\n")
		p("| policy | node_churn | node_churn_per_hour | peak_nodes | peak_pods | avg_cpu_utilisation | floor_core_hours | floor share |")
		p(" pending_pod_hours | max_scale_ups_30s | priority inversions (P3 while P0 waits) | preemptions | scale-out episodes | scale_out p50 | scale_out p95 |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, pol := range r.Policies {
			a := r.Aggregate(sc.Name, pol)
			if a == nil {
				continue
			}
			floorShare := "n/a"
			if a.CostCoreHours.Mean > 0 {
				floorShare = strconv.FormatFloat(a.FloorCoreHours.Mean/a.CostCoreHours.Mean, 'f', 2, 64)
			}
			p("| %s | %.1f | %.2f | %.1f | %.0f | %.3f | %.1f | %s | %.2f | %.0f | %.1f (%.1f, max %.0f) | %.1f | %s | %s | %s |\n", pol,
				a.NodeChurn.Mean, a.NodeChurnPerHour.Mean, a.PeakNodes.Mean, a.PeakPods.Mean, a.AvgCPUUtilisation.Mean,
				a.FloorCoreHours.Mean, floorShare, a.PendingPodHours.Mean, a.MaxScaleUps30s.Mean,
				a.PriorityInversions.Mean, a.P3WhileP0Waits.Mean, a.P3WhileP0Waits.Max, a.Preemptions.Mean,
				fmtEpisodes(a.ScaleOut, a.ScaleOutAll), fmtSeconds(a.ScaleOut, a.ScaleOut.P50Seconds.Mean), fmtSeconds(a.ScaleOut, a.ScaleOut.P95Seconds.Mean))
		}

		p("\nThe node provisioner (a stall is a failed scale-up that held node requests back: a node-group backoff, ")
		p("an offering marked unavailable; none with the default token bucket, which never fails):\n\n")
		p("| policy | runs with a stall | stalls (mean) | longest stall (max) | node requests within 2 min (mean, max) |\n")
		p("|---|---:|---:|---:|---:|\n")
		for _, pol := range r.Policies {
			if a := r.Aggregate(sc.Name, pol); a != nil {
				p("| %s | %d of %d | %.1f | %.1f min | %.0f, %.0f |\n", pol, a.StalledRuns, a.Seeds,
					a.ProvisionerStalls.Mean, a.LongestStallMinutes.Max, a.MaxNodeRequests2m.Mean, a.MaxNodeRequests2m.Max)
			}
		}

		p("\nPer priority tier (means over seeds):\n\n")
		p("| policy | tier | domains | slo_compliance | breach_app_minutes | bad_request_ratio | energy_kwh | overprovision_pct | cascade_events | core_hours |")
		p(" pending_pod_hours | scale-out episodes | scale_out p50 | scale_out p95 |\n")
		p("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, pol := range r.Policies {
			a := r.Aggregate(sc.Name, pol)
			if a == nil {
				continue
			}
			for _, t := range a.Tiers {
				p("| %s | P%d | %s | %.4f | %.1f | %.5f | %.4g | %.1f | %.0f | %.1f | %.2f | %s | %s | %s |\n", pol, t.Tier, strings.Join(t.Domains, ", "),
					t.SLOCompliance.Mean, t.BreachAppMinutes.Mean, t.BadRequestRatio.Mean, t.EnergyKWh.Mean, t.OverprovisionPct.Mean, t.CascadeEvents.Mean, t.CoreHours.Mean,
					t.PendingPodHours.Mean, fmtEpisodes(t.ScaleOut, t.ScaleOutAll),
					fmtSeconds(t.ScaleOut, t.ScaleOut.P50Seconds.Mean), fmtSeconds(t.ScaleOut, t.ScaleOut.P95Seconds.Mean))
			}
		}

		if doms := r.domainNames(sc.Name); len(doms) > 0 {
			p("\nPlots (seed %d):\n\n", sc.Seed)
			p("- breaching apps per minute: [%s](%s)\n", breachPlotName(sc.Name), breachPlotName(sc.Name))
			p("- nodes ready, provisioning and queued: [%s](%s)\n", nodesPlotName(sc.Name), nodesPlotName(sc.Name))
			p("- pending pods per priority tier: [%s](%s)\n", pendingPlotName(sc.Name), pendingPlotName(sc.Name))
			for _, d := range doms {
				p("- %s demand and replicas: [%s](%s)\n", d, domainPlotName(sc.Name, d), domainPlotName(sc.Name, d))
			}
		}
		p("\n")
	}
	p("## All scenarios\n\n")
	r.writeTotals(p)
	p("Cost against SLO compliance, one point per scenario x seed: [%s](%s)\n", costPlotName, costPlotName)
	if hpa := r.Total(refHPA); hpa != nil && hpa.CostCoreHours > 0 && hpa.BreachAppMinutes > 0 {
		p("\nCost against breaches over the whole set, over %s's: [%s](%s)\n", refHPA, tradeOffPlotName, tradeOffPlotName)
	}
	return b.Flush()
}

// writeTotals writes the table of Totals, with ratios to hpa's when it ran.
func (r *Report) writeTotals(p func(string, ...any)) {
	if len(r.Totals) == 0 {
		return
	}
	hpa := r.Total(refHPA)
	top := "" // the most important tier's breach ratio, when there are tiers
	if len(r.Tiers) > 0 {
		top = fmt.Sprintf(" P%d breach ratio |", r.Tiers[0].Tier)
	}
	p("Sums over the %s of the means over seeds; ratios are a policy's sum over %s's (\"n/a\" when %s did not run ",
		Count(len(r.Scenarios), "scenario", "scenarios"), refHPA, refHPA)
	p("or its sum is 0). \"at max_replicas\" is the breach app-minutes spent with max_replicas ready, which no policy ")
	p("answers with more replicas (raise the ceiling instead); \"ratio below max\" is the breach ratio of the rest:\n\n")
	p("| policy | cost_core_hours | cost ratio | breach_app_minutes | breach ratio |%s at max_replicas | ratio below max | bad_request_ratio | bad requests ratio | energy_kwh | energy ratio | scaling_actions | actions ratio |", top)
	p(" node_churn | churn ratio | pending_pod_hours | pending ratio |\n")
	p("|---|---:|---:|---:|---:|")
	if top != "" {
		p("---:|")
	}
	p("---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i := range r.Totals {
		t := &r.Totals[i]
		p("| %s | %.1f | %s | %.1f | %s |", t.Policy, t.CostCoreHours, totalRatio(t, hpa, func(t *Total) float64 { return t.CostCoreHours }),
			t.BreachAppMinutes, totalRatio(t, hpa, func(t *Total) float64 { return t.BreachAppMinutes }))
		if top != "" {
			p(" %s |", totalRatio(t, hpa, func(t *Total) float64 { return t.Tiers[0].BreachAppMinutes }))
		}
		p(" %.1f | %s |", t.BreachAppMinutesAtMax, totalRatio(t, hpa, func(t *Total) float64 { return t.BreachAppMinutes - t.BreachAppMinutesAtMax }))
		p(" %.5f | %s | %.4g | %s |", t.BadRequestRatio, totalRatio(t, hpa, func(t *Total) float64 { return t.BadRequests }),
			t.EnergyKWh, totalRatio(t, hpa, func(t *Total) float64 { return t.EnergyKWh }))
		p(" %.0f | %s | %.1f | %s | %.2f | %s |\n",
			t.ScalingActions, totalRatio(t, hpa, func(t *Total) float64 { return t.ScalingActions }),
			t.NodeChurn, totalRatio(t, hpa, func(t *Total) float64 { return t.NodeChurn }),
			t.PendingPodHours, totalRatio(t, hpa, func(t *Total) float64 { return t.PendingPodHours }))
	}
	p("\n")
	if reg, ind := r.Total(Regiment), r.Total(Independent); reg != nil && ind != nil {
		p("The hierarchy's worth, %s over %s (its Soldiers without the Commander): cost %s, breaches %s, bad requests %s, energy %s.\n\n",
			Regiment, Independent, TotalRatio(reg.CostCoreHours, ind.CostCoreHours), TotalRatio(reg.BreachAppMinutes, ind.BreachAppMinutes),
			TotalRatio(reg.BadRequests, ind.BadRequests), TotalRatio(reg.EnergyKWh, ind.EnergyKWh))
	}
}

// Count is n and its noun, one or many: "1 policy", "6 policies".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// totalRatio is TotalRatio of f's figures of t and ref, "n/a" without ref.
func totalRatio(t, ref *Total, f func(*Total) float64) string {
	if ref == nil {
		return "n/a"
	}
	return TotalRatio(f(t), f(ref))
}

// TotalRatio formats a whole set's figure v over the reference's ref to
// three decimals (such ratios differ in the third), "n/a" when ref is 0.
func TotalRatio(v, ref float64) string {
	if ref == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(v/ref, 'f', 3, 64)
}

func costOf(a *Aggregate) float64    { return a.CostCoreHours.Mean }
func breachOf(a *Aggregate) float64  { return a.BreachAppMinutes.Mean }
func actionsOf(a *Aggregate) float64 { return a.ScalingActions.Mean }
func badOf(a *Aggregate) float64     { return a.BadRequests.Mean }
func energyOf(a *Aggregate) float64  { return a.EnergyKWh.Mean }

// ratio formats f(a) / f(ref), "n/a" without ref or when f(ref) is 0.
func ratio(a, ref *Aggregate, f func(*Aggregate) float64) string {
	if ref == nil || f(ref) == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(f(a)/f(ref), 'f', 2, 64)
}

// fmtShare formats a share with two decimals, "n/a" for nil.
func fmtShare(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

// fmtEpisodes is "correlated of all" episodes, means over seeds.
func fmtEpisodes(cor, all ScaleOutStat) string {
	return fmtCount(cor.Episodes.Mean) + " of " + fmtCount(all.Episodes.Mean)
}

// fmtCount formats a mean count: whole numbers as such, others to one decimal.
func fmtCount(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// fmtSeconds formats a scale-out time as a duration, "n/a" when no seed had
// an episode.
func fmtSeconds(s ScaleOutStat, seconds float64) string {
	if s.Seeds == 0 {
		return "n/a"
	}
	return time.Duration(seconds * float64(time.Second)).Round(time.Second).String()
}

func fmtWall(seconds float64) string {
	return time.Duration(seconds * float64(time.Second)).Round(100 * time.Millisecond).String()
}

// domainNames lists the domains of a scenario's sampled series.
func (r *Report) domainNames(scenario string) []string {
	for i := range r.Runs {
		x := &r.Runs[i]
		if x.Scenario == scenario && x.series != nil {
			names := make([]string, len(x.series.Domains))
			for k, d := range x.series.Domains {
				names[k] = d.Name
			}
			return names
		}
	}
	return nil
}
