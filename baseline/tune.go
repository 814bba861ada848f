package baseline

import (
	"fmt"
	"sync"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim"
)

// HPATuning is what the tuned HPA changes in DefaultHPASettings: the target
// utilisation, the scale-down stabilisation window
// (spec.behavior.scaleDown.stabilizationWindowSeconds) and the per-HPA
// tolerance, the same both ways (spec.behavior.scaleUp.tolerance and
// scaleDown.tolerance, HPAConfigurableTolerance). Everything else stays at
// the Kubernetes defaults.
type HPATuning struct {
	Target     float64
	DownWindow time.Duration
	Tolerance  float64
}

// apply returns set with t's target, scale-down window and tolerances.
func (t HPATuning) apply(set HPASettings) HPASettings {
	set.Target = t.Target
	set.Behaviour.ScaleDown.StabilizationWindow = t.DownWindow
	up, down := t.Tolerance, t.Tolerance
	set.Behaviour.ScaleUp.Tolerance = &up
	set.Behaviour.ScaleDown.Tolerance = &down
	return set
}

// The tuned HPA of the paymentscale world, and of every world hpaTunings
// does not list: chosen by TuneHPA on the training scenario
// examples/scenarios/diurnal.hcl with examples/paymentscale.hcl (seed 1, 24 h)
// over target utilisations {0.6, 0.625, ..., 0.75, 0.8} x scale-down
// stabilisation windows {60 s, 120 s, 300 s}, at the default tolerance 0.1.
// Objective: the lowest cost_core_hours whose slo_compliance is at least the
// default HPA's (target 0.7, window 300 s: 0.99937), ties to fewer
// breach_app_minutes. A coarser grid (0.5 to 0.9 in steps of 0.1) picks the
// default itself: the default lies on that grid's cost/compliance frontier,
// and only a slightly lower target with a shorter window beats it on both.
// Reproduce with
//
//	REGIMENT_TUNE=1 go test ./baseline -run TestTuneHPA/paymentscale -v -timeout 30m
//
// which prints this table (about 260 s on 2 cores) and fails if the search no
// longer picks these constants:
//
//	target  window  cost_core_hours  slo_compliance  breach_app_minutes  scaling_actions
//	0.600   1m0s    53719.1          0.99960         612.7               8963
//	0.600   2m0s    53825.3          0.99962         588.0               6877
//	0.600   5m0s    54020.5          0.99964         544.8               5736
//	0.625   1m0s    53339.3          0.99958         643.7               7699
//	0.625   2m0s    53424.0          0.99958         636.2               6110
//	0.625   5m0s    53607.8          0.99960         615.8               5143
//	0.650   1m0s    53125.1          0.99949         783.3               7319
//	0.650   2m0s    53233.1          0.99949         781.3               5886
//	0.650   5m0s    53408.0          0.99950         770.5               4957
//	0.675   1m0s    52822.3          0.99951         756.2               7100  chosen
//	0.675   2m0s    52905.4          0.99953         714.7               5617
//	0.675   5m0s    53084.9          0.99948         797.5               4747
//	0.700   1m0s    52642.3          0.99934         1012.2              6917  below the default's compliance
//	0.700   2m0s    52726.8          0.99935         994.8               5435  below
//	0.700   5m0s    52920.7          0.99937         960.3               4604  the default HPA
//	0.725   1m0s    52347.2          0.99900         1526.8              5821  below
//	0.725   2m0s    52427.6          0.99903         1487.3              4792  below
//	0.725   5m0s    52586.5          0.99907         1422.8              4143  below
//	0.750   1m0s    52179.6          0.99871         1971.8              6029  below
//	0.750   2m0s    52263.1          0.99880         1837.8              4789  below
//	0.750   5m0s    52425.1          0.99892         1652.8              4099  below
//	0.800   1m0s    51834.1          0.99761         3650.7              5651  below
//	0.800   2m0s    51905.2          0.99793         3163.7              4465  below
//	0.800   5m0s    52060.4          0.99823         2708.5              3779  below
//
// The chosen HPA costs 0.19% less than the default with 21% fewer breach
// app-minutes on the training day.
const (
	tunedTarget     = 0.675
	tunedDownWindow = 60 * time.Second
)

// paymentscaleTuning is the paymentscale world's tuned HPA, the default one.
var paymentscaleTuning = HPATuning{Target: tunedTarget, DownWindow: tunedDownWindow, Tolerance: DefaultTolerance}

// SEEDTABLE
var seedScaleTuning = HPATuning{Target: 0.78, DownWindow: 300 * time.Second, Tolerance: DefaultTolerance}

// hpaTunings are the worlds whose tuned HPA differs from paymentscale's,
// keyed by the name of the config's cluster block (cluster "seedscale" in
// examples/seedscale.hcl, cluster "tenth" in examples/tenth.hcl, a tenth of
// it). A world not listed gets paymentscaleTuning.
var hpaTunings = map[string]HPATuning{
	"seedscale": seedScaleTuning,
	"tenth":     seedScaleTuning,
}

// TunedHPA is the tuned HPA for cfg's world: hpaTunings' entry for its
// cluster name, else paymentscale's.
func TunedHPA(cfg *domains.Config) HPATuning {
	if t, ok := hpaTunings[cfg.Cluster.Name]; ok {
		return t
	}
	return paymentscaleTuning
}

