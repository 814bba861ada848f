package soldier

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The sizing rules of Desired, by name. The app serves 100 rps per replica
// at full utilisation with 4 requests at once (4 servers per replica).
func TestDesiredSizesByStaffingWithinTheTargetAndMaxUtilisation(t *testing.T) {
	app := App{CPU: 1, Min: 1, Max: 10000, Capacity: 100, Concurrency: 4}
	in := Input{TargetUtil: 0.7, MaxUtil: 0.85, Safety: 3, SLO: 0.4}
	tests := []struct {
		name  string
		obs   AppObservation
		want  int32
		risky bool
	}{
		// 7 busy replicas, 28 servers: 28 + 3 sqrt(28) = 43.9 servers is more
		// than the target's 40, so the target utilisation sizes it: 10.
		{"a small app is sized at the target utilisation, as the HPA sizes it",
			AppObservation{RPS: 700, P99: 0.1, Ready: 10, CPUUtil: 0.7}, 10, false},
		// 100 busy replicas, 400 servers: 400 + 60 = 460 servers, 115
		// replicas (87% busy) is under the target's 143 but above MaxUtil's
		// 118: 118.
		{"a large app runs hotter, but not above the max utilisation",
			AppObservation{RPS: 10000, P99: 0.1, Ready: 143, CPUUtil: 0.7}, 118, false},
		// 1,000 busy replicas, 4,000 servers: 4,000 + 190 = 4,190 servers
		// would be 95% busy; MaxUtil caps it at 1,177.
		{"the max utilisation caps a very large app",
			AppObservation{RPS: 100000, P99: 0.1, Ready: 1200, CPUUtil: 0.83}, 1177, false},
		// Ready x CPU utilisation x capacity = 10 x 1 x 100 = 1,000 rps of work
		// against 700 arriving: the service slowed, size for the work.
		{"a slowed service is sized from its CPU, not its arrivals",
			AppObservation{RPS: 700, P99: 0.1, Ready: 10, CPUUtil: 1}, 15, false},
		{"an app at risk keeps its ready replicas but is not boosted",
			AppObservation{RPS: 700, P99: 0.5, Ready: 12, CPUUtil: 0.58}, 12, true},
		{"an app at risk with replicas on their way asks for its load only",
			AppObservation{RPS: 1400, P99: 0.9, Ready: 10, Starting: 10, Pending: 5, CPUUtil: 1}, 20, true},
		{"erroring is at risk",
			AppObservation{RPS: 700, P99: 0.1, ErrorRate: 0.05, Ready: 10, CPUUtil: 0.7}, 10, true},
		{"no load is the minimum", AppObservation{}, 1, false},
		// The callers' calls lead the app's own figures: size for them.
		{"calls on their way from the callers size a rising app",
			AppObservation{RPS: 700, CallerRPS: 1400, P99: 0.1, Ready: 10, CPUUtil: 0.7}, 20, false},
		{"fewer calls than its own arrivals do not shrink it before its own figures fall",
			AppObservation{RPS: 700, CallerRPS: 350, P99: 0.1, Ready: 10, CPUUtil: 0.7}, 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, risky := Desired(&app, &tt.obs, &in)
			if got != tt.want || risky != tt.risky {
				t.Errorf("Desired = %d (risky %v), want %d (risky %v)", got, risky, tt.want, tt.risky)
			}
		})
	}
	t.Run("bounds clamp", func(t *testing.T) {
		small := app
		small.Min, small.Max = 3, 50
		if got, _ := Desired(&small, &AppObservation{RPS: 1}, &in); got != 3 {
			t.Errorf("minimum: %d, want 3", got)
		}
		if got, _ := Desired(&small, &AppObservation{RPS: 100000}, &in); got != 50 {
			t.Errorf("maximum: %d, want 50", got)
		}
	})
	t.Run("zero MaxUtil and Safety size at the target utilisation", func(t *testing.T) {
		plain := Input{TargetUtil: 0.7, SLO: 0.4}
		if got, _ := Desired(&app, &AppObservation{RPS: 10000, Ready: 143}, &plain); got != 143 {
			t.Errorf("%d replicas, want 143 (10,000 rps / 70 rps per replica)", got)
		}
	})
}

