package baseline_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// TestReportTable prints every baseline's metrics on one config and scenario
// side by side. It runs only when asked:
//
//	REGIMENT_REPORT=../../../examples/scenarios/diurnal.hcl go test ./internal/offline/baseline -run TestReportTable -v
//
// REGIMENT_REPORT_CONFIG overrides the config (default ../../../examples/paymentscale.hcl);
// REGIMENT_REPORT_POLICIES picks policies (default all, in report order).
func TestReportTable(t *testing.T) {
	scenarios := os.Getenv("REGIMENT_REPORT")
	if scenarios == "" {
		t.Skip("set REGIMENT_REPORT to a scenario file (comma-separated for several) to print the comparison")
	}
	cfgPath := os.Getenv("REGIMENT_REPORT_CONFIG")
	if cfgPath == "" {
		cfgPath = "../../../examples/paymentscale.hcl"
	}
	names := baseline.Names
	if p := os.Getenv("REGIMENT_REPORT_POLICIES"); p != "" {
		names = strings.Split(p, ",")
	}
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, scPath := range strings.Split(scenarios, ",") {
		sc, err := config.LoadScenarioFile(scPath, cfg)
		if err != nil {
			t.Fatal(err)
		}
		traces, err := trace.Load(sc)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			m    sim.Metrics
			wall float64
		}
		rows := make([]row, len(names))
		var wg sync.WaitGroup
		sem := make(chan struct{}, 2)
		for k, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				s, err := sim.New(cfg, sc, traces)
				if err != nil {
					t.Error(err)
					return
				}
				p, err := baseline.New(name, cfg, s)
				if err != nil {
					t.Error(err)
					return
				}
				start := time.Now()
				m := s.Run(p)
				rows[k] = row{m, time.Since(start).Seconds()}
			}()
		}
		wg.Wait()
		var b strings.Builder
		fmt.Fprintf(&b, "\n%s on %s\n\n| policy | cost_core_hours | slo_compliance | breach_app_minutes | scaling_actions | peak_nodes | pending_pod_hours | wall_seconds |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", sc.Name, cfg.Cluster.Name)
		for k, name := range names {
			m := rows[k].m
			fmt.Fprintf(&b, "| %s | %.1f | %.4f | %.1f | %d | %d | %.1f | %.1f |\n", name, m.CostCoreHours, m.SLOCompliance, m.BreachAppMinutes, m.ScalingActions, m.PeakNodes, m.PendingPodHours, rows[k].wall)
		}
		fmt.Fprintf(&b, "\nper domain slo_compliance:\n")
		for k, name := range names {
			fmt.Fprintf(&b, "  %-12s", name)
			for _, d := range rows[k].m.Domains {
				fmt.Fprintf(&b, " %s %.4f", d.Name, d.SLOCompliance)
			}
			fmt.Fprintln(&b)
		}
		t.Log(b.String())
	}
}
