package baseline

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// The grids the tuned HPAs come from, per world.
var (
	// paymentscale: on examples/scenarios/diurnal.hcl, at the default tolerance.
	paymentscaleGrid = HPAGrid{
		Targets:     []float64{0.6, 0.625, 0.65, 0.675, 0.7, 0.725, 0.75, 0.8},
		DownWindows: []time.Duration{60 * time.Second, 120 * time.Second, 300 * time.Second},
	}
	// seed scale: on the seven training scenarios, from the world's default
	// target 0.78 up, the default scale-down window and longer ones, and
	// per-HPA tolerances down to 0.01 (0 scales as 0.01 does here).
	seedScaleGrid = HPAGrid{
		Targets:     []float64{0.78, 0.81, 0.84, 0.87, 0.90},
		DownWindows: []time.Duration{600 * time.Second, 900 * time.Second, 1200 * time.Second},
		Tolerances:  []float64{0.01, 0.05, 0.1},
	}
)

// TestTuneHPA reruns the grid searches behind the tuned HPAs (tune.go) and
// prints their tables. They take minutes, so they run only when asked:
//
//	REGIMENT_TUNE=1 go test ./internal/offline/baseline -run TestTuneHPA/paymentscale -v -timeout 30m
//	REGIMENT_TUNE=1 go test ./internal/offline/baseline -run TestTuneHPA/seedscale -v -timeout 60m
func TestTuneHPA(t *testing.T) {
	if os.Getenv("REGIMENT_TUNE") == "" {
		t.Skip("set REGIMENT_TUNE=1 to rerun the tuned HPA's grid searches (minutes)")
	}
	seedTrain, err := filepath.Glob("../../../examples/scenarios/seed/train/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		cfg       string
		scenarios []string
		grid      HPAGrid
		want      HPATuning
	}{
		{"paymentscale", "../../../examples/paymentscale.hcl", []string{"../../../examples/scenarios/diurnal.hcl"}, paymentscaleGrid, paymentscaleTuning},
		{"seedscale", "../../../examples/seedscale.hcl", seedTrain, seedScaleGrid, seedScaleTuning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.scenarios) == 0 {
				t.Fatal("no training scenarios")
			}
			cfg, err := config.LoadFile(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var newSims []func() (*sim.Sim, error)
			var names []string
			for _, path := range tc.scenarios {
				if strings.Contains(path, "/eval/") || strings.Contains(path, "/heldout/") {
					t.Fatalf("%s is an evaluation scenario: never tune on it", path)
				}
				sc, err := config.LoadScenarioFile(path, cfg)
				if err != nil {
					t.Fatal(err)
				}
				traces, err := trace.Load(sc)
				if err != nil {
					t.Fatal(err)
				}
				newSims = append(newSims, func() (*sim.Sim, error) { return sim.New(cfg, sc, traces) })
				names = append(names, fmt.Sprintf("%s (%s)", sc.Name, sc.Duration))
			}
			start := time.Now()
			ref, trials, best, err := TuneHPA(cfg, newSims, tc.grid, runtime.GOMAXPROCS(0))
			if err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + tuneTable(cfg.Cluster.Name, names, time.Since(start), ref, trials, best))
			if best < 0 {
				t.Fatal("no trial is as compliant as the default HPA")
			}
			if got := trials[best].HPATuning; got != tc.want {
				t.Fatalf("the search picks %+v; tune.go says %+v: update it and its comment", got, tc.want)
			}
		})
	}
}

// tuneTable is TuneHPA's result as tune.go's comments show it, then the
// chosen and the default HPA per scenario.
func tuneTable(world string, scenarios []string, wall time.Duration, ref HPATrial, trials []HPATrial, best int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "grid on %s over %s (%.0f s wall); default HPA: target %.3f, window %s, tolerance %.2f, compliance %.5f\n\n",
		world, strings.Join(scenarios, ", "), wall.Seconds(), ref.Target, ref.DownWindow, ref.Tolerance, ref.Total.SLOCompliance)
	fmt.Fprintln(&b, "target  window  tolerance  cost_core_hours  slo_compliance  breach_app_minutes  scaling_actions")
	for k, tr := range trials {
		m := tr.Total
		mark := ""
		switch {
		case k == best:
			mark = "chosen"
		case tr.HPATuning == ref.HPATuning:
			mark = "the default HPA"
		case m.SLOCompliance < ref.Total.SLOCompliance:
			mark = "below"
		}
		fmt.Fprintf(&b, "%-7.3f %-7s %-10.2f %-16.1f %-15.5f %-19.1f %-16d %s\n",
			tr.Target, tr.DownWindow, tr.Tolerance, m.CostCoreHours, m.SLOCompliance, m.BreachAppMinutes, m.ScalingActions, mark)
	}
	if best >= 0 {
		fmt.Fprintln(&b, "\nscenario: cost_core_hours, breach_app_minutes, scaling_actions of the chosen / the default HPA")
		for sc, name := range scenarios {
			c, d := trials[best].Runs[sc], ref.Runs[sc]
			fmt.Fprintf(&b, "%s: %.1f / %.1f, %.1f / %.1f, %d / %d\n", name, c.CostCoreHours, d.CostCoreHours,
				c.BreachAppMinutes, d.BreachAppMinutes, c.ScalingActions, d.ScalingActions)
		}
	}
	return b.String()
}

