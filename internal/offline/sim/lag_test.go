package sim

import (
	"math"
	"testing"
	"time"
)

// TestCallLag pins call_lag: a callee's arrivals from a caller at tick t are
// call_ratio x the caller's arrivals at tick t - lag, the lag rounded to whole
// ticks, and before the start a caller's rate is its rate at the start.
func TestCallLag(t *testing.T) {
	cases := []struct {
		name string
		lag  time.Duration
		want int // ticks
	}{
		{name: "calls arrive call_lag later", lag: 30 * time.Second, want: 3},
		{name: "a lag rounds up to the nearest tick from half a tick", lag: 15 * time.Second, want: 2},
		{name: "a lag rounds down to the nearest tick below half a tick", lag: 14 * time.Second, want: 1},
		{name: "a lag under half a tick is no lag", lag: 4 * time.Second, want: 0},
		{name: "no lag: calls arrive with their requests", lag: 0, want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The same run without and with the lag: the noise draws and the
			// callers' arrivals are the same, only the callee's calls move.
			cfg, sc, tr := world(400, 400, false)
			now := mustNew(t, cfg, sc, tr)
			cfg, sc, tr = world(400, 400, false)
			cfg.Domains[0].AppSets[0].CallLag = tc.lag
			late := mustNew(t, cfg, sc, tr)
			if got := int(late.apps[0].callLag); got != tc.want {
				t.Fatalf("lag %s at 10s ticks: %d ticks, want %d", tc.lag, got, tc.want)
			}
			callers := func(s *Sim) float64 { return s.apps[0].lambda + s.apps[1].lambda }
			history := []float64{callers(now)} // the callers' arrivals at ticks 0, 1, ...
			for tick := 1; tick < 360; tick++ {
				now.Step()
				late.Step()
				history = append(history, callers(now))
				if callers(late) != history[tick] {
					t.Fatalf("tick %d: the callers' own arrivals changed with the lag", tick)
				}
				own := now.apps[2].lambda - history[tick] // the callee's external demand
				want := own + history[max(tick-tc.want, 0)]
				if got := late.apps[2].lambda; math.Abs(got-want) > 1e-9*want {
					t.Fatalf("tick %d: callee arrivals %v, want %v (own %v + callers at tick %d)", tick, got, want, own, max(tick-tc.want, 0))
				}
			}
		})
	}
}

func TestStepWithCallLagDoesNotAllocate(t *testing.T) {
	cfg, sc, tr := world(400, 400, false)
	cfg.Domains[0].AppSets[0].CallLag = 20 * time.Second
	s := mustNew(t, cfg, sc, tr)
	if allocs := testing.AllocsPerRun(100, s.Step); allocs != 0 {
		t.Fatalf("%.1f allocations per Step, want 0", allocs)
	}
}
