package baseline

import (
	"testing"

	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/simtest"
)

// runWorld runs the named baseline over a whole scenario of a shipped world.
func runWorld(tb testing.TB, cfgPath, scenarioPath, policy string) sim.Metrics {
	tb.Helper()
	cfg, s := simtest.WorldOf(tb, cfgPath, scenarioPath, 0, worldOf(policy))
	p, err := New(policy, cfg, s)
	if err != nil {
		tb.Fatal(err)
	}
	return s.Run(p)
}

// The seed-scale world reproduces the seed's cluster under the default HPA
// on its evaluation diurnal day (docs/seed-scale.md has the table): ~75,000
// pods at the peak, floors at most 20% of the core-hours, 65-70% CPU usage,
// a pool of about 2,000 nodes, and hundreds of HPAs firing within 30 s. The
// tenth world, `make run`'s, is demand-dominated too (floors at most 25%).
func TestSeedScaleWorldReproducesTheSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a day of the 1,550-app seed-scale world")
	}
	for _, tc := range []struct {
		name, cfg, scenario string
		podsLo, podsHi      int32
		floorMax            float64
		nodesLo, nodesHi    int32
		utilLo, utilHi      float64
		scaleUps30sLo       int
	}{
		{name: "seed scale", cfg: "../examples/seedscale.hcl", scenario: "../examples/scenarios/seed/eval/diurnal.hcl",
			podsLo: 67_500, podsHi: 82_500, floorMax: 0.20, nodesLo: 1_800, nodesHi: 2_600, utilLo: 0.60, utilHi: 0.72, scaleUps30sLo: 100},
		{name: "a tenth", cfg: "../examples/tenth.hcl", scenario: "../examples/scenarios/tenth-day.hcl",
			podsLo: 5_500, podsHi: 9_000, floorMax: 0.25, nodesLo: 150, nodesHi: 260, utilLo: 0.58, utilHi: 0.72, scaleUps30sLo: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := runWorld(t, tc.cfg, tc.scenario, "hpa")
			floor := m.FloorCoreHours / m.CostCoreHours
			t.Logf("peak pods %d, floor share %.3f, peak nodes %d, avg CPU %.3f, max scale-ups in 30 s %d",
				m.PeakPods, floor, m.PeakNodes, m.AvgCPUUtilisation, m.MaxScaleUps30s)
			if m.PeakPods < tc.podsLo || m.PeakPods > tc.podsHi {
				t.Errorf("peak pods %d, want [%d, %d]", m.PeakPods, tc.podsLo, tc.podsHi)
			}
			if floor > tc.floorMax {
				t.Errorf("min_replicas floors are %.1f%% of hpa's core-hours, want at most %.0f%%", 100*floor, 100*tc.floorMax)
			}
			if m.PeakNodes < tc.nodesLo || m.PeakNodes > tc.nodesHi {
				t.Errorf("peak nodes %d, want [%d, %d]", m.PeakNodes, tc.nodesLo, tc.nodesHi)
			}
			if m.AvgCPUUtilisation < tc.utilLo || m.AvgCPUUtilisation > tc.utilHi {
				t.Errorf("average CPU usage %.3f of node cores, want [%.2f, %.2f]", m.AvgCPUUtilisation, tc.utilLo, tc.utilHi)
			}
			if m.MaxScaleUps30s < tc.scaleUps30sLo {
				t.Errorf("at most %d HPAs fired within 30 s, want at least %d", m.MaxScaleUps30s, tc.scaleUps30sLo)
			}
		})
	}
}