func TestSLOStatus(t *testing.T) {
	const slo, budget = 0.2, 0.005
	apps := []AppObservation{
		{P99: 0.1},                            // healthy
		{P99: 0.17},                           // at risk: over 80% of the SLO
		{P99: 0.25},                           // breaching: over the SLO
		{P99: 0.05, ErrorRate: 0.008},         // breaching: errors over the budget, under 1%
		{P99: 0.05, ErrorRate: 0.02},          // breaching: errors over the budget and 1%
		{P99: 0.9, ErrorRate: 1, Blind: true}, // blind: stand-in figures count in neither
	}
	tests := []struct {
		name               string
		slo, budget        float64
		atRisk, breachingN int
	}{
		{"p99 against the SLO, errors against the budget", slo, budget, 4, 3},
		{"no SLO: only errors count", 0, budget, 2, 2},
		{"a wide error budget: errors over 1% are still at risk", slo, 0.5, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			atRisk, breaching, atMax := AppendSLOStatus(nil, nil, &Observation{Apps: apps}, tt.slo, tt.budget)
			if len(atMax) != 0 {
				t.Errorf("without the apps' ceilings, %d apps at their ceiling", len(atMax))
			}
			if atRisk != tt.atRisk || breaching != tt.breachingN {
				t.Errorf("at risk %d, breaching %d; want %d, %d", atRisk, breaching, tt.atRisk, tt.breachingN)
			}
		})
	}
}

// TestAppendSLOStatusListsTheAppsAtTheirCeiling: of the apps breaching,
// those with their ceiling's replicas ready, in domain order.
func TestAppendSLOStatusListsTheAppsAtTheirCeiling(t *testing.T) {
	const slo, budget = 0.2, 0.005
	apps := []App{{Max: 10}, {Max: 10}, {Max: 10}, {Max: 10}, {Max: 0}, {Max: 10}, {Max: 10}, {Max: 10}, {Max: 10}}
	obs := Observation{Apps: []AppObservation{
		{P99: 0.5, Ready: 10},                    // 0: breaching at its ceiling
		{P99: 0.5, Ready: 9, Starting: 1},        // 1: breaching, the last replica not ready yet
		{P99: 0.1, Ready: 10},                    // 2: at its ceiling, within its SLO
		{P99: 0.1, ErrorRate: 0.02, Ready: 12},   // 3: errors over the budget, above its ceiling (lowered since)
		{P99: 0.5, Ready: 40},                    // 4: no ceiling
		{P99: 0.5, Ready: 10, Blind: true},       // 5: blind: stand-in figures
		{P99: 0.21, ErrorRate: 0.001, Ready: 10}, // 6: p99 just over
		{P99: 0.5, Ready: 10, HPAMax: 30},        // 7: recommend mode: its live HPA may go to 30
		{P99: 0.5, Ready: 6, HPAMax: 6},          // 8: recommend mode: at its live HPA's 6
	}}
	_, breaching, got := AppendSLOStatus(nil, apps, &obs, slo, budget)
	if breaching != 7 {
		t.Errorf("%d apps breaching, want 7 (all but the one within its SLO and the blind one)", breaching)
	}
	var idx []int
	for _, a := range got {
		idx = append(idx, a.App)
	}
	if !slices.Equal(idx, []int{0, 3, 6, 8}) {
		t.Fatalf("apps %v, want [0 3 6 8]", idx)
	}
	if got[1] != (AtMax{App: 3, Max: 10, Ready: 12, P99: 0.1, ErrorRate: 0.02}) {
		t.Errorf("app 3: %+v", got[1])
	}
	if got[3].Max != 6 {
		t.Errorf("app 8's ceiling %d, want its live HPA's 6", got[3].Max)
	}
	if _, _, none := AppendSLOStatus(got[:0], apps, &obs, 0, 0.5); len(none) != 0 {
		t.Errorf("no SLO and a wide budget: %d apps, want 0", len(none))
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _, got = AppendSLOStatus(got[:0], apps, &obs, slo, budget) }); allocs != 0 {
		t.Errorf("%v allocations into a slice of room, want 0", allocs)
	}
}

func TestAppendLimitedListsTheAppsThatWantMoreThanTheirCeiling(t *testing.T) {
	apps := []App{{Max: 10}, {Max: 10}, {Max: 10}, {Max: 10}, {Max: 0}, {Max: 10}, {Max: 10}, {Max: 10}}
	obs := Observation{Apps: []AppObservation{
		{},            // 0: wants 10.5 replicas, above its 10
		{},            // 1: wants exactly its 10
		{},            // 2: wants 10 and a rounding error: 10, as Desired rounds
		{P99: 0.9},    // 3: wants 3, breaching: not limited by its ceiling
		{},            // 4: no ceiling
		{Blind: true}, // 5: blind: stand-in figures
		{HPAMax: 30},  // 6: recommend mode: its live HPA may go to 30
		{HPAMax: 6},   // 7: recommend mode: wants more than its live HPA's 6
	}}
	need := []float64{10.5, 10, 10 + 1e-12, 3, 400, 20, 20, 7}
	got := AppendLimited(nil, apps, &obs, need)
	want := []Limited{{App: 0, Max: 10, Wanted: 11}, {App: 7, Max: 6, Wanted: 7}}
	if !slices.Equal(got, want) {
		t.Fatalf("limited %+v, want %+v", got, want)
	}
	if short := AppendLimited(got[:0], apps, &obs, need[:1]); len(short) != 1 {
		t.Errorf("need for the first app only: %+v, want app 0 alone", short)
	}
	if allocs := testing.AllocsPerRun(100, func() { got = AppendLimited(got[:0], apps, &obs, need) }); allocs != 0 {
		t.Errorf("%v allocations into a slice of room, want 0", allocs)
	}
}

