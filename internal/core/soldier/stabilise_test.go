package soldier

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestHold(t *testing.T) {
	tests := []struct {
		name         string
		n, most, cur int32
		need         float64
		want         int32
	}{
		{"a scale-up whose need is within the tolerance is held", 11, 11, 10, 11, 10},
		{"a scale-up beyond it goes at once", 12, 12, 10, 11.6, 12},
		{"a small app whose need wavers over a whole replica is held", 3, 3, 2, 2.05, 2},
		{"a small app that needs a replica more gets it", 3, 3, 2, 2.4, 3},
		{"a scale-down whose window peak is within the tolerance is held", 5, 9, 10, 5, 10},
		{"a scale-down goes to the window's peak, not below", 5, 8, 10, 5, 8},
		{"an unknown current target takes the proposal", 7, 7, 0, 7, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Hold(tt.n, tt.most, tt.cur, tt.need, 0.15); got != tt.want {
				t.Errorf("Hold(%d, %d, %d, %g, 0.15) = %d, want %d", tt.n, tt.most, tt.cur, tt.need, got, tt.want)
			}
		})
	}
	// The tolerance's edges are inside it, as the HPA's (|ratio - 1| <=
	// tolerance keeps the count): with tol 0.25 (exact in binary), a need of
	// exactly 8 x 1.25 = 10 and a window peak of exactly 8 x 0.75 = 6 hold 8.
	if got := Hold(11, 11, 8, 10, 0.25); got != 8 {
		t.Errorf("a scale-up whose need is exactly at the tolerance's edge is held; got %d, want 8", got)
	}
	if got := Hold(5, 6, 8, 5, 0.25); got != 8 {
		t.Errorf("a scale-down whose window peak is exactly at the tolerance's edge is held; got %d, want 8", got)
	}
	if got := Hold(11, 11, 10, 10.5, 0); got != 11 {
		t.Errorf("no tolerance: a scale-up goes at once; got %d", got)
	}
}

// SqrtStaffing's proposals through the Stabiliser: a noisy steady load
// writes nothing, a dip shorter than the stabilisation window does not
// shrink the app, and a lasting drop shrinks it once.
func TestStabiliserWritesLittle(t *testing.T) {
	apps := []App{{Name: "d/a", CPU: 1, Min: 1, Max: 1000, Capacity: 100, Concurrency: 1}}
	in := Input{Apps: apps, BudgetCores: math.Inf(1), TargetUtil: 0.7, MaxUtil: 0.7, Tolerance: 0.15, SLO: 0.4}
	p, stab := &SqrtStaffing{}, &Stabiliser{}
	cur := int32(100)
	out := make([]int32, 1)
	changes := 0
	tick := func(rps float64) {
		in.Obs = &Observation{Apps: []AppObservation{{RPS: rps, P99: 0.1, Ready: cur, CPUUtil: min(1, rps/(float64(cur)*100)), Replicas: cur}}}
		p.Decide(in, out)
		stab.Apply(out, in.Obs, []float64{Need(&apps[0], &in.Obs.Apps[0], &in)}, in.Tolerance)
		if out[0] != cur {
			changes++
			cur = out[0]
		}
	}
	for k := range 60 { // 7,000 rps +-5%: 95-105 replicas' worth
		tick(7000 * (1 + 0.05*math.Sin(float64(k))))
	}
	if changes != 0 || cur != 100 {
		t.Fatalf("steady noisy load: %d changes, %d replicas; want none, 100", changes, cur)
	}
	for range 10 { // a 100 s dip to half
		tick(3500)
	}
	if cur != 100 {
		t.Fatalf("a dip shorter than the window shrank the app to %d", cur)
	}
	// The window is the HPA's 5 minutes at the 10 s tick, 30 ticks: low
	// for 290 s, the window still holds a full-load tick; at 300 s it holds
	// none.
	const window = int((5 * time.Minute) / (10 * time.Second))
	for range window - 1 - 10 {
		tick(3500)
	}
	if changes != 0 || cur != 100 {
		t.Fatalf("low for %d ticks, shorter than the 5-minute window: %d changes, %d replicas; want none, 100", window-1, changes, cur)
	}
	tick(3500)
	if changes != 1 || cur != 50 {
		t.Fatalf("a lasting drop to half: %d changes, %d replicas; want one change to 50", changes, cur)
	}
	tick(7000)
	if changes != 2 || cur != 100 {
		t.Fatalf("back to full load: %d changes, %d replicas; want a second change, to 100", changes, cur)
	}
}

// The Stabiliser keeps each app's window maximum between ticks and rescans
// only when its entry leaves the window: it must hold exactly what a scan of
// the whole window every tick holds, including ties, rises, long falls and
// the ticks before the window fills.
func TestStabiliserKeptMaximumMatchesAFullScan(t *testing.T) {
	const seed, apps, ticks = 13, 40, 400
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var s Stabiliser
	hist := make([][]int32, apps)
	obs := &Observation{Apps: make([]AppObservation, apps)}
	need := make([]float64, apps)
	proposed, want := make([]int32, apps), make([]int32, apps)
	for tick := range ticks {
		for i := range apps {
			var n int32
			switch i % 4 {
			case 0: // noise over a few values: many ties
				n = 5 + rng.Int32N(3)
			case 1: // a long fall: the maximum leaves the window every tick
				n = int32(1000 - tick)
			case 2: // a long rise
				n = int32(tick)
			default: // spikes over a floor
				n = 10
				if rng.IntN(40) == 0 {
					n = 10 + rng.Int32N(100)
				}
			}
			hist[i] = append(hist[i], n)
			most := n
			for _, v := range hist[i][max(0, len(hist[i])-stabilisationTicks):] {
				most = max(most, v)
			}
			cur := 1 + rng.Int32N(1100)
			obs.Apps[i].Replicas, need[i] = cur, float64(n)-0.5
			proposed[i], want[i] = n, Hold(n, most, cur, need[i], 0.1)
		}
		s.Apply(proposed, obs, need, 0.1)
		for i := range apps {
			if proposed[i] != want[i] {
				t.Fatalf("tick %d, app %d: %d, a full scan gives %d", tick, i, proposed[i], want[i])
			}
		}
	}
}