func TestTuneHPAPicksTheCheapestAsCompliant(t *testing.T) {
	cfg, sc, traces := smallSample(t)
	sc.Duration = time.Hour
	sc2 := *sc
	sc2.Duration, sc2.Seed = 30*time.Minute, sc.Seed+1
	newSims := []func() (*sim.Sim, error){
		func() (*sim.Sim, error) { return sim.New(cfg, sc, traces) },
		func() (*sim.Sim, error) { return sim.New(cfg, &sc2, traces) },
	}
	grid := HPAGrid{
		Targets:     []float64{0.5, 0.7, 0.9},
		DownWindows: []time.Duration{60 * time.Second, 300 * time.Second},
		Tolerances:  []float64{0.05, 0.1},
	}
	ref, trials, best, err := TuneHPA(cfg, newSims, grid, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 12 || trials[3].HPATuning != (HPATuning{0.5, 300 * time.Second, 0.1}) {
		t.Fatalf("trials not target-major, then window, then tolerance: %+v", trials)
	}
	d := trials[7]
	if d.HPATuning != (HPATuning{0.7, 300 * time.Second, DefaultTolerance}) || d.Total != ref.Total {
		t.Fatalf("the reference is not the default's grid point: %+v vs %+v", ref.Total, d.Total)
	}
	for k, tr := range trials {
		var sum HPATotal
		for _, m := range tr.Runs {
			sum.CostCoreHours += m.CostCoreHours
			sum.BreachAppMinutes += m.BreachAppMinutes
			sum.ScalingActions += m.ScalingActions
		}
		if len(tr.Runs) != 2 || sum.CostCoreHours != tr.Total.CostCoreHours || sum.BreachAppMinutes != tr.Total.BreachAppMinutes || sum.ScalingActions != tr.Total.ScalingActions {
			t.Fatalf("trial %d's totals %+v are not the sums of its runs %+v", k, tr.Total, tr.Runs)
		}
		lo, hi := min(tr.Runs[0].SLOCompliance, tr.Runs[1].SLOCompliance), max(tr.Runs[0].SLOCompliance, tr.Runs[1].SLOCompliance)
		if c := tr.Total.SLOCompliance; c < lo-1e-12 || c > hi+1e-12 {
			t.Fatalf("trial %d's pooled compliance %v is outside its runs' [%v, %v]", k, c, lo, hi)
		}
	}
	if best < 0 {
		t.Fatal("no trial picked, yet the default is in the grid")
	}
	for k, tr := range trials {
		if tr.Total.SLOCompliance >= ref.Total.SLOCompliance && tr.Total.CostCoreHours < trials[best].Total.CostCoreHours {
			t.Fatalf("trial %d is as compliant and cheaper than the pick %d", k, best)
		}
	}

	// Without the default in the grid, the reference is run apart and the
	// trials still get their runs.
	ref2, trials2, _, err := TuneHPA(cfg, newSims, HPAGrid{Targets: []float64{0.9}, DownWindows: []time.Duration{60 * time.Second}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if ref2.HPATuning != d.HPATuning || ref2.Total != ref.Total {
		t.Fatalf("the reference run apart %+v is not the default's %+v", ref2.Total, ref.Total)
	}
	if len(trials2) != 1 || trials2[0].HPATuning != trials[9].HPATuning || trials2[0].Total != trials[9].Total {
		t.Fatalf("the lone trial %+v is not the grid's %+v", trials2[0].Total, trials[9].Total)
	}
}

// tuned-hpa runs the tuning of its world: the seed-scale one on the seed
// world and its tenth, paymentscale's anywhere else.
func TestTunedHPAPerWorld(t *testing.T) {
	if seedScaleTuning == paymentscaleTuning {
		t.Fatal("the seed-scale tuning is paymentscale's: drop it from hpaTunings")
	}
	for _, tc := range []struct {
		cfg  string
		want HPATuning
	}{
		{"../../../examples/seedscale.hcl", seedScaleTuning},
		{"../../../examples/tenth.hcl", seedScaleTuning},
		{"../../../examples/paymentscale.hcl", paymentscaleTuning},
		{"../../../examples/small.hcl", paymentscaleTuning},
	} {
		cfg, err := config.LoadFile(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := TunedHPA(cfg); got != tc.want {
			t.Errorf("%s: TunedHPA %+v, want %+v", tc.cfg, got, tc.want)
		}
		p, err := New("tuned-hpa", cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		set := p.(*HPA).set
		def := DefaultHPASettings(cfg)
		up, down := set.Behaviour.ScaleUp.Tolerance, set.Behaviour.ScaleDown.Tolerance
		if set.Target != tc.want.Target || set.Behaviour.ScaleDown.StabilizationWindow != tc.want.DownWindow ||
			up == nil || *up != tc.want.Tolerance || down == nil || *down != tc.want.Tolerance {
			t.Errorf("%s: tuned-hpa runs target %v, scale-down window %v, tolerances %v/%v; want %+v",
				tc.cfg, set.Target, set.Behaviour.ScaleDown.StabilizationWindow, up, down, tc.want)
		}
		// Everything else is the default HPA's.
		set.Target, set.Behaviour.ScaleDown.StabilizationWindow = def.Target, def.Behaviour.ScaleDown.StabilizationWindow
		set.Behaviour.ScaleUp.Tolerance, set.Behaviour.ScaleDown.Tolerance = nil, nil
		if fmt.Sprint(set) != fmt.Sprint(def) {
			t.Errorf("%s: tuned-hpa differs from hpa beyond its tuning: %+v vs %+v", tc.cfg, set, def)
		}
	}
}
