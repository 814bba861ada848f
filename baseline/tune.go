package baseline

import (
	"fmt"
	"sync"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim"
)

// The tuned HPA's constants, chosen by TuneHPA on the training scenario
// examples/scenarios/diurnal.hcl with examples/paymentscale.hcl (seed 1, 24 h)
// over target utilisations {0.6, 0.625, ..., 0.75, 0.8} x scale-down
// stabilisation windows {60 s, 120 s, 300 s}, everything else at the
// Kubernetes defaults. Objective: the lowest cost_core_hours whose
// slo_compliance is at least the default HPA's (target 0.7, window 300 s:
// 0.99937), ties to fewer breach_app_minutes. A coarser grid (0.5 to 0.9 in
// steps of 0.1) picks the default itself: the default lies on that grid's
// cost/compliance frontier, and only a slightly lower target with a shorter
// window beats it on both. Reproduce with
//
//	REGIMENT_TUNE=1 go test ./baseline -run TestTuneHPA -v -timeout 30m
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

// TunedHPASettings are the default HPA settings with the target utilisation
// and scale-down stabilisation window TuneHPA chose.
func TunedHPASettings(cfg *domains.Config) HPASettings {
	set := DefaultHPASettings(cfg)
	set.Target = tunedTarget
	set.Behaviour.ScaleDown.StabilizationWindow = tunedDownWindow
	return set
}

// HPATrial is one point of the tuning grid and the metrics of its run.
type HPATrial struct {
	Target     float64
	DownWindow time.Duration
	Metrics    sim.Metrics
}

// TuneHPA runs the HPA with every target utilisation x scale-down
// stabilisation window, each on a fresh simulation from newSim, workers at a
// time, and picks the cheapest trial (cost_core_hours) whose SLO compliance is
// at least the default HPA's, ties to fewer breach app-minutes. ref is the
// default HPA's run (taken from the grid when the grid holds the defaults);
// best indexes trials, target-major, or is -1 when no trial is as compliant.
// The result does not depend on workers.
func TuneHPA(cfg *domains.Config, newSim func() (*sim.Sim, error), targets []float64, windows []time.Duration, workers int) (ref sim.Metrics, trials []HPATrial, best int, err error) {
	def := DefaultHPASettings(cfg)
	for _, tg := range targets {
		for _, w := range windows {
			trials = append(trials, HPATrial{Target: tg, DownWindow: w})
		}
	}
	refAt := -1
	for k, tr := range trials {
		if tr.Target == def.Target && tr.DownWindow == def.Behaviour.ScaleDown.StabilizationWindow {
			refAt = k
		}
	}
	run := func(set HPASettings) (sim.Metrics, error) {
		s, err := newSim()
		if err != nil {
			return sim.Metrics{}, err
		}
		return s.Run(NewHPA(cfg, set)), nil
	}

	var wg sync.WaitGroup
	errs := make([]error, len(trials))
	sem := make(chan struct{}, max(workers, 1))
	for k := range trials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			set := def
			set.Target = trials[k].Target
			set.Behaviour.ScaleDown.StabilizationWindow = trials[k].DownWindow
			trials[k].Metrics, errs[k] = run(set)
		}()
	}
	wg.Wait()
	for k, e := range errs {
		if e != nil {
			return ref, nil, -1, fmt.Errorf("tune hpa: trial %d: %w", k, e)
		}
	}
	if refAt >= 0 {
		ref = trials[refAt].Metrics
	} else if ref, err = run(def); err != nil {
		return ref, nil, -1, fmt.Errorf("tune hpa: default: %w", err)
	}

	best = -1
	for k, tr := range trials {
		m := tr.Metrics
		if m.SLOCompliance < ref.SLOCompliance {
			continue
		}
		if best < 0 || m.CostCoreHours < trials[best].Metrics.CostCoreHours ||
			(m.CostCoreHours == trials[best].Metrics.CostCoreHours && m.BreachAppMinutes < trials[best].Metrics.BreachAppMinutes) {
			best = k
		}
	}
	return ref, trials, best, nil
}
