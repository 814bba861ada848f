package sim

import (
	"math"
	"reflect"
	"testing"
)

// TestCPURequestUtil pins the two CPU readings against their definitions,
// with load = arrivals / (ready x capacity per replica):
//
//	CPUUtil        = min(load, 1)
//	CPURequestUtil = min(load, cpu_limit_ratio)
func TestCPURequestUtil(t *testing.T) {
	for _, limit := range []float64{1, 1.5, 3.5} {
		cfg, sc, tr := world(400, 400, false) // a step from 100 to 400 rps
		sc.Noise = 0
		for i := range cfg.Domains[0].AppSets {
			cfg.Domains[0].AppSets[i].CPULimitRatio = limit
		}
		s := mustNew(t, cfg, sc, tr)
		burst := 0.0
		for !s.Done() {
			for i := range s.Targets() {
				s.Targets()[i] = 1 // too few for the step: load reaches 2
			}
			s.Step()
			for i, a := range s.Current().Apps {
				if a.Ready == 0 {
					continue
				}
				load := a.RPS / (float64(a.Ready) * s.Capacity(i))
				if a.CPUUtil != math.Min(load, 1) || a.CPURequestUtil != math.Min(load, limit) {
					t.Fatalf("limit %g, app %d, load %g: CPUUtil %g, CPURequestUtil %g", limit, i, load, a.CPUUtil, a.CPURequestUtil)
				}
				burst = max(burst, a.CPURequestUtil)
			}
		}
		if want := math.Min(limit, 2); burst != want {
			t.Errorf("limit %g: the highest CPURequestUtil is %g, want %g", limit, burst, want)
		}
	}
}

// TestCPULimitLeavesServiceAlone pins the modelling choice of doc.go: the
// limit changes what the telemetry shows, not how requests are served.
func TestCPULimitLeavesServiceAlone(t *testing.T) {
	run := func(limit float64) Metrics {
		cfg, sc, tr := world(400, 400, false)
		for i := range cfg.Domains[0].AppSets {
			cfg.Domains[0].AppSets[i].CPULimitRatio = limit
		}
		return mustNew(t, cfg, sc, tr).Run(fixed(1))
	}
	guaranteed, burstable := run(1), run(3)
	if !reflect.DeepEqual(guaranteed, burstable) {
		t.Fatalf("limit 1 and limit 3 differ:\n%+v\n%+v", guaranteed, burstable)
	}
}
