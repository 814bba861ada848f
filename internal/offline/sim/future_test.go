package sim

import (
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// slowWorld is the test world with a flash sale and a slow dependency, so
// that the future carries both kinds of event, and callers whose calls reach
// their callee callLag late.
func slowWorld(callLag time.Duration) (*domains.Config, *domains.Scenario) {
	cfg, sc, _ := world(400, 400, false)
	cfg.Domains[0].AppSets[0].CallLag = callLag
	sc.Events = []domains.Event{
		{Kind: domains.EventFlashSale, Domain: "d", At: 10 * time.Minute, Ramp: time.Minute, Hold: 5 * time.Minute, Multiplier: 2},
		{Kind: domains.EventSlowDependency, App: "d/b", At: 30 * time.Minute, Ramp: time.Minute, Hold: 5 * time.Minute, ServiceTimeFactor: 3},
	}
	return cfg, sc
}

func TestFutureIsTheDemandStepSees(t *testing.T) {
	cases := []struct {
		name    string
		callLag time.Duration
		from    int // steps run before the Future is made
	}{
		{name: "from the start", from: 0},
		{name: "from the start, with lagged calls", callLag: 30 * time.Second, from: 0},
		{name: "made mid-run, with lagged calls", callLag: 30 * time.Second, from: 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, sc := slowWorld(tc.callLag)
			_, _, tr := world(400, 400, false)
			s := mustNew(t, cfg, sc, tr)
			for range tc.from {
				s.Step()
			}
			f := s.Future()
			for ahead := 0; ahead < 5; ahead++ { // reading ahead changes nothing
				f.Next()
			}
			f = s.Future()
			for !s.Done() {
				tick, lambda, slow := f.Next()
				s.Step()
				if tick != s.StepsDone() {
					t.Fatalf("future tick %d, simulation at %d", tick, s.StepsDone())
				}
				for i := range s.apps {
					if lambda[i] != s.apps[i].lambda || slow[i] != s.apps[i].slow {
						t.Fatalf("tick %d app %d: future (%v, %v), simulation (%v, %v)", tick, i, lambda[i], slow[i], s.apps[i].lambda, s.apps[i].slow)
					}
				}
			}
		})
	}
}

func TestExpectedFutureIsTheDemandWithoutNoise(t *testing.T) {
	cfg, sc := slowWorld(30 * time.Second)
	_, _, tr := world(400, 400, false)
	sc.Noise = 0.1
	calm := *sc
	calm.Noise = 0
	noisy, quiet := mustNew(t, cfg, sc, tr), mustNew(t, cfg, &calm, tr)
	f, g := noisy.ExpectedFuture(), noisy.Future()
	differs := false
	for !quiet.Done() {
		tick, lambda, slow := f.Next()
		_, drawn, _ := g.Next()
		quiet.Step()
		for i := range quiet.apps {
			if lambda[i] != quiet.apps[i].lambda || slow[i] != quiet.apps[i].slow {
				t.Fatalf("tick %d app %d: expected future (%v, %v), the noiseless run (%v, %v)", tick, i, lambda[i], slow[i], quiet.apps[i].lambda, quiet.apps[i].slow)
			}
			differs = differs || drawn[i] != lambda[i]
		}
	}
	if !differs {
		t.Fatal("the noisy future equals the expected one: the test world draws no noise")
	}
}

func TestFutureReadingAheadLeavesTheRunUnchanged(t *testing.T) {
	cfg, sc := slowWorld(30 * time.Second)
	_, _, tr := world(400, 400, false)
	run := func(readAhead bool) (Metrics, AppTelemetry) {
		s := mustNew(t, cfg, sc, tr)
		var f *Future
		last := 0
		for !s.Done() {
			if s.StepsDone() == 7 && readAhead { // a Future made mid-run starts where the run is
				f = s.Future()
				last = s.StepsDone()
			}
			for f != nil && last < s.StepsDone()+30 {
				last, _, _ = f.Next()
			}
			fixed(6).Decide(s.Now(), s.Telemetry(), s.Targets())
			s.Step()
		}
		return s.Metrics(), s.Telemetry().Apps[0]
	}
	a, lastA := run(false)
	b, lastB := run(true)
	if a.CostCoreHours != b.CostCoreHours || a.BreachAppMinutes != b.BreachAppMinutes || a.SLOCompliance != b.SLOCompliance || a.ScalingActions != b.ScalingActions || lastA != lastB {
		t.Fatalf("reading ahead changed the run:\n%+v %+v\n%+v %+v", a, lastA, b, lastB)
	}
}

func TestFutureDoesNotAllocate(t *testing.T) {
	cfg, sc := slowWorld(30 * time.Second)
	_, _, tr := world(400, 400, false)
	s := mustNew(t, cfg, sc, tr)
	f := s.Future()
	if allocs := testing.AllocsPerRun(100, func() { f.Next() }); allocs != 0 {
		t.Fatalf("%.1f allocations per Next, want 0", allocs)
	}
}

func TestExceedsIsTheP99sTail(t *testing.T) {
	for _, q := range []Queue{{Lambda: 80, Mu: 50, C: 2}, {Lambda: 300, Mu: 25, C: 16}, {Lambda: 1, Mu: 100, C: 1}} {
		p99 := q.P99()
		if got := q.Exceeds(p99); math.Abs(got-0.01) > 1e-9 {
			t.Errorf("%+v: P(T > p99) = %v, want 0.01", q, got)
		}
		if q.Exceeds(p99*0.99) <= 0.01 || q.Exceeds(p99*1.01) > 0.01 {
			t.Errorf("%+v: the tail does not cross 0.01 at the p99", q)
		}
	}
}
