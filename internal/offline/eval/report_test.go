package eval

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/offline/sim"
)

// costAggregate is an aggregate of one seed with the given mean cost.
func costAggregate(policy string, cost float64) *Aggregate {
	return &Aggregate{Scenario: "s", Policy: policy, Seeds: 1, CostCoreHours: Stat{Mean: cost, Min: cost, Max: cost}}
}

func TestGapCaptured(t *testing.T) {
	tests := []struct {
		name              string
		policy, hpa, orcl float64 // mean cost_core_hours; orcl < 0: the oracle did not run
		want              float64 // -1: n/a
	}{
		{"the gap captured is 1 for the oracle", 80, 100, 80, 1},
		{"the gap captured is 0 for hpa", 100, 100, 80, 0},
		{"a policy halfway between captures half the gap", 90, 100, 80, 0.5},
		{"a policy dearer than hpa captures a negative share", 110, 100, 80, -0.5},
		{"a policy cheaper than the oracle captures more than all of it", 70, 100, 80, 1.5},
		{"without the oracle the gap captured is n/a", 90, 100, -1, -1},
		{"an oracle under 1% cheaper than hpa leaves it n/a", 99.5, 100, 99.01, -1},
		{"an oracle 1% cheaper than hpa gives it", 99.5, 100, 99, 0.5},
		{"an oracle dearer than hpa leaves it n/a", 90, 100, 101, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oracle *Aggregate
			if tt.orcl >= 0 {
				oracle = costAggregate(refOracle, tt.orcl)
			}
			got := gapCaptured(costAggregate("p", tt.policy), costAggregate(refHPA, tt.hpa), oracle)
			switch {
			case tt.want == -1 && got != nil:
				t.Fatalf("gap captured %v, want n/a", *got)
			case tt.want != -1 && got == nil:
				t.Fatalf("gap captured n/a, want %v", tt.want)
			case got != nil && (*got-tt.want > 1e-9 || tt.want-*got > 1e-9):
				t.Fatalf("gap captured %v, want %v", *got, tt.want)
			}
		})
	}
}

func TestScaleOutStat(t *testing.T) {
	runs := []RunResult{
		{Outcome: Outcome{ScaleOut: sim.ScaleOut{Episodes: 4, P50Seconds: 60, P95Seconds: 200}}},
		{Outcome: Outcome{ScaleOut: sim.ScaleOut{}}},
		{Outcome: Outcome{ScaleOut: sim.ScaleOut{Episodes: 2, P50Seconds: 20, P95Seconds: 100}}},
	}
	got := scaleOutStat(runs, func(r *RunResult) *sim.ScaleOut { return &r.ScaleOut })
	t.Run("episodes average over every seed", func(t *testing.T) {
		if got.Episodes != (Stat{Mean: 2, Min: 0, Max: 4}) {
			t.Fatalf("episodes %+v, want mean 2 over 3 seeds", got.Episodes)
		}
	})
	t.Run("scale-out times average only the seeds with an episode", func(t *testing.T) {
		if got.Seeds != 2 || got.P50Seconds != (Stat{Mean: 40, Min: 20, Max: 60}) || got.P95Seconds != (Stat{Mean: 150, Min: 100, Max: 200}) {
			t.Fatalf("%+v, want 2 seeds, p50 mean 40, p95 mean 150", got)
		}
	})
	t.Run("no episode in any seed leaves the times at 0", func(t *testing.T) {
		none := scaleOutStat(runs[1:2], func(r *RunResult) *sim.ScaleOut { return &r.ScaleOut })
		if none.Seeds != 0 || none.P50Seconds != (Stat{}) {
			t.Fatalf("%+v, want no seed and zero times", none)
		}
	})
}

