package eval

import (
	"bufio"
	"fmt"
	"io"
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
	p("reward_mean is the mean per-tick Commander reward (default weights). ")
	p("Every metric is defined in README.md, section \"Evaluation metrics\".\n\n")

	for _, sc := range r.Scenarios {
		hpa := r.Aggregate(sc.Name, refHPA)
		oracle := r.Aggregate(sc.Name, refOracle)
		p("## %s\n\n", sc.Name)
		p("Seed %d (+0..%d), %s simulated per run.\n\n", sc.Seed, r.Seeds-1, time.Duration(sc.SimSeconds*float64(time.Second)))

		p("| policy | cost_core_hours | cost ratio |")
		if oracle != nil {
			p(" oracle gap |")
		}
		p(" slo_compliance | breach_app_minutes | breach ratio | scaling_actions | actions ratio | cascade_events | overprovision_pct | reward_mean | wall_seconds |\n")
		p("|---|---:|---:|")
		if oracle != nil {
			p("---:|")
		}
		p("---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, pol := range r.Policies {
			a := r.Aggregate(sc.Name, pol)
			if a == nil {
				continue
			}
			p("| %s | %.1f | %s |", pol, a.CostCoreHours.Mean, ratio(a, hpa, costOf))
			if oracle != nil {
				p(" %s |", ratio(a, oracle, costOf))
			}
			p(" %.4f | %.1f | %s | %.0f | %s | %.0f | %.1f | %.3f | %.1f |\n",
				a.SLOCompliance.Mean, a.BreachAppMinutes.Mean, ratio(a, hpa, breachOf),
				a.ScalingActions.Mean, ratio(a, hpa, actionsOf), a.CascadeEvents.Mean,
				a.OverprovisionPct.Mean, a.RewardMean.Mean, a.WallSeconds.Mean)
		}

		p("\nPer priority tier (means over seeds):\n\n")
		p("| policy | tier | domains | slo_compliance | breach_app_minutes | overprovision_pct | cascade_events | core_hours |\n")
		p("|---|---|---|---:|---:|---:|---:|---:|\n")
		for _, pol := range r.Policies {
			a := r.Aggregate(sc.Name, pol)
			if a == nil {
				continue
			}
			for _, t := range a.Tiers {
				p("| %s | P%d | %s | %.4f | %.1f | %.1f | %.0f | %.1f |\n", pol, t.Tier, strings.Join(t.Domains, ", "),
					t.SLOCompliance.Mean, t.BreachAppMinutes.Mean, t.OverprovisionPct.Mean, t.CascadeEvents.Mean, t.CoreHours.Mean)
			}
		}

		if doms := r.domainNames(sc.Name); len(doms) > 0 {
			p("\nPlots (seed %d):\n\n", sc.Seed)
			p("- breaching apps per minute: [%s](%s)\n", breachPlotName(sc.Name), breachPlotName(sc.Name))
			for _, d := range doms {
				p("- %s demand and replicas: [%s](%s)\n", d, domainPlotName(sc.Name, d), domainPlotName(sc.Name, d))
			}
		}
		p("\n")
	}
	p("## All scenarios\n\n")
	p("Cost against SLO compliance, one point per scenario x seed: [%s](%s)\n", costPlotName, costPlotName)
	return b.Flush()
}

func costOf(a *Aggregate) float64    { return a.CostCoreHours.Mean }
func breachOf(a *Aggregate) float64  { return a.BreachAppMinutes.Mean }
func actionsOf(a *Aggregate) float64 { return a.ScalingActions.Mean }

// ratio formats f(a) / f(ref), "n/a" without ref or when f(ref) is 0.
func ratio(a, ref *Aggregate, f func(*Aggregate) float64) string {
	if ref == nil || f(ref) == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(f(a)/f(ref), 'f', 2, 64)
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
