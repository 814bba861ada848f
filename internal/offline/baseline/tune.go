package baseline

import (
	"fmt"
	"sync"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
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
// default HPA's (target 0.7, window 300 s: 0.99964), ties to fewer
// breach_app_minutes. In the first run a coarser grid (0.5 to 0.9 in steps of
// 0.1) picked the default itself: the default lay on that grid's
// cost/compliance frontier, and only a slightly lower target with a shorter
// window beat it on both.
// Reproduce with
//
//	REGIMENT_TUNE=1 go test ./internal/offline/baseline -run TestTuneHPA/paymentscale -v -timeout 30m
//
// which prints this table (83 s wall on the shared 2-core machine) and fails
// if the search no longer picks these constants:
//
//	target  window  tolerance  cost_core_hours  slo_compliance  breach_app_minutes  scaling_actions
//	0.600   1m0s    0.10       53802.9          0.99978         341.3               8089
//	0.600   2m0s    0.10       53926.5          0.99979         327.8               6553
//	0.600   5m0s    0.10       54168.2          0.99982         282.3               5586
//	0.625   1m0s    0.10       53486.2          0.99975         379.8               7840
//	0.625   2m0s    0.10       53576.6          0.99976         359.7               6260
//	0.625   5m0s    0.10       53777.8          0.99979         318.5               5285
//	0.650   1m0s    0.10       53285.2          0.99973         410.5               7502
//	0.650   2m0s    0.10       53387.1          0.99974         401.0               6030
//	0.650   5m0s    0.10       53582.1          0.99977         346.2               5123
//	0.675   1m0s    0.10       52971.5          0.99968         492.3               7251             chosen
//	0.675   2m0s    0.10       53059.4          0.99970         462.7               5770
//	0.675   5m0s    0.10       53256.4          0.99973         415.2               4881
//	0.700   1m0s    0.10       52735.1          0.99960         611.5               6383             below the default's compliance
//	0.700   2m0s    0.10       52809.7          0.99962         585.7               5190             below
//	0.700   5m0s    0.10       53015.6          0.99964         543.0               4523             the default HPA
//	0.725   1m0s    0.10       52470.1          0.99937         965.3               6003             below
//	0.725   2m0s    0.10       52564.3          0.99941         901.5               4943             below
//	0.725   5m0s    0.10       52728.1          0.99945         836.3               4289             below
//	0.750   1m0s    0.10       52324.1          0.99909         1385.8              6150             below
//	0.750   2m0s    0.10       52399.8          0.99921         1214.0              4920             below
//	0.750   5m0s    0.10       52565.7          0.99928         1102.0              4214             below
//	0.800   1m0s    0.10       51889.1          0.99758         3694.2              5247             below
//	0.800   2m0s    0.10       51978.8          0.99797         3104.7              4308             below
//	0.800   5m0s    0.10       52133.2          0.99826         2655.2              3767             below
//
// The chosen HPA costs 0.08% less than the default with 9% fewer breach
// app-minutes and 1.6x its scaling actions on the training day. (Rerun on
// 2026-12-03 with the HPA reading CPURequestUtil and the per-HPA tolerances,
// and on 2026-12-04 after the simulator's changes since: the same pick each
// time; the figures moved from the first run's, which had 0.19% and 21%.
// TestTunedHPAChoicesHold pins the pick's, its neighbours' and the
// default's rows in every full test run.)
const (
	tunedTarget     = 0.675
	tunedDownWindow = 60 * time.Second
)

// paymentscaleTuning is the paymentscale world's tuned HPA, the default one.
var paymentscaleTuning = HPATuning{Target: tunedTarget, DownWindow: tunedDownWindow, Tolerance: DefaultTolerance}

// seedScaleTuning is the tuned HPA of the seed-scale world
// (examples/seedscale.hcl) and its tenth (examples/tenth.hcl): chosen by
// TuneHPA on the nine seed-scale training scenarios,
// examples/scenarios/seed/train/*.hcl (a quiet, a tournament and a
// per-function day of 24 h, and six 6 h incidents, in the world of issue 31:
// Karpenter with the region's spare capacity, no PriorityClasses, Poisson
// arrivals with domain bursts; seed 1, at their full durations; never the
// evaluation scenarios of seed/eval), over target utilisations {0.78, 0.81,
// 0.84, 0.87, 0.90} x scale-down stabilisation windows {600 s, 900 s,
// 1200 s} x per-HPA tolerances {0.01, 0.05, 0.1}, one tolerance both ways
// (spec.behavior.scaleUp.tolerance and scaleDown.tolerance). A first grid
// of targets {0.72, ..., 0.84} x windows {300 s, 600 s} picked its corner
// (0.84, 600 s, 0.01), so the grid moved up and out until the pick was
// inside it. Objective: the lowest total cost_core_hours over the nine
// whose pooled slo_compliance (1 - breached app-ticks / app-ticks with
// traffic, each summed over the nine) is at least the default HPA's on the
// same nine (target 0.78, the world's soldier target_utilisation, window
// 300 s, tolerance 0.1: 0.99027), ties to fewer total breach_app_minutes.
// Reproduce with
//
//	REGIMENT_TUNE=1 go test ./internal/offline/baseline -run 'TestTuneHPA/seedscale$' -v -timeout 60m
//
// which prints this table and each scenario's figures (227 s wall on the
// shared 2-core machine, 45 trials x 9 scenarios) and fails if the search
// no longer picks these constants:
//
//	target  window  tolerance  cost_core_hours  slo_compliance  breach_app_minutes  scaling_actions
//	0.780   10m0s   0.01       4115444.3        0.99336         56651.3             977228
//	0.780   10m0s   0.05       4074289.1        0.99310         58828.8             590699
//	0.780   10m0s   0.10       4037583.2        0.99271         62160.3             339186
//	0.780   15m0s   0.01       4196376.2        0.99501         42515.7             700799
//	0.780   15m0s   0.05       4155431.6        0.99478         44543.7             431000
//	0.780   15m0s   0.10       4122718.3        0.99438         47916.7             256004
//	0.780   20m0s   0.01       4258200.1        0.99549         38471.8             586315
//	0.780   20m0s   0.05       4216994.7        0.99530         40123.8             371673
//	0.780   20m0s   0.10       4183841.6        0.99495         43066.3             228121
//	0.810   10m0s   0.01       3974805.5        0.99241         64766.0             957868
//	0.810   10m0s   0.05       3925752.6        0.99184         69555.0             510383
//	0.810   10m0s   0.10       3897784.7        0.99082         78299.3             307573
//	0.810   15m0s   0.01       4052991.2        0.99444         47447.0             688161
//	0.810   15m0s   0.05       4005346.7        0.99392         51877.7             376572
//	0.810   15m0s   0.10       3979541.2        0.99294         60206.8             234153
//	0.810   20m0s   0.01       4112409.2        0.99498         42818.0             575563
//	0.810   20m0s   0.05       4065134.2        0.99455         46508.5             327960
//	0.810   20m0s   0.10       4040349.5        0.99369         53772.3             209867
//	0.840   10m0s   0.01       3843766.8        0.99098         76950.2             953521
//	0.840   10m0s   0.05       3796396.0        0.98977         87268.7             518616           below
//	0.840   10m0s   0.10       3774828.2        0.98741         107330.7            316430           below
//	0.840   15m0s   0.01       3919417.0        0.99354         55089.8             685040
//	0.840   15m0s   0.05       3873532.4        0.99247         64256.5             382748
//	0.840   15m0s   0.10       3854464.0        0.99035         82264.2             240959
//	0.840   20m0s   0.01       3976539.8        0.99420         49486.2             572370
//	0.840   20m0s   0.05       3931346.5        0.99329         57183.8             332613
//	0.840   20m0s   0.10       3912622.4        0.99137         73602.2             215471
//	0.870   10m0s   0.01       3722627.9        0.98860         97195.8             933741           below
//	0.870   10m0s   0.05       3677957.4        0.98569         122037.5            519879           below
//	0.870   10m0s   0.10       3652574.1        0.98065         165055.0            321346           below
//	0.870   15m0s   0.01       3795946.6        0.99190         69081.0             673449           chosen
//	0.870   15m0s   0.05       3752834.8        0.98940         90358.2             385081           below
//	0.870   15m0s   0.10       3729783.7        0.98485         129171.0            244994           below
//	0.870   20m0s   0.01       3851613.6        0.99282         61239.7             562330
//	0.870   20m0s   0.05       3808816.4        0.99063         79900.0             333638
//	0.870   20m0s   0.10       3787348.3        0.98641         115871.3            218703           below
//	0.900   10m0s   0.01       3608540.2        0.98345         141139.8            925611           below
//	0.900   10m0s   0.05       3565932.4        0.97692         196804.8            525129           below
//	0.900   10m0s   0.10       3537727.5        0.96432         304291.0            294991           below
//	0.900   15m0s   0.01       3679819.7        0.98802         102191.3            668112           below
//	0.900   15m0s   0.05       3638342.1        0.98240         150064.8            389732           below
//	0.900   15m0s   0.10       3613605.4        0.97081         248921.2            227807           below
//	0.900   20m0s   0.01       3734059.9        0.98963         88436.2             557784           below
//	0.900   20m0s   0.05       3692980.8        0.98450         132207.0            337147           below
//	0.900   20m0s   0.10       3670465.2        0.97335         227304.5            203830           below
//
// Over the nine, the chosen HPA costs 3.6% less than the default with 0.83x
// its breach app-minutes (69,081 against 82,987) and 1.31x its scaling
// actions. The pooled compliance hides a trade between days: on the
// per-function day, whose bursts come and go within minutes, the 15-minute
// window keeps replicas through the next burst (0.61x the default's breach
// minutes for 1.06x its cost); on the WorldCup98 days the higher target
// breaches more (1.1x-4.0x) for 1.8-5.7% less cost. The tolerance is at its
// lowest, as in the world before: the objective does not price scaling
// actions.
var seedScaleTuning = HPATuning{Target: 0.87, DownWindow: 900 * time.Second, Tolerance: 0.01}

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
