package daemon

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/bus/wire"
	"github.com/regimentd/regiment/soldier"
)

// gathered is every sample of reg as "name{label=value,...}" -> value.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName() + "{"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			key += "}"
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestSoldierTickExportsTheAutomaticFallback pins the automatic fallback's
// metrics: the active gauge follows each tick, and each switch counts once
// under its domain and reason.
func TestSoldierTickExportsTheAutomaticFallback(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg, "soldier")
	tick := func(active bool, reason string) {
		m.SoldierTick(soldier.TickResult{AutoFallback: active, Fallback: active, Switch: soldier.FallbackEvent{Reason: reason},
			Report: wire.DomainReport{Domain: "payment"}}, nil, 0)
	}
	const (
		active   = "regiment_soldier_fallback_active{domain=payment}"
		slo      = "regiment_soldier_fallback_switches_total{domain=payment,reason=slo}"
		handBack = "regiment_soldier_fallback_switches_total{domain=payment,reason=hand-back}"
	)
	steps := []struct {
		active                bool
		reason                string
		gauge, slos, handBack float64
	}{
		{false, "", 0, 0, 0},
		{true, soldier.FallbackSLO, 1, 1, 0},
		{true, "", 1, 1, 0},
		{false, soldier.FallbackHandBack, 0, 1, 1},
		{false, "", 0, 1, 1},
	}
	for i, s := range steps {
		tick(s.active, s.reason)
		got := gathered(t, reg)
		if got[active] != s.gauge || got[slo] != s.slos || got[handBack] != s.handBack {
			t.Fatalf("after tick %d: active %g, slo switches %g, hand-backs %g; want %g, %g, %g",
				i, got[active], got[slo], got[handBack], s.gauge, s.slos, s.handBack)
		}
	}
}
