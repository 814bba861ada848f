package eval_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// smallOptions evaluates every known policy on the small example with the
// self-contained sample scenario, 2 seeds of 1h.
func smallOptions(t *testing.T, workers int) eval.Options {
	t.Helper()
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../../../cmd/regiment/testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	return eval.Options{Config: cfg, Scenarios: []sim.Scenario{{Scenario: sc, Traces: traces}},
		Policies: eval.Policies(), Seeds: 2, Workers: workers, Duration: time.Hour}
}

func TestEvalSmall(t *testing.T) {
	o := smallOptions(t, 2)
	var calls []int
	o.Progress = func(done, total int) { calls = append(calls, done) }
	r, err := eval.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := r.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	runs := len(o.Policies) * o.Seeds
	if want := seq(1, runs); !slices.Equal(calls, want) {
		t.Errorf("progress calls %v, want %v", calls, want)
	}

	t.Run("report.json decodes with every field", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var got eval.Report
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatal(err)
		}
		if len(got.Runs) != runs || len(got.Aggregates) != len(o.Policies) || got.Seeds != 2 || len(got.Tiers) != 4 {
			t.Fatalf("%d runs, %d aggregates, %d seeds, %d tiers; want %d, %d, 2, 4", len(got.Runs), len(got.Aggregates), got.Seeds, len(got.Tiers), runs, len(o.Policies))
		}
		var raw struct {
			Runs       []map[string]any `json:"runs"`
			Aggregates []map[string]any `json:"aggregates"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"scenario", "policy", "seed_index", "seed", "cost_core_hours", "cost", "slo_compliance",
			"breach_app_minutes", "scaling_actions", "cascade_events", "overprovision_pct", "reward_mean", "reward_terms",
			"peak_nodes", "pending_pod_hours", "tiers", "sim_seconds", "wall_seconds", "node_provisions", "node_removals",
			"node_churn", "node_churn_per_hour", "scale_out", "scale_out_all", "max_scale_ups_30s", "avg_cpu_utilisation",
			"peak_pods", "floor_core_hours", "priority_inversions", "breach_app_minutes_at_max",
			"provisioner_stalls", "longest_stall_minutes", "max_node_requests_2m", "launch_failures"} {
			if _, ok := raw.Runs[0][k]; !ok {
				t.Errorf("runs[0] has no %q", k)
			}
		}
		tier := raw.Runs[0]["tiers"].([]any)[0].(map[string]any)
		for _, k := range []string{"tier", "domains", "core_hours", "slo_compliance", "breach_app_minutes", "scaling_actions", "cascade_events", "overprovision_pct",
			"pending_pod_hours", "floor_core_hours", "scale_out", "scale_out_all", "breach_app_minutes_at_max"} {
			if _, ok := tier[k]; !ok {
				t.Errorf("runs[0].tiers[0] has no %q", k)
			}
		}
		for _, k := range []string{"cost_core_hours", "slo_compliance", "breach_app_minutes", "scaling_actions", "cascade_events", "overprovision_pct", "reward_mean", "wall_seconds", "sim_seconds", "tiers",
			"node_churn", "node_churn_per_hour", "scale_out", "scale_out_all", "max_scale_ups_30s", "avg_cpu_utilisation", "peak_pods", "floor_core_hours", "gap_captured", "priority_inversions", "breach_app_minutes_at_max",
			"provisioner_stalls", "stalled_runs", "longest_stall_minutes", "max_node_requests_2m"} {
			if _, ok := raw.Aggregates[0][k]; !ok {
				t.Errorf("aggregates[0] has no %q", k)
			}
		}
		for _, x := range got.Runs {
			atMax := 0.0
			for _, tr := range x.Tiers {
				atMax += tr.BreachAppMinutesAtMax
			}
			if x.BreachAppMinutesAtMax < 0 || x.BreachAppMinutesAtMax > x.BreachAppMinutes || math.Abs(atMax-x.BreachAppMinutesAtMax) > 1e-9 {
				t.Errorf("run %s/%s/%d: %v breach app-minutes at max_replicas of %v, its tiers' %v", x.Scenario, x.Policy, x.Seed,
					x.BreachAppMinutesAtMax, x.BreachAppMinutes, atMax)
			}
			if x.SimSeconds != 3600 || x.CostCoreHours <= 0 || x.SLOCompliance < 0 || x.SLOCompliance > 1 || x.RewardMean < -3 || x.RewardMean > 3 {
				t.Errorf("implausible run %s/%s/%d: %+v", x.Scenario, x.Policy, x.Seed, x.Outcome)
			}
		}
		if len(got.Totals) != len(o.Policies) || got.Totals[0].Policy != o.Policies[0] || got.Totals[0].CostCoreHours != got.Aggregates[0].CostCoreHours.Mean ||
			len(got.Totals[0].Tiers) != len(got.Tiers) {
			t.Errorf("totals %+v: want one per policy, in policy order, summing the one scenario's means per tier", got.Totals)
		}
		a := got.Aggregates[0]
		if a.CostCoreHours.Min > a.CostCoreHours.Mean || a.CostCoreHours.Mean > a.CostCoreHours.Max {
			t.Errorf("aggregate cost %+v: mean outside [min, max]", a.CostCoreHours)
		}
	})

	t.Run("seeds differ", func(t *testing.T) {
		for _, p := range o.Policies {
			a, b := r.Run("small-sample", p, 0), r.Run("small-sample", p, 1)
			if a.Seed != 3 || b.Seed != 4 {
				t.Fatalf("%s: seeds %d and %d, want the scenario's 3 and 4", p, a.Seed, b.Seed)
			}
			if a.OverprovisionPct == b.OverprovisionPct && a.RewardMean == b.RewardMean {
				t.Errorf("%s: seeds 3 and 4 gave the same run: %+v", p, a.Outcome)
			}
		}
	})

	t.Run("every policy of a seed sees the same demand", func(t *testing.T) {
		f, err := os.Open(filepath.Join(dir, "series.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		rps := map[string]map[string]string{} // domain/minute -> policy -> rps
		policies := map[string]bool{}
		for _, row := range rows[1:] {
			key := row[3] + "/" + row[4]
			if rps[key] == nil {
				rps[key] = map[string]string{}
			}
			rps[key][row[1]] = row[5]
			policies[row[1]] = true
		}
		if len(policies) != len(o.Policies) || len(rps) != 5*60 {
			t.Fatalf("series.csv has %d policies and %d domain-minutes, want %d and %d", len(policies), len(rps), len(o.Policies), 5*60)
		}
		nonzero := 0
		for key, byPolicy := range rps {
			want := byPolicy[o.Policies[0]]
			for p, v := range byPolicy {
				if v != want {
					t.Fatalf("%s: %s saw %s requests/s, %s saw %s", key, p, v, o.Policies[0], want)
				}
			}
			if want != "0" {
				nonzero++
			}
		}
		if nonzero == 0 {
			t.Fatal("no demand in the series")
		}
	})

	t.Run("the breach series adds up to breach app-minutes", func(t *testing.T) {
		for _, p := range o.Policies {
			x := r.Run("small-sample", p, 0)
			sum := 0.0
			for _, d := range x.Series().Domains {
				for _, v := range d.BreachedApps {
					sum += v
				}
			}
			if math.Abs(sum-x.BreachAppMinutes) > 1e-9*max(1, sum) {
				t.Errorf("%s: series sums to %v breach app-minutes, metrics say %v", p, sum, x.BreachAppMinutes)
			}
		}
	})

	t.Run("the pending series adds up to pending pod-hours, per tier too", func(t *testing.T) {
		for _, p := range o.Policies {
			x := r.Run("small-sample", p, 0)
			perDomain := map[string]float64{}
			for _, d := range x.Series().Domains {
				for _, v := range d.Pending {
					perDomain[d.Name] += v / 60
				}
			}
			cluster := 0.0
			for _, v := range x.Series().Cluster.PendingPods {
				cluster += v / 60
			}
			if math.Abs(cluster-x.PendingPodHours) > 1e-9*max(1, cluster) {
				t.Errorf("%s: the cluster series sums to %v pending pod-hours, metrics say %v", p, cluster, x.PendingPodHours)
			}
			tiers := 0.0
			for _, tier := range x.Tiers {
				want := 0.0
				for _, d := range tier.Domains {
					want += perDomain[d]
				}
				if math.Abs(tier.PendingPodHours-want) > 1e-9*max(1, want) {
					t.Errorf("%s P%d: pending_pod_hours %v, its domains' series sum to %v", p, tier.Tier, tier.PendingPodHours, want)
				}
				tiers += tier.PendingPodHours
			}
			if math.Abs(tiers-x.PendingPodHours) > 1e-9*max(1, tiers) {
				t.Errorf("%s: tiers add up to %v pending pod-hours, the run has %v", p, tiers, x.PendingPodHours)
			}
		}
	})

	t.Run("the node series adds up to cost core-hours", func(t *testing.T) {
		for _, p := range o.Policies {
			x := r.Run("small-sample", p, 0)
			c := x.Series().Cluster
			sum := 0.0
			for k := range c.Nodes {
				sum += (c.Nodes[k] + c.Provisioning[k]) * o.Config.Cluster.NodeCores / 60
			}
			if math.Abs(sum-x.CostCoreHours) > 1e-9*max(1, sum) {
				t.Errorf("%s: the node series sums to %v core-hours, cost_core_hours is %v", p, sum, x.CostCoreHours)
			}
		}
	})

	t.Run("tiers partition the scale-out episodes", func(t *testing.T) {
		for _, x := range r.Runs {
			all, cor := 0, 0
			for _, tier := range x.Tiers {
				all += tier.ScaleOutAll.Episodes
				cor += tier.ScaleOut.Episodes
			}
			if all != x.ScaleOutAll.Episodes || cor != x.ScaleOut.Episodes || cor > all {
				t.Errorf("%s/%d: tiers have %d episodes (%d correlated), the run %d (%d)", x.Policy, x.Seed, all, cor, x.ScaleOutAll.Episodes, x.ScaleOut.Episodes)
			}
		}
	})

	t.Run("report.md has the tables", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		for _, want := range []string{"## small-sample", "| policy | cost_core_hours | cost ratio |", "breach ratio", "actions ratio",
			"Per priority tier", "| policy | tier | domains | slo_compliance | breach_app_minutes | bad_request_ratio | energy_kwh | overprovision_pct |", "wall_seconds",
			"gap captured", "| policy | node_churn | node_churn_per_hour | peak_nodes | peak_pods | avg_cpu_utilisation | floor_core_hours |",
			"small-sample-nodes.png", "small-sample-pending.png"} {
			if !strings.Contains(md, want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
		for _, p := range o.Policies {
			if !strings.Contains(md, "| "+p+" | P0 |") {
				t.Errorf("report.md has no tier row for %s", p)
			}
		}
		// The cost tables (per scenario, and the whole set's) are those whose
		// header names the cost ratio; other tables also have an hpa row, with
		// other columns.
		inCost, hpaRows := false, 0
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "| policy |") {
				inCost = strings.HasPrefix(line, "| policy | cost_core_hours | cost ratio |")
				continue
			}
			cells := strings.Split(line, "|")
			if inCost && len(cells) > 3 && strings.TrimSpace(cells[1]) == "hpa" {
				hpaRows++
				if got := strings.TrimSpace(cells[3]); got != "1.00" && got != "1.000" { // per scenario, over the whole set
					t.Errorf("hpa's cost ratio against itself reads %q, want 1.00", got)
				}
			}
		}
		if slices.Contains(o.Policies, "hpa") && hpaRows == 0 {
			t.Error("the cost table has no hpa row")
		}
		if !slices.Contains(o.Policies, "hpa") && !strings.Contains(md, "n/a") {
			t.Error("without hpa the ratios should read n/a")
		}
		if slices.Contains(o.Policies, "oracle") != strings.Contains(md, "oracle gap") {
			t.Error("the oracle gap column should appear exactly when the oracle ran")
		}
		if slices.Contains(o.Policies, "hpa") != strings.Contains(md, "(trade-off.png)") {
			t.Error("report.md should link the trade-off plot exactly when hpa ran")
		}
	})

	t.Run("plots are PNG", func(t *testing.T) {
		var pngs []string
		for _, p := range paths {
			if filepath.Ext(p) == ".png" {
				pngs = append(pngs, filepath.Base(p))
			}
		}
		want := []string{"cost-vs-slo.png", "small-sample-breaches.png", "small-sample-data.png", "small-sample-fraud.png",
			"small-sample-merchant.png", "small-sample-nodes.png", "small-sample-payment.png", "small-sample-pending.png", "small-sample-platform.png",
			"trade-off.png"}
		slices.Sort(pngs)
		if !slices.Equal(pngs, want) {
			t.Fatalf("plots %v, want %v", pngs, want)
		}
		for _, name := range pngs {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 400 {
				t.Errorf("%s is %dx%d pixels", name, b.Dx(), b.Dy())
			}
		}
	})
}

func TestReportIsDeterministic(t *testing.T) {
	encode := func(workers int) []byte {
		o := smallOptions(t, workers)
		r, err := eval.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		r.WallSeconds = 0
		for i := range r.Runs {
			r.Runs[i].WallSeconds = 0
		}
		for i := range r.Aggregates {
			r.Aggregates[i].WallSeconds = eval.Stat{}
		}
		var b bytes.Buffer
		if err := r.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := encode(1), encode(3)
	if !bytes.Equal(a, b) {
		t.Fatal("report.json differs between 1 and 3 workers beyond wall_seconds")
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*eval.Options)
		want   string
	}{
		{"unknown policy is rejected", func(o *eval.Options) { o.Policies = []string{"static", "nope"} }, `unknown policy "nope"`},
		{"a policy given twice is rejected", func(o *eval.Options) { o.Policies = []string{"static", "static"} }, "given twice"},
		{"no seeds is rejected", func(o *eval.Options) { o.Seeds = 0 }, "seeds = 0"},
		{"a scenario given twice is rejected", func(o *eval.Options) { o.Scenarios = append(o.Scenarios, o.Scenarios[0]) }, "given twice"},
		{"no scenario is rejected", func(o *eval.Options) { o.Scenarios = nil }, "no scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := smallOptions(t, 1)
			tt.change(&o)
			_, err := eval.Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	o := smallOptions(t, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := eval.Run(ctx, o); err == nil {
		t.Fatal("a cancelled evaluation returned a report")
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestProvisionerStallsReported pins the provisioner's figures in the
// report: each run carries the simulator's stalls, longest stall, node
// requests within two minutes and launch failures, and the aggregate and
// report.md count the runs that stalled. The small world on Karpenter, in a
// region of almost no spare capacity, stalls under hpa.
func TestProvisionerStallsReported(t *testing.T) {
	o := smallOptions(t, 2)
	c := &o.Config.Cluster
	c.Provisioner, c.SpareCapacity, c.SpareCapacityRate = domains.ProvisionerKarpenter, 1, 0.01
	c.LaunchRequestRate, c.LaunchRequestBurst, c.LaunchInstanceRate, c.LaunchInstanceBurst = 5, 50, 2, 1000
	o.Policies = []string{"hpa"}
	r, err := eval.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	stalled := 0
	for _, x := range r.Runs {
		scn := *o.Scenarios[0].Scenario
		scn.Seed, scn.Duration = x.Seed, o.Duration
		s, err := sim.New(o.Config, &scn, o.Scenarios[0].Traces)
		if err != nil {
			t.Fatal(err)
		}
		p, err := eval.NewPolicy(x.Policy, o.Config, s)
		if err != nil {
			t.Fatal(err)
		}
		m := s.Run(p)
		got := [4]float64{float64(x.ProvisionerStalls), x.LongestStallMinutes, float64(x.MaxNodeRequests2m), float64(x.LaunchFailures)}
		want := [4]float64{float64(m.ProvisionerStalls), m.LongestStallMinutes, float64(m.MaxNodeRequests2m), float64(m.LaunchFailures)}
		if got != want {
			t.Errorf("seed %d: stalls, longest, requests in 2 min, failures %v; the simulator says %v", x.Seed, got, want)
		}
		if x.ProvisionerStalls > 0 {
			stalled++
		}
	}
	if stalled == 0 {
		t.Fatal("no run stalled: the world no longer stalls the provisioner, so this test checks nothing")
	}
	a := r.Aggregate(r.Scenarios[0].Name, "hpa")
	if a.StalledRuns != stalled {
		t.Errorf("aggregate: %d stalled runs, want %d", a.StalledRuns, stalled)
	}
	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("| hpa | %d of %d | %.1f |", stalled, o.Seeds, a.ProvisionerStalls.Mean); !strings.Contains(md.String(), want) {
		t.Errorf("report.md has no provisioner row %q", want)
	}
}
