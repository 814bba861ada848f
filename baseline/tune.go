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
// default HPA's (target 0.7, window 300 s: 0.99951), ties to fewer
// breach_app_minutes. In the first run a coarser grid (0.5 to 0.9 in steps of
// 0.1) picked the default itself: the default lay on that grid's
// cost/compliance frontier, and only a slightly lower target with a shorter
// window beat it on both.
// Reproduce with
//
//	REGIMENT_TUNE=1 go test ./baseline -run TestTuneHPA/paymentscale -v -timeout 30m
//
// which prints this table (56 s wall on the shared 2-core machine) and fails
// if the search no longer picks these constants:
//
//	target  window  tolerance  cost_core_hours  slo_compliance  breach_app_minutes  scaling_actions
//	0.600   1m0s    0.10       53656.7          0.99964         551.7               8124
//	0.600   2m0s    0.10       53775.6          0.99964         543.3               6561
//	0.600   5m0s    0.10       54012.6          0.99967         504.8               5595
//	0.625   1m0s    0.10       53357.6          0.99960         609.0               7886
//	0.625   2m0s    0.10       53440.7          0.99964         554.8               6270
//	0.625   5m0s    0.10       53640.1          0.99963         561.2               5296
//	0.650   1m0s    0.10       53155.6          0.99953         712.0               7503
//	0.650   2m0s    0.10       53262.3          0.99954         703.8               6035
//	0.650   5m0s    0.10       53444.5          0.99956         668.7               5125
//	0.675   1m0s    0.10       52852.7          0.99952         728.8               7291             chosen
//	0.675   2m0s    0.10       52943.4          0.99955         688.5               5783
//	0.675   5m0s    0.10       53129.7          0.99958         638.5               4888
//	0.700   1m0s    0.10       52626.9          0.99941         905.7               6412             below the default's compliance
//	0.700   2m0s    0.10       52688.9          0.99946         832.2               5197             below
//	0.700   5m0s    0.10       52901.2          0.99951         752.8               4530             the default HPA
//	0.725   1m0s    0.10       52368.7          0.99912         1346.2              6000             below
//	0.725   2m0s    0.10       52457.1          0.99917         1270.7              4936             below
//	0.725   5m0s    0.10       52619.6          0.99920         1224.2              4289             below
//	0.750   1m0s    0.10       52228.0          0.99885         1757.2              6179             below
//	0.750   2m0s    0.10       52299.0          0.99897         1572.5              4928             below
//	0.750   5m0s    0.10       52466.3          0.99907         1416.8              4225             below
//	0.800   1m0s    0.10       51802.0          0.99742         3939.3              5257             below
//	0.800   2m0s    0.10       51890.6          0.99776         3421.7              4316             below
//	0.800   5m0s    0.10       52049.0          0.99804         2992.2              3768             below
//
// The chosen HPA costs 0.09% less than the default with 3% fewer breach
// app-minutes and 1.6x its scaling actions on the training day. (Rerun on
// 2026-12-03 with the HPA reading CPURequestUtil and the per-HPA tolerances:
// the same pick; the figures moved from the first run's, which had 0.19%
// and 21%.)
const (
	tunedTarget     = 0.675
	tunedDownWindow = 60 * time.Second
)

// paymentscaleTuning is the paymentscale world's tuned HPA, the default one.
var paymentscaleTuning = HPATuning{Target: tunedTarget, DownWindow: tunedDownWindow, Tolerance: DefaultTolerance}