// needs works out every app's Need and Desired with staffing.need and
// bound; they must be Need's and Desired's bits, and its demand
// DemandCores's without the headroom, over loads small and large, zero,
// negative, infinite and NaN, and inputs whose MaxUtil is under, equal to or
// over TargetUtil.
func TestNeedsIsNeedAndDesired(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 13))
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	for range 200 {
		in := Input{TargetUtil: pick(0.5, 0.7, 0.78, 1), MaxUtil: pick(0, 0.6, 0.78, 0.85, 1), Safety: pick(0, 1, 3),
			Headroom: pick(0, 0, 0.1, 0.25, -0.1), SLO: 0.4}
		n := 50
		obs := &Observation{Apps: make([]AppObservation, n)}
		in.Apps, in.Obs = make([]App, n), obs
		for i := range n {
			in.Apps[i] = App{CPU: pick(0.25, 1, 2), Min: int32(rng.IntN(3)), Max: int32(pick(1, 5, 100, 10000)),
				Capacity: pick(10, 100, 333.3), Concurrency: pick(0, 0.5, 1, 2, 3, 4, 8, 1<<40)}
			rps := pick(0, math.Copysign(0, -1), -5, math.Inf(1), math.NaN(), 1e-3, 1e9, 5*rng.Float64(), 1000*rng.Float64(), 1e5*rng.Float64())
			obs.Apps[i] = AppObservation{RPS: rps, Ready: int32(rng.IntN(200)), CPUUtil: pick(0, rng.Float64(), 1.3),
				P99: pick(0.1, 0.35, 0.5), ErrorRate: pick(0, 0.02)}
		}
		in.need, in.want, in.risky = make([]float64, n), make([]int32, n), make([]bool, n)
		if rng.IntN(2) == 0 {
			in.recip = recipConcurrency(in.Apps)
		}
		got := needs(&in)
		bare := in
		bare.Headroom = 0
		if want := DemandCores(bare); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("demand %v, DemandCores %v (input %+v)", got, want, in)
		}
		for i := range n {
			a, o := &in.Apps[i], &obs.Apps[i]
			need := Need(a, o, &in)
			want, risky := Desired(a, o, &in)
			if math.Float64bits(in.need[i]) != math.Float64bits(need) || in.want[i] != want || in.risky[i] != risky {
				t.Fatalf("app %+v obs %+v: needs %v %d %t, Need %v Desired %d %t", *a, *o, in.need[i], in.want[i], in.risky[i], need, want, risky)
			}
		}
	}
}

// BenchmarkNeeds is needs over a seed-scale domain's apps, with and
// without a headroom.
func BenchmarkNeeds(b *testing.B) {
	in := benchNeedsInput()
	for _, headroom := range []float64{0, 0.1} {
		b.Run(fmt.Sprintf("headroom=%g", headroom), func(b *testing.B) {
			in.Headroom = headroom
			b.ReportAllocs()
			for b.Loop() {
				needs(&in)
			}
		})
	}
}

// benchNeedsInput is a seed-scale domain's worth of apps (seeded): loads
// log-uniform over four decades, a tenth of the apps at risk.
func benchNeedsInput() Input {
	const n = 310
	rng := rand.New(rand.NewPCG(1, 13))
	in := Input{TargetUtil: 0.78, MaxUtil: 0.85, Safety: 3, SLO: 0.4}
	obs := &Observation{Apps: make([]AppObservation, n)}
	in.Apps, in.Obs = make([]App, n), obs
	in.need, in.want, in.risky = make([]float64, n), make([]int32, n), make([]bool, n)
	for i := range n {
		capacity := 50 + 200*rng.Float64()
		in.Apps[i] = App{CPU: 0.5, Min: 2, Max: 2000, Capacity: capacity, Concurrency: float64(int(2) << rng.IntN(3))}
		rps := capacity * math.Pow(10, 4*rng.Float64()-1)
		obs.Apps[i] = AppObservation{RPS: rps, Ready: int32(rps/capacity/0.7) + 1, CPUUtil: 0.6 + 0.2*rng.Float64(), P99: 0.1}
		if rng.IntN(10) == 0 {
			obs.Apps[i].P99 = 0.35
		}
	}
	in.recip = recipConcurrency(in.Apps)
	return in
}
