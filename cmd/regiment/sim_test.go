package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

func TestSimJSONIsDeterministic(t *testing.T) {
	args := []string{"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl", "--json"}
	run := func(extra ...string) []byte {
		var out, errOut bytes.Buffer
		if code := runSim(context.Background(), append(args, extra...), &out, &errOut); code != 0 {
			t.Fatalf("regiment sim exited %d: %s", code, errOut.String())
		}
		return out.Bytes()
	}
	a, b := run(), run()
	if !bytes.Equal(a, b) {
		t.Fatalf("same config, scenario and seed gave different --json output:\n%s\n%s", a, b)
	}
	var r simReport
	if err := json.Unmarshal(a, &r); err != nil {
		t.Fatalf("--json output does not decode: %v\n%s", err, a)
	}
	if r.SimSeconds != 4*3600 || len(r.Domains) != 5 || r.CostCoreHours <= 0 {
		t.Fatalf("implausible report: %+v", r)
	}
	if c := run("--seed", "4"); bytes.Equal(a, c) {
		t.Fatal("a different seed gave the same output")
	}
}

func TestSimRejectsBadUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"missing scenario is a usage error", []string{"--config", "../../examples/small.hcl"}, 2},
		{"unknown policy is a usage error", []string{"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl", "--policy", "nope"}, 2},
		{"missing config file fails", []string{"--config", "nope.hcl", "--scenario", "testdata/small-sample.hcl"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := runSim(context.Background(), tt.args, &out, &errOut); got != tt.want {
				t.Fatalf("exit %d, want %d; stderr: %s", got, tt.want, errOut.String())
			}
		})
	}
}

func TestSimPrintsTheScoreboard(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl", "--policy", "hpa"}
	if code := runSim(context.Background(), args, &out, &errOut); code != 0 {
		t.Fatalf("regiment sim exited %d: %s", code, errOut.String())
	}
	for _, want := range []string{"node_churn ", "provisions", "removals", "node_churn_per_hour", "scale_out ", "scale_out_all ",
		"max_scale_ups_30s ", "avg_cpu_utilisation ", "peak_pods ", "floor_core_hours ", "pending_pod_hours ",
		"\nP0 ", "\ntier ", "\ndomain "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("regiment sim prints no %q:\n%s", want, out.String())
		}
	}
	// The figures are the run's: the same world and policy simulated here.
	w, err := scenario.LoadWorld("../../examples/small.hcl", "testdata/small-sample.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.NewSimOn(baseline.World("hpa", w.Config))
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPolicy(w, "hpa", s)
	if err != nil {
		t.Fatal(err)
	}
	m := s.Run(p)
	if m.CostCoreHours <= 0 || m.ScalingActions == 0 || m.PeakPods == 0 {
		t.Fatalf("the in-process run did nothing: %+v", m)
	}
	rows := map[string]string{
		"cost_core_hours":    fmt.Sprintf("%.1f  (cost %.2f)", m.CostCoreHours, m.Cost),
		"slo_compliance":     fmt.Sprintf("%.4f", m.SLOCompliance),
		"breach_app_minutes": fmt.Sprintf("%.1f  (%.1f of them", m.BreachAppMinutes, m.BreachAppMinutesAtMax),
		"bad_requests":       fmt.Sprintf("%.4g  (bad_request_ratio %.5f of %.4g requests:", m.BadRequests, m.BadRequestRatio, m.Requests),
		"energy_kwh":         fmt.Sprintf("%.4g", m.EnergyKWh),
		"scaling_actions":    fmt.Sprintf("%d", m.ScalingActions),
		"max_scale_ups_30s":  fmt.Sprintf("%d", m.MaxScaleUps30s),
		"peak_nodes":         fmt.Sprintf("%d", m.PeakNodes),
		"node_churn":         fmt.Sprintf("%d  (%d provisions, %d removals; node_churn_per_hour %.2f)", m.NodeChurn, m.NodeProvisions, m.NodeRemovals, m.NodeChurnPerHour),
		"provisioner_stalls": fmt.Sprintf("%d  (longest %.1f min; %d launch failures, %d of them insufficient capacity)",
			m.ProvisionerStalls, m.LongestStallMinutes, m.LaunchFailures, m.InsufficientCapacityFailures),
		"max_node_requests_2m": fmt.Sprintf("%d  (node wait p95 %.0f s, max %.0f s; at most %d requested and not started)",
			m.MaxNodeRequests2m, m.NodeWaitP95Seconds, m.NodeWaitMaxSeconds, m.MaxNodeQueue),
		"avg_cpu_utilisation": fmt.Sprintf("%.3f", m.AvgCPUUtilisation),
		"peak_pods":           fmt.Sprintf("%d", m.PeakPods),
		"floor_core_hours":    fmt.Sprintf("%.1f", m.FloorCoreHours),
		"pending_pod_hours":   fmt.Sprintf("%.1f", m.PendingPodHours),
		"priority_inversions": fmt.Sprintf("%d  (%d of P3 while P0 waits; %d preemptions)", m.PriorityInversions, m.P3WhileP0Waits, m.Preemptions),
		"sim_seconds":         fmt.Sprintf("%.0f", m.SimSeconds),
	}
	printed := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			printed[f[0]] = strings.TrimSpace(strings.TrimPrefix(line, f[0]))
		}
	}
	for row, want := range rows {
		// Whole fields: 14 must not pass as 140.
		if got := strings.Join(strings.Fields(printed[row]), " "); !strings.HasPrefix(got+" ", strings.Join(strings.Fields(want), " ")+" ") {
			t.Errorf("regiment sim's %s row is %q, the run's figure %q", row, got, want)
		}
	}
	if len(m.Domains) == 0 {
		t.Fatal("the in-process run has no domains")
	}
	for _, d := range m.Domains {
		want := fmt.Sprintf("P%d  %.1f  %.4f  %.1f", d.Priority, d.CoreHours, d.SLOCompliance, d.BreachAppMinutes)
		if got := strings.Join(strings.Fields(printed[d.Name]), "  "); !strings.HasPrefix(got+"  ", want+"  ") {
			t.Errorf("regiment sim's domain row %s is %q, the run's figures %q", d.Name, got, want)
		}
	}
}