// seedScaleTuning is the tuned HPA of the seed-scale world
// (examples/seedscale.hcl) and its tenth (examples/tenth.hcl): chosen by
// TuneHPA on the seven seed-scale training scenarios as they were before
// issue 31 rebalanced the split (examples/scenarios/seed/train/*.hcl then: a
// 24 h diurnal day and six 6 h incidents on WorldCup98 days 1-40, seed 1, at
// their full durations; never the evaluation scenarios of seed/eval; the
// set now also holds tournament and per-function days, docs/seed-scale.md),
// over
// target utilisations {0.78, 0.81, 0.82, 0.83, 0.84} x scale-down
// stabilisation windows {300 s, 600 s, 900 s} x per-HPA tolerances {0.01,
// 0.05, 0.1}, one tolerance both ways (spec.behavior.scaleUp.tolerance and
// scaleDown.tolerance). Objective: the lowest total cost_core_hours over the
// seven whose pooled slo_compliance (1 - breached app-ticks / app-ticks with
// traffic, each summed over the seven) is at least the default HPA's on the
// same seven (target 0.78, the world's soldier target_utilisation, window
// 300 s, tolerance 0.1: 0.99453), ties to fewer total breach_app_minutes. Reproduce
// with
//
//	REGIMENT_TUNE=1 go test ./baseline -run 'TestTuneHPA/seedscale$' -v -timeout 60m
//
// which prints this table and each scenario's figures (594 s wall on the
// shared 2-core machine, 45 trials x 7 scenarios, about 25 CPU-seconds a
// trial) and fails if the search no longer picks these constants:
//
//	target  window  tolerance  cost_core_hours  slo_compliance  breach_app_minutes  scaling_actions
//	0.780   5m0s    0.01       3302584.4        0.99511         25332.5             1030697
//	0.780   5m0s    0.05       3270771.4        0.99489         26484.8             626677
//	0.780   5m0s    0.10       3233465.2        0.99453         28345.5             294734           the default HPA
//	0.780   10m0s   0.01       3354475.5        0.99521         24809.7             562550
//	0.780   10m0s   0.05       3328053.2        0.99509         25465.8             341407
//	0.780   10m0s   0.10       3296612.7        0.99487         26590.3             167497
//	0.780   15m0s   0.01       3406836.3        0.99531         24318.2             400267
//	0.780   15m0s   0.05       3377165.5        0.99515         25146.8             244795
//	0.780   15m0s   0.10       3348364.5        0.99492         26333.0             123270
//	0.810   5m0s    0.01       3190143.0        0.99447         28674.8             1009423          below the default's compliance
//	0.810   5m0s    0.05       3151544.4        0.99391         31552.2             527940           below
//	0.810   5m0s    0.10       3116420.3        0.99315         35508.8             252332           below
//	0.810   10m0s   0.01       3239735.8        0.99488         26534.8             550188
//	0.810   10m0s   0.05       3207380.0        0.99462         27892.7             288454
//	0.810   10m0s   0.10       3179478.1        0.99421         30021.7             145899           below
//	0.810   15m0s   0.01       3289344.8        0.99499         25977.3             390055
//	0.810   15m0s   0.05       3254507.9        0.99474         27242.0             206739
//	0.810   15m0s   0.10       3230954.1        0.99442         28903.3             108418           below
//	0.820   5m0s    0.01       3154806.7        0.99415         30319.3             1005749          below
//	0.820   5m0s    0.05       3116892.3        0.99341         34137.8             531475           below
//	0.820   5m0s    0.10       3080845.7        0.99249         38917.0             255390           below
//	0.820   10m0s   0.01       3203422.8        0.99472         27346.0             546868
//	0.820   10m0s   0.05       3172102.3        0.99442         28901.0             289071           below
//	0.820   10m0s   0.10       3145549.9        0.99388         31704.8             147658           below
//	0.820   15m0s   0.01       3255864.6        0.99487         26579.0             387897
//	0.820   15m0s   0.05       3220936.4        0.99457         28131.2             207506
//	0.820   15m0s   0.10       3196739.4        0.99418         30178.0             109090           below
//	0.830   5m0s    0.01       3120976.0        0.99370         32636.8             1004846          below
//	0.830   5m0s    0.05       3082681.3        0.99276         37526.7             536320           below
//	0.830   5m0s    0.10       3050571.6        0.99156         43755.2             261002           below
//	0.830   10m0s   0.01       3168696.7        0.99455         28263.7             546468           chosen
//	0.830   10m0s   0.05       3138022.4        0.99413         30410.8             291295           below
//	0.830   10m0s   0.10       3111061.3        0.99344         33998.2             149573           below
//	0.830   15m0s   0.01       3220216.4        0.99473         27328.5             386431
//	0.830   15m0s   0.05       3185686.0        0.99439         29098.5             208665           below
//	0.830   15m0s   0.10       3159532.4        0.99386         31855.3             110356           below
//	0.840   5m0s    0.01       3083932.3        0.99309         35812.0             1007378          below
//	0.840   5m0s    0.05       3049495.7        0.99184         42307.0             541875           below
//	0.840   5m0s    0.10       3015889.6        0.99025         50528.7             266216           below
//	0.840   10m0s   0.01       3133846.0        0.99431         29521.0             547016           below
//	0.840   10m0s   0.05       3102009.2        0.99372         32564.8             294084           below
//	0.840   10m0s   0.10       3076773.7        0.99282         37241.3             151954           below
//	0.840   15m0s   0.01       3185438.0        0.99454         28294.8             386502
//	0.840   15m0s   0.05       3149605.3        0.99410         30569.3             210327           below
//	0.840   15m0s   0.10       3125138.0        0.99340         34233.3             111722           below
//
// Over the seven, the chosen HPA costs 2.0% less than the default at the
// same compliance (breach app-minutes 0.997x) and makes 1.85x its scaling
// actions. It is cheaper on every scenario (0.975-0.984x); its breach
// minutes are 0.80x on the diurnal day and 1.01-1.04x on the six incidents.
// The window of 600 s and the target of 0.83 are inside the grid; the
// tolerance is at its lowest: a first search (targets 0.82-0.85, window
// 600 s) found tolerance 0 scaling exactly as 0.01 does. The tolerance is
// the biggest lever, and the objective does not price scaling actions: at
// the default tolerance nothing beats the default HPA, and with tolerances
// of at least 0.05 the pick is target 0.81, window 600 s, tolerance 0.05
// (0.992x the cost, 0.98x the actions). paymentscaleTuning on this world
// costs 10.7% more than the default with 0.73x the breach minutes and 3.8x
// the actions. On examples/scenarios/tenth-day.hcl (an evaluation day, not
// tuned on) the tenth world under this tuning costs 1.0% less than under
// the default HPA with 1.17x its breach minutes: the margin over the
// default is small and does not carry to every day.
var seedScaleTuning = HPATuning{Target: 0.83, DownWindow: 600 * time.Second, Tolerance: 0.01}

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
