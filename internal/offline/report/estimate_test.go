package report

import (
	"math"
	"testing"
	"time"
)

// TestP99 pins the queueing estimate: M/M/1's sojourn is exponential with
// rate mu - lambda, so its p99 is ln(100) / (mu - lambda); no requests is 0;
// a load at 98% of capacity or more, or no replica, is +Inf; more replicas
// never raise it.
func TestP99(t *testing.T) {
	if got, want := P99(5, 1, 0.1, 1), math.Log(100)/(10-5); math.Abs(got-want) > 1e-9*want {
		t.Errorf("M/M/1 at lambda 5, mu 10: p99 %g, want %g", got, want)
	}
	for _, tc := range []struct {
		name               string
		rps, replicas, svc float64
		concurrency        int
		want               float64
	}{
		{"no requests", 0, 0, 0.1, 1, 0},
		{"no replica", 1, 0, 0.1, 1, math.Inf(1)},
		{"98% of capacity", 39.2, 2, 0.1, 2, math.Inf(1)},
	} {
		if got := P99(tc.rps, tc.replicas, tc.svc, tc.concurrency); got != tc.want {
			t.Errorf("%s: p99 %g, want %g", tc.name, got, tc.want)
		}
	}
	prev := math.Inf(1)
	for n := 1.0; n <= 20; n++ {
		p := P99(50, n, 0.1, 1)
		if p > prev {
			t.Fatalf("p99 rises from %g to %g at %g replicas", prev, p, n)
		}
		prev = p
	}
}

// TestEstimate compares one app over four 10 s steps: core-hours are
// replicas x cpu x tick, a step whose replicas cannot serve the load within
// the SLO is a breach minute's sixth, changes count target moves, and a
// blind step (NaN rps) counts cost but no breach.
func TestEstimate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &Domain{Name: "shop", SLO: 0.5, SLOMet: []float64{1, 0, 1, 1},
		At: []time.Time{t0, t0.Add(10 * time.Second), t0.Add(20 * time.Second), t0.Add(30 * time.Second)},
		Apps: []App{{Name: "shop/web", CPU: 0.5, ServiceTime: 0.1, Concurrency: 1,
			RPS:         []float64{50, 50, 50, math.NaN()},
			Live:        []float64{4, 4, 8, 8}, // 4 replicas at 10 rps each cannot serve 50 rps
			Recommended: []float64{8, 8, 8, 8},
		}},
	}
	res := Compare(&Recorded{Tick: 10 * time.Second, Domains: []*Domain{d}})
	r := res[0]
	tick := 10.0 / 3600
	if want := (4 + 4 + 8 + 8) * 0.5 * tick; math.Abs(r.Live.CoreHours-want) > 1e-12 {
		t.Errorf("live core-hours %g, want %g", r.Live.CoreHours, want)
	}
	if want := 4 * 8 * 0.5 * tick; math.Abs(r.Recommended.CoreHours-want) > 1e-12 {
		t.Errorf("recommended core-hours %g, want %g", r.Recommended.CoreHours, want)
	}
	if r.Live.BreachMinutes != 2.0/6 || r.Recommended.BreachMinutes != 0 || r.RecordedBreachMinutes != 1.0/6 {
		t.Errorf("breach minutes live %g, recommended %g, recorded %g; want 1/3, 0, 1/6",
			r.Live.BreachMinutes, r.Recommended.BreachMinutes, r.RecordedBreachMinutes)
	}
	if r.Live.Changes != 1 || r.Recommended.Changes != 0 || r.Live.PeakReplicas != 8 || r.Recommended.MeanReplicas != 8 {
		t.Errorf("live %+v, recommended %+v", r.Live, r.Recommended)
	}
}