func TestDomainGrowth(t *testing.T) {
	tests := []struct {
		name        string
		now, before float64
		want        float64
	}{
		{"a rise", 110, 100, 1.1},
		{"a fall", 90, 100, 0.9},
		{"no last tick or no load: no rise", 50, 0, 1},
		{"a negative level: no rise", 50, -1, 1},
		{"an infinite need now: no rise", math.Inf(1), 100, 1},
		{"an infinite need before: no rise", 100, math.Inf(1), 1},
		{"NaN: no rise", math.NaN(), 100, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DomainGrowth(tt.now, tt.before); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("DomainGrowth(%g, %g) = %g, want %g", tt.now, tt.before, got, tt.want)
			}
		})
	}
}

func TestRiseFloor(t *testing.T) {
	tests := []struct {
		name                  string
		need, past, growth, g float64
		want                  float64
	}{
		{"a coherent rise floors a lagging app at its last need times the growth", 10, 10, 1.1, 0.02, 11},
		{"an app already above the floor keeps its need", 12, 10, 1.1, 0.02, 12},
		{"a rise at the threshold is not coherent", 10, 10, 1.02, 0.02, 10},
		{"a rise below it is not", 10, 10, 1.01, 0.02, 10},
		{"a falling domain never floors", 8, 10, 0.9, 0.02, 8},
		{"an app that fell in a rising domain is floored", 8, 10, 1.05, 0.02, 10.5},
		{"a NaN past leaves the need", 10, math.NaN(), 1.1, 0.02, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RiseFloor(tt.need, tt.past, tt.growth, tt.g); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("RiseFloor(%g, %g, %g, %g) = %g, want %g", tt.need, tt.past, tt.growth, tt.g, got, tt.want)
			}
		})
	}
}

// An app whose need is within the tolerance of its target (113 on 100) is
// held while it rises alone, and while its domain rises by less than
// riseThreshold; when the rest of its domain rises coherently its lagging
// need is floored by the domain's growth and the scale-up goes through. An
// app with no known target is never floored; one whose proposal a budget
// cut short of its own need grows by the floor's ratio, keeping its share.
func TestStabiliserPassesACoherentRise(t *testing.T) {
	const apps = 10
	// run is two ticks: every app's need at 113, then apps 0-2 still at
	// 113 (app 1's target unknown, app 2 proposed 10 short) and the rest
	// at others. It returns apps 0-2's targets and how many were raised.
	run := func(others float64) (targets [3]int32, raised int) {
		var s Stabiliser
		obs := &Observation{Apps: make([]AppObservation, apps)}
		need, proposed := make([]float64, apps), make([]int32, apps)
		for tick, rest := range []float64{113, others} {
			for i := range apps {
				need[i], obs.Apps[i].Replicas = rest, 100
				if i < 3 {
					need[i] = 113
				}
				proposed[i] = ceilReplicas(need[i])
			}
			proposed[2] -= 10
			if tick == 1 {
				obs.Apps[1].Replicas = 0
			}
			_, raised = s.Apply(proposed, obs, need, 0.15)
		}
		return [3]int32(proposed[:3]), raised
	}
	// The rest at 120: growth (3 x 113 + 7 x 120) / 1130 = 1.0434, a floor
	// of 117.9; app 2's 103 x 117.9 / 113 = 107.5.
	if got, raised := run(120); got != [3]int32{118, 113, 108} || raised != 2 {
		t.Errorf("coherent rise: apps 0-2 at %v, %d raised; want [118 113 108] (floored, unknown, cut short), 2", got, raised)
	}
	if got, raised := run(113); got[0] != 100 || raised != 0 {
		t.Errorf("flat domain: app 0 at %d, %d raised; want held at 100, none", got[0], raised)
	}
	// The threshold is 2% in a tick, on both sides: the rest at 116.3 is a
	// growth of (339 + 7 x 116.3) / 1130 = 1.02044, a floor of 115.31 over the
	// tolerance's 115; the rest at 116.1 is 1.01920, whose floor 115.17
	// would also pass had it applied.
	if got, raised := run(116.3); got[0] != 116 || raised != 2 {
		t.Errorf("a rise just over 2%%: app 0 at %d, %d raised; want floored to 116, 2", got[0], raised)
	}
	if got, raised := run(116.1); got[0] != 100 || raised != 0 {
		t.Errorf("a rise just under 2%%: app 0 at %d, %d raised; want held at 100, none", got[0], raised)
	}
	// The rest at 115: growth 1.012, below the threshold.
	if got, raised := run(115); got[0] != 100 || raised != 0 {
		t.Errorf("a rise below the threshold: app 0 at %d, %d raised; want held at 100, none", got[0], raised)
	}
}