// TunedHPASettings are the default HPA settings with cfg's world's tuned
// target utilisation, scale-down stabilisation window and tolerance
// (TunedHPA): what tuned-hpa runs.
func TunedHPASettings(cfg *domains.Config) HPASettings {
	return TunedHPA(cfg).apply(DefaultHPASettings(cfg))
}

// HPAGrid is a tuning grid: every Target x DownWindow x Tolerance.
type HPAGrid struct {
	Targets     []float64
	DownWindows []time.Duration
	// Tolerances are per-HPA tolerances, set both ways; empty means
	// DefaultTolerance alone.
	Tolerances []float64
}

// HPATrial is one point of the tuning grid and its runs.
type HPATrial struct {
	HPATuning
	// Runs are the trial's metrics on each scenario, in the order given.
	Runs []sim.Metrics
	// Total is the trial's figures over all the scenarios together.
	Total HPATotal
}

// HPATotal is a trial's figures over a set of scenarios.
type HPATotal struct {
	CostCoreHours float64 // summed
	// SLOCompliance is pooled over the scenarios: 1 - breached app-ticks /
	// app-ticks with traffic, both summed over every domain of every run
	// (Sim.DomainTicks); a longer scenario weighs more.
	SLOCompliance    float64
	BreachAppMinutes float64 // summed
	ScalingActions   int     // summed
}

// TuneHPA runs the HPA with every point of grid (target-major, then window,
// then tolerance) on every scenario, each run on a fresh simulation from its
// scenario's constructor, workers runs at a time (the runs of scenarios[0]
// first: give the longest first), and picks the trial with the lowest total
// cost_core_hours whose pooled SLO compliance is at least the default HPA's
// (DefaultHPASettings) on the same scenarios, ties to fewer total breach
// app-minutes. ref is the default HPA's trial (taken from the grid when the
// grid holds the defaults: cfg's target, 300 s, tolerance 0.1); best indexes
// trials or is -1 when no trial is as compliant. The result does not depend
// on workers.
func TuneHPA(cfg *domains.Config, scenarios []func() (*sim.Sim, error), grid HPAGrid, workers int) (ref HPATrial, trials []HPATrial, best int, err error) {
	def := DefaultHPASettings(cfg)
	defTuning := HPATuning{Target: def.Target, DownWindow: def.Behaviour.ScaleDown.StabilizationWindow, Tolerance: def.Tolerance}
	tols := grid.Tolerances
	if len(tols) == 0 {
		tols = []float64{DefaultTolerance}
	}
	for _, tg := range grid.Targets {
		for _, w := range grid.DownWindows {
			for _, tol := range tols {
				trials = append(trials, HPATrial{HPATuning: HPATuning{Target: tg, DownWindow: w, Tolerance: tol}})
			}
		}
	}
	refAt := -1
	for k, tr := range trials {
		if tr.HPATuning == defTuning {
			refAt = k
		}
	}
	all := trials
	if refAt < 0 { // run the default too, after the grid
		all = append(trials[:len(trials):len(trials)], HPATrial{HPATuning: defTuning})
		refAt = len(all) - 1
	}

	// One job per trial x scenario, scenario-major.
	type tally struct{ withTraffic, breached float64 }
	ticks := make([][]tally, len(all))
	errs := make([][]error, len(all))
	for k := range all {
		all[k].Runs = make([]sim.Metrics, len(scenarios))
		ticks[k] = make([]tally, len(scenarios))
		errs[k] = make([]error, len(scenarios))
	}
	type job struct{ trial, scenario int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s, err := scenarios[j.scenario]()
				if err != nil {
					errs[j.trial][j.scenario] = err
					continue
				}
				set := all[j.trial].apply(def)
				if all[j.trial].HPATuning == defTuning {
					set = def // the default HPA itself, controller-wide tolerance
				}
				all[j.trial].Runs[j.scenario] = s.Run(NewHPA(cfg, set))
				var tl tally
				for di := range cfg.Domains {
					w, b := s.DomainTicks(di)
					tl.withTraffic += w
					tl.breached += b
				}
				ticks[j.trial][j.scenario] = tl
			}
		}()
	}
	for sc := range scenarios {
		for k := range all {
			jobs <- job{k, sc}
		}
	}
	close(jobs)
	wg.Wait()
	for k := range all {
		for sc, e := range errs[k] {
			if e != nil {
				return ref, nil, -1, fmt.Errorf("tune hpa: trial %d, scenario %d: %w", k, sc, e)
			}
		}
		var withTraffic, breached float64
		tot := &all[k].Total
		for sc, m := range all[k].Runs {
			tot.CostCoreHours += m.CostCoreHours
			tot.BreachAppMinutes += m.BreachAppMinutes
			tot.ScalingActions += m.ScalingActions
			withTraffic += ticks[k][sc].withTraffic
			breached += ticks[k][sc].breached
		}
		tot.SLOCompliance = 1
		if withTraffic > 0 {
			tot.SLOCompliance = 1 - breached/withTraffic
		}
	}
	ref, trials = all[refAt], all[:len(trials)]

	best = -1
	for k, tr := range trials {
		m := tr.Total
		if m.SLOCompliance < ref.Total.SLOCompliance {
			continue
		}
		if best < 0 || m.CostCoreHours < trials[best].Total.CostCoreHours ||
			(m.CostCoreHours == trials[best].Total.CostCoreHours && m.BreachAppMinutes < trials[best].Total.BreachAppMinutes) {
			best = k
		}
	}
	return ref, trials, best, nil
}
