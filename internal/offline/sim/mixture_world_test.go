package sim_test

import (
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// TestDomainP99IsTheSameWhenEverRead pins the lazy domain p99 to its tick:
// one run reads every domain's p99 of the newest telemetry (Current) at
// every tick, another only when that telemetry reaches policies
// (Telemetry, telemetry_lag later), and they read the same bits (each
// solve warm-started from the previous tick's); each lies between its
// domain's smallest and largest app p99.
func TestDomainP99IsTheSameWhenEverRead(t *testing.T) {
	cfg, eager := simtest.World(t, "../../../examples/paymentscale.hcl", "../../../examples/scenarios/diurnal.hcl")
	_, lazy := simtest.World(t, "../../../examples/paymentscale.hcl", "../../../examples/scenarios/diurnal.hcl")
	apps := cfg.Apps()
	pe := baseline.NewStatic(apps, cfg.Soldier.TargetUtilisation, eager)
	pl := baseline.NewStatic(apps, cfg.Soldier.TargetUtilisation, lazy)
	read := map[time.Time][]float64{} // eager's readings, by telemetry time
	compared := 0
	for range 120 {
		cur := eager.Current()
		row := make([]float64, len(cur.Domains))
		for di := range row {
			row[di] = cur.DomainP99(di)
			lo, hi := math.Inf(1), 0.0
			for i, a := range cur.Apps {
				if apps[i].Domain == di && a.RPS > 0 {
					lo, hi = min(lo, a.P99), max(hi, a.P99)
				}
			}
			if hi > 0 && !(row[di] >= lo*(1-1e-12) && row[di] <= hi*(1+1e-12)) {
				t.Fatalf("%v, domain %d: p99 %v outside its apps' [%v, %v]", cur.At, di, row[di], lo, hi)
			}
		}
		read[cur.At] = row
		tel := lazy.Telemetry()
		if want, ok := read[tel.At]; ok {
			for di := range want {
				if got := tel.DomainP99(di); math.Float64bits(got) != math.Float64bits(want[di]) {
					t.Fatalf("%v, domain %d: p99 %v when the telemetry reached policies, %v when it was new", tel.At, di, got, want[di])
				}
			}
			compared++
		}
		pe.Decide(eager.Now(), eager.Telemetry(), eager.Targets())
		eager.Step()
		pl.Decide(lazy.Now(), lazy.Telemetry(), lazy.Targets())
		lazy.Step()
	}
	if compared < 100 {
		t.Fatalf("compared %d ticks, want at least 100", compared)
	}
}
