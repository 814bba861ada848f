package baseline

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// tuneRow is a row of a tuning table in tune.go's comments, at its printed
// precision: cost_core_hours %.1f, slo_compliance %.5f, breach_app_minutes
// %.1f, scaling_actions %d.
type tuneRow struct {
	HPATuning
	cost, slo, breach string
	actions           int
}

func (r tuneRow) check(t *testing.T, world string, tot HPATotal) {
	t.Helper()
	got := tuneRow{r.HPATuning, fmt.Sprintf("%.1f", tot.CostCoreHours), fmt.Sprintf("%.5f", tot.SLOCompliance), fmt.Sprintf("%.1f", tot.BreachAppMinutes), tot.ScalingActions}
	if got != r {
		t.Errorf("%s: the row target %.3f, window %s, tolerance %.2f of tune.go's table says cost_core_hours %s, slo_compliance %s, breach_app_minutes %s, scaling_actions %d; a fresh run gives %s, %s, %s, %d",
			world, r.Target, r.DownWindow, r.Tolerance, r.cost, r.slo, r.breach, r.actions, got.cost, got.slo, got.breach, got.actions)
	}
}

// tuneWorld loads cfgPath and a fresh-simulation constructor per scenario.
func tuneWorld(t *testing.T, cfgPath string, scenarios []string) (*domains.Config, []func() (*sim.Sim, error)) {
	t.Helper()
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var newSims []func() (*sim.Sim, error)
	for _, path := range scenarios {
		sc, err := config.LoadScenarioFile(path, cfg)
		if err != nil {
			t.Fatal(err)
		}
		traces, err := trace.Load(sc)
		if err != nil {
			t.Fatal(err)
		}
		newSims = append(newSims, func() (*sim.Sim, error) { return sim.New(cfg, sc, traces) })
	}
	return cfg, newSims
}

// The tuned HPAs' choices, re-checked in every full test run at a fraction
// of the searches' cost (TestTuneHPA reruns them whole under REGIMENT_TUNE=1):
//
//   - paymentscale: the pick (0.675, 60 s) and its neighbours in target
//     (0.65, 0.70) and window (120 s), with the default HPA, on the full
//     training day. Every re-run row equals tune.go's table at its printed
//     precision, and TuneHPA still picks 0.675/60 s from this neighbourhood.
//   - seedscale: the pick (0.87, 900 s, 0.01) and the default HPA on all
//     nine training scenarios at full length. The pick's row equals the
//     table, the default's pooled compliance and breach minutes equal the
//     comment's (0.99027, 82,987), and the pick is as compliant as the
//     default and cheaper.
//
// This does not show that no other grid point would now win: a row that
// moved elsewhere in the table is only caught by TestTuneHPA. But a change
// to the simulator, the HPA or the worlds that moves any figure of the pick
// or the default fails here, naming the row.
func TestTunedHPAChoicesHold(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED under -short: the tuned HPAs' choices are not re-checked (a day and nine training scenarios, ~40 s)")
	}
	t.Run("paymentscale", func(t *testing.T) {
		cfg, newSims := tuneWorld(t, "../../../examples/paymentscale.hcl", []string{"../../../examples/scenarios/diurnal.hcl"})
		grid := HPAGrid{Targets: []float64{0.65, 0.675, 0.70}, DownWindows: []time.Duration{60 * time.Second, 120 * time.Second}}
		ref, trials, best, err := TuneHPA(cfg, newSims, grid, runtime.GOMAXPROCS(0))
		if err != nil {
			t.Fatal(err)
		}
		rows := []tuneRow{
			{HPATuning{0.650, 60 * time.Second, 0.1}, "53285.2", "0.99973", "410.5", 7502},
			{HPATuning{0.650, 120 * time.Second, 0.1}, "53387.1", "0.99974", "401.0", 6030},
			{HPATuning{0.675, 60 * time.Second, 0.1}, "52971.5", "0.99968", "492.3", 7251},
			{HPATuning{0.675, 120 * time.Second, 0.1}, "53059.4", "0.99970", "462.7", 5770},
			{HPATuning{0.700, 60 * time.Second, 0.1}, "52735.1", "0.99960", "611.5", 6383},
			{HPATuning{0.700, 120 * time.Second, 0.1}, "52809.7", "0.99962", "585.7", 5190},
		}
		for k, r := range rows {
			r.check(t, "paymentscale", trials[k].Total)
		}
		tuneRow{HPATuning{0.700, 300 * time.Second, 0.1}, "53015.6", "0.99964", "543.0", 4523}.check(t, "paymentscale default", ref.Total)
		if best < 0 || trials[best].HPATuning != paymentscaleTuning {
			t.Errorf("paymentscale: the pick's neighbourhood picks trial %d, not tune.go's %+v", best, paymentscaleTuning)
		}
	})
	t.Run("seedscale", func(t *testing.T) {
		train, err := filepath.Glob("../../../examples/scenarios/seed/train/*.hcl")
		if err != nil || len(train) != 9 {
			t.Fatalf("seed-scale training scenarios: %d files, %v; want 9", len(train), err)
		}
		cfg, newSims := tuneWorld(t, "../../../examples/seedscale.hcl", train)
		grid := HPAGrid{Targets: []float64{seedScaleTuning.Target}, DownWindows: []time.Duration{seedScaleTuning.DownWindow}, Tolerances: []float64{seedScaleTuning.Tolerance}}
		ref, trials, best, err := TuneHPA(cfg, newSims, grid, runtime.GOMAXPROCS(0))
		if err != nil {
			t.Fatal(err)
		}
		tuneRow{seedScaleTuning, "3795946.6", "0.99190", "69081.0", 673449}.check(t, "seedscale", trials[0].Total)
		if got := fmt.Sprintf("%.5f, %.0f", ref.Total.SLOCompliance, ref.Total.BreachAppMinutes); got != "0.99027, 82987" {
			t.Errorf("seedscale: tune.go says the default HPA's compliance and breach minutes are 0.99027, 82987 (69,081 against 82,987); a fresh run gives %s", got)
		}
		if best != 0 || trials[0].Total.CostCoreHours >= ref.Total.CostCoreHours {
			t.Errorf("seedscale: the pick %+v is no longer as compliant as the default and cheaper: %+v against %+v", seedScaleTuning, trials[0].Total, ref.Total)
		}
	})
}