// The ceiling-bound apps are listed most first, at most maxCeilingRows of
// them, and nothing at all when there are none.
func TestPrintCeilingBound(t *testing.T) {
	var none bytes.Buffer
	printCeilingBound(&none, nil, "in --json")
	if none.Len() != 0 {
		t.Errorf("no ceiling-bound app printed %q", none.String())
	}
	var apps []sim.CeilingBound
	for i := range maxCeilingRows + 2 {
		apps = append(apps, sim.CeilingBound{App: fmt.Sprintf("data/loaders-%d", i), MaxReplicas: 600, BreachAppMinutes: float64(100 - i)})
	}
	var b bytes.Buffer
	printCeilingBound(&b, apps, "in --json")
	out := b.String()
	for _, want := range []string{"12 apps breached with max_replicas ready", "data/loaders-0  600           100.0", "data/loaders-9 ", "... 2 more in --json"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "data/loaders-10") {
		t.Errorf("more than %d rows:\n%s", maxCeilingRows, out)
	}
}

// TestSeedScaleCheckpointRuns: models/commander-seed.ckpt, the opt-in
// learned Commander of the seed-scale world, loads against
// examples/seedscale.hcl and drives it (docs/training.md).
func TestSeedScaleCheckpointRuns(t *testing.T) {
	src, err := os.ReadFile("../../examples/seedscale.hcl")
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := filepath.Abs("../../models/commander-seed.ckpt")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "commander {\n", "commander {\n  policy = \""+ckpt+"\"\n", 1)
	if s == string(src) {
		t.Fatal("examples/seedscale.hcl has no commander block")
	}
	cfg := filepath.Join(t.TempDir(), "seed-learned.hcl")
	if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := runSim(context.Background(), []string{"--config", cfg, "--scenario", "../../examples/scenarios/seed/train/postmortem.hcl",
		"--policy", "regiment", "--duration", "35m", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("regiment sim exited %d: %s", code, errOut.String())
	}
	var m sim.Metrics
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	// 35 minutes, the first 15 the scenario's warm-up: 20 accounted.
	if m.SimSeconds != 1200 || m.CostCoreHours <= 0 || m.SLOCompliance < 0.9 {
		t.Errorf("20 minutes under the seed-scale checkpoint: %v s simulated, %v core-hours, compliance %v", m.SimSeconds, m.CostCoreHours, m.SLOCompliance)
	}
}
