package baseline

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/trace"
)

// tuneGrid is the grid the tuned HPA's constants come from.
var (
	tuneTargets = []float64{0.6, 0.625, 0.65, 0.675, 0.7, 0.725, 0.75, 0.8}
	tuneWindows = []time.Duration{60 * time.Second, 120 * time.Second, 300 * time.Second}
)

// TestTuneHPA reruns the grid search behind tunedTarget and tunedDownWindow
// and prints its table. It takes minutes, so it runs only when asked:
//
//	REGIMENT_TUNE=1 go test ./baseline -run TestTuneHPA -v -timeout 30m
func TestTuneHPA(t *testing.T) {
	if os.Getenv("REGIMENT_TUNE") == "" {
		t.Skip("set REGIMENT_TUNE=1 to rerun the tuned HPA's grid search (minutes)")
	}
	cfg, err := config.LoadFile("../examples/paymentscale.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("../examples/scenarios/diurnal.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	newSim := func() (*sim.Sim, error) { return sim.New(cfg, sc, traces) }
	start := time.Now()
	ref, trials, best, err := TuneHPA(cfg, newSim, tuneTargets, tuneWindows, runtime.GOMAXPROCS(0))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "grid on %s, %s (%.0f s wall); default HPA compliance %.5f\n\n", cfg.Cluster.Name, sc.Name, time.Since(start).Seconds(), ref.SLOCompliance)
	fmt.Fprintln(&b, "| target | scale-down window | cost_core_hours | slo_compliance | breach_app_minutes | scaling_actions | eligible |")
	fmt.Fprintln(&b, "|---:|---:|---:|---:|---:|---:|:---:|")
	for k, tr := range trials {
		m := tr.Metrics
		mark := ""
		if m.SLOCompliance >= ref.SLOCompliance {
			mark = "yes"
		}
		if k == best {
			mark = "**chosen**"
		}
		fmt.Fprintf(&b, "| %.3f | %s | %.1f | %.5f | %.1f | %d | %s |\n", tr.Target, tr.DownWindow, m.CostCoreHours, m.SLOCompliance, m.BreachAppMinutes, m.ScalingActions, mark)
	}
	t.Log("\n" + b.String())
	if best < 0 {
		t.Fatal("no trial is as compliant as the default HPA, which is in the grid")
	}
	if got := trials[best]; got.Target != tunedTarget || got.DownWindow != tunedDownWindow {
		t.Fatalf("the search picks target %.3f, window %s; tunedTarget and tunedDownWindow say %.3f, %s: update them and their comment",
			got.Target, got.DownWindow, tunedTarget, tunedDownWindow)
	}
}

func TestTuneHPAPicksTheCheapestAsCompliant(t *testing.T) {
	cfg, sc, traces := smallSample(t)
	sc.Duration = time.Hour
	newSim := func() (*sim.Sim, error) { return sim.New(cfg, sc, traces) }
	ref, trials, best, err := TuneHPA(cfg, newSim, []float64{0.5, 0.7, 0.9}, []time.Duration{60 * time.Second, 300 * time.Second}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 6 || trials[1].Target != 0.5 || trials[1].DownWindow != 300*time.Second {
		t.Fatalf("trials not target-major: %+v", trials)
	}
	if d := trials[3]; d.Target != 0.7 || d.DownWindow != 300*time.Second || d.Metrics.CostCoreHours != ref.CostCoreHours || d.Metrics.SLOCompliance != ref.SLOCompliance {
		t.Fatalf("the reference is not the default's grid point: %+v vs %+v", ref, d)
	}
	if best < 0 {
		t.Fatal("no trial picked, yet the default is in the grid")
	}
	for k, tr := range trials {
		if tr.Metrics.SLOCompliance >= ref.SLOCompliance && tr.Metrics.CostCoreHours < trials[best].Metrics.CostCoreHours {
			t.Fatalf("trial %d is as compliant and cheaper than the pick %d", k, best)
		}
	}
}