// markdownOf writes report.md for one scenario with aggregates of the given
// mean costs (policy -> cost_core_hours).
func markdownOf(t *testing.T, costs map[string]float64, policies ...string) string {
	t.Helper()
	r := &Report{Cluster: "c", Scenarios: []ScenarioInfo{{Name: "s"}}, Policies: policies, Seeds: 1}
	for _, p := range policies {
		r.Aggregates = append(r.Aggregates, *costAggregate(p, costs[p]))
	}
	for i := range r.Aggregates {
		r.Aggregates[i].GapCaptured = gapCaptured(&r.Aggregates[i], r.Aggregate("s", refHPA), r.Aggregate("s", refOracle))
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// cell is column col (0: policy) of the first table row of policy.
func cell(md, policy string, col int) string {
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > col+1 && strings.TrimSpace(cells[1]) == policy {
			return strings.TrimSpace(cells[col+1])
		}
	}
	return ""
}

func TestMarkdownGapCaptured(t *testing.T) {
	costs := map[string]float64{"hpa": 100, "static": 150, "oracle": 80, "proportional": 95}
	t.Run("the gap captured column shows each policy's share", func(t *testing.T) {
		md := markdownOf(t, costs, "hpa", "static", "oracle", "proportional")
		// policy, cost, cost ratio, oracle gap, gap captured
		for p, want := range map[string]string{"hpa": "0.00", "oracle": "1.00", "proportional": "0.25", "static": "-2.50"} {
			if got := cell(md, p, 4); got != want {
				t.Errorf("%s: gap captured %q, want %q", p, got, want)
			}
		}
	})
	t.Run("without hpa there is no gap captured column", func(t *testing.T) {
		if md := markdownOf(t, costs, "static", "oracle"); strings.Contains(md, "| gap captured |") {
			t.Error("report.md has a gap captured column without hpa")
		}
	})
	t.Run("a gap under 1% reads n/a and says why", func(t *testing.T) {
		md := markdownOf(t, map[string]float64{"hpa": 100, "oracle": 99.5}, "hpa", "oracle")
		if got := cell(md, "oracle", 4); got != "n/a" || !strings.Contains(md, "less than 1% cheaper than hpa here") {
			t.Errorf("gap captured %q, want n/a and a note", got)
		}
	})
}

// Totals sum each policy's means over the scenarios, per tier too, and the
// report's "All scenarios" table gives their ratios to hpa's.
func TestTotalsSumTheScenarios(t *testing.T) {
	agg := func(scenario, policy string, cost, breach, p0, atMax float64) Aggregate {
		return Aggregate{Scenario: scenario, Policy: policy, CostCoreHours: Stat{Mean: cost}, BreachAppMinutes: Stat{Mean: breach},
			BreachAppMinutesAtMax: Stat{Mean: atMax},
			ScalingActions:        Stat{Mean: 10}, NodeChurn: Stat{Mean: 4}, PendingPodHours: Stat{Mean: 1},
			Requests: Stat{Mean: 1000}, BadRequests: Stat{Mean: breach}, EnergyKWh: Stat{Mean: cost / 10},
			Tiers: []TierAggregate{{Tier: 0, BreachAppMinutes: Stat{Mean: p0}}, {Tier: 2, BreachAppMinutes: Stat{Mean: breach - p0}}}}
	}
	r := &Report{Scenarios: []ScenarioInfo{{Name: "a"}, {Name: "b"}}, Policies: []string{refHPA, "p"},
		Tiers:      []Tier{{Tier: 0}, {Tier: 2}},
		Aggregates: []Aggregate{agg("a", refHPA, 100, 40, 10, 20), agg("a", "p", 90, 10, 5, 5), agg("b", refHPA, 300, 60, 30, 0), agg("b", "p", 330, 40, 10, 25)}}
	for _, pol := range r.Policies {
		r.Totals = append(r.Totals, r.total(pol))
	}
	p := r.Total("p")
	if p == nil || p.Scenarios != 2 || p.CostCoreHours != 420 || p.BreachAppMinutes != 50 || p.BreachAppMinutesAtMax != 30 || p.ScalingActions != 20 ||
		p.NodeChurn != 8 || p.PendingPodHours != 2 || p.Tiers[0] != (TierTotal{Tier: 0, BreachAppMinutes: 15}) || p.Tiers[1].BreachAppMinutes != 35 {
		t.Fatalf("total of p: %+v", p)
	}
	if r.Total("none") != nil {
		t.Error("a policy that did not run has a total")
	}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	// p over hpa: cost 420/400, breaches 50/100, P0 15/40, 30 at max_replicas
	// and (50 - 30)/(100 - 20) below it, the rest 1.
	// Bad requests 50 of 2000 (0.025, half hpa's 100), energy 42 kWh of hpa's 40.
	if p.BadRequests != 50 || p.Requests != 2000 || p.BadRequestRatio != 0.025 || p.EnergyKWh != 42 {
		t.Fatalf("total of p: %v of %v requests bad (%v), %v kWh", p.BadRequests, p.Requests, p.BadRequestRatio, p.EnergyKWh)
	}
	if want := "| p | 420.0 | 1.050 | 50.0 | 0.500 | 0.375 | 30.0 | 0.250 | 0.02500 | 0.500 | 42 | 1.050 | 20 | 1.000 | 8.0 | 1.000 | 2.00 | 1.000 |"; !strings.Contains(b.String(), want) {
		t.Errorf("report.md has no totals row %q:\n%s", want, b.String())
	}
	if !strings.Contains(b.String(), "Sums over the 2 scenarios") {
		t.Errorf("report.md does not say what the totals sum:\n%s", b.String())
	}
}

// The totals end with the hierarchy's worth, regiment over
// regiment-independent, when both ran.
func TestTotalsPriceTheHierarchy(t *testing.T) {
	r := &Report{Scenarios: []ScenarioInfo{{Name: "a"}}, Policies: []string{Regiment, Independent}, Totals: []Total{
		{Policy: Regiment, CostCoreHours: 90, BreachAppMinutes: 30, BadRequests: 5, EnergyKWh: 9},
		{Policy: Independent, CostCoreHours: 100, BreachAppMinutes: 40, BadRequests: 10, EnergyKWh: 10},
	}}
	var b bytes.Buffer
	r.writeTotals(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) })
	want := "regiment over regiment-independent (its Soldiers without the Commander): cost 0.900, breaches 0.750, bad requests 0.500, energy 0.900."
	if !strings.Contains(b.String(), want) {
		t.Fatalf("totals lack %q:\n%s", want, b.String())
	}
	r.Totals = r.Totals[:1]
	b.Reset()
	r.writeTotals(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) })
	if strings.Contains(b.String(), "hierarchy") {
		t.Fatalf("the hierarchy is priced without its ablation:\n%s", b.String())
	}
}
