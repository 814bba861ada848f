package soldier

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// compareApps are two apps of 1 core per replica serving 100 rps each at full
// utilisation; at util 0.5, 500 rps is a demand of 10 cores.
var compareApps = []App{{Index: 0, Name: "d/a", CPU: 1, Min: 1, Max: 50, Capacity: 100}, {Index: 1, Name: "d/b", CPU: 1, Min: 1, Max: 50, Capacity: 100}}

func TestCompareRules(t *testing.T) {
	const slo, budget, util, tol = 0.2, 0.01, 0.5, 0.1
	ok := AppObservation{RPS: 500, P99: 0.1}
	slow := AppObservation{RPS: 500, P99: 0.5}
	cases := []struct {
		name             string
		apps             [2]AppObservation
		domainP99        float64
		domainErr        float64
		policy, baseline []int32
		want             Score // flags only
	}{
		{name: "a breach where the baseline gives the breaching apps more cores is caused by the policy",
			apps: [2]AppObservation{slow, ok}, domainP99: 0.5, policy: []int32{3, 10}, baseline: []int32{10, 10},
			want: Score{Breach: true, Caused: true, Short: true}},
		{name: "a breach where the policy gives as much as the baseline is not the policy's",
			apps: [2]AppObservation{slow, ok}, domainP99: 0.5, policy: []int32{10, 10}, baseline: []int32{10, 10},
			want: Score{Breach: true}},
		{name: "only the breaching apps count: more cores elsewhere do not excuse a starved app",
			apps: [2]AppObservation{slow, ok}, domainP99: 0.5, policy: []int32{5, 30}, baseline: []int32{10, 10},
			want: Score{Breach: true, Caused: true, Short: true}},
		{name: "a domain breach with no app over its SLO compares every app",
			apps: [2]AppObservation{ok, ok}, domainP99: 0.3, policy: []int32{9, 10}, baseline: []int32{10, 10},
			want: Score{Breach: true, Caused: true}},
		{name: "an error rate over the budget is a breach",
			apps: [2]AppObservation{{RPS: 500, P99: 0.1, ErrorRate: 0.05}, ok}, domainErr: 0.02, policy: []int32{4, 10}, baseline: []int32{10, 10},
			want: Score{Breach: true, Caused: true, Short: true}},
		{name: "no breach is never caused, however short the policy",
			apps: [2]AppObservation{ok, ok}, domainP99: 0.1, policy: []int32{1, 1}, baseline: []int32{10, 10},
			want: Score{Short: true}},
		{name: "a shortfall within the tolerance of demand is not short",
			apps: [2]AppObservation{ok, ok}, domainP99: 0.1, policy: []int32{9, 10}, baseline: []int32{10, 10},
			want: Score{}},
		{name: "the baseline short of demand where the policy covers it is the policy's advantage",
			apps: [2]AppObservation{ok, ok}, domainP99: 0.1, policy: []int32{10, 10}, baseline: []int32{5, 5},
			want: Score{Advantage: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obs := Observation{Apps: tc.apps[:], P99: tc.domainP99, ErrorRate: tc.domainErr}
			got := Compare(compareApps, &obs, slo, budget, util, tol, tc.policy, tc.baseline)
			flags := Score{Breach: got.Breach, Caused: got.Caused, Short: got.Short, Advantage: got.Advantage}
			if flags != tc.want {
				t.Errorf("got %+v, want flags %+v", got, tc.want)
			}
			if got.DemandCores != 20 || got.PolicyCores != float64(tc.policy[0]+tc.policy[1]) || got.BaselineCores != float64(tc.baseline[0]+tc.baseline[1]) {
				t.Errorf("cores: demand %g policy %g baseline %g", got.DemandCores, got.PolicyCores, got.BaselineCores)
			}
		})
	}
}

// run is a stretch of identical scores fed to a Fallback.
type run struct {
	n  int
	sc Score
}

var (
	clean  = Score{PolicyCores: 10, BaselineCores: 10}
	caused = Score{Breach: true, Caused: true, PolicyCores: 5, BaselineCores: 10}
	short  = Score{Short: true, PolicyCores: 5, BaselineCores: 10}
	costly = Score{PolicyCores: 12, BaselineCores: 10}
	ahead  = Score{Advantage: true, PolicyCores: 12, BaselineCores: 10}
)

func TestFallbackRules(t *testing.T) {
	cfg := FallbackConfig{Window: 20, BreachFraction: 0.2, CostMargin: 0.1, ShortTolerance: 0.1, Hold: 10}
	cases := []struct {
		name   string
		cfg    *FallbackConfig // nil: the test's default
		runs   []run
		events []string // "tick:reason"
		active bool
	}{
		{name: "slo rule trips at ceil(fraction x window) caused ticks, before the window fills",
			runs: []run{{3, clean}, {4, caused}}, events: []string{"6:slo"}, active: true},
		{name: "one caused tick fewer does not trip",
			runs: []run{{3, clean}, {3, caused}, {14, clean}}},
		{name: "caused ticks older than the window are forgotten",
			runs: []run{{2, caused}, {20, clean}, {2, caused}}},
		{name: "caused ticks within one window add up",
			runs: []run{{2, caused}, {16, clean}, {2, caused}}, events: []string{"19:slo"}, active: true},
		{name: "cost rule trips on a full window over the margin with no compliance advantage",
			runs: []run{{19, costly}, {1, costly}}, events: []string{"19:cost"}, active: true},
		{name: "cost rule needs a full window",
			runs: []run{{19, costly}}},
		{name: "cost rule spares a policy whose compliance advantage outnumbers its breaches",
			runs: []run{{1, caused}, {2, ahead}, {17, costly}}},
		{name: "cost rule trips when the advantage does not outnumber the breaches",
			runs: []run{{2, caused}, {2, ahead}, {16, costly}}, events: []string{"19:cost"}, active: true},
		{name: "cost within the margin does not trip",
			runs: []run{{40, Score{PolicyCores: 10.9, BaselineCores: 10}}}},
		{name: "the baseline holds for Hold ticks even when the shadow is clean",
			runs: []run{{4, caused}, {9, clean}}, events: []string{"3:slo"}, active: true},
		{name: "hand-back after Hold when the shadow window passes both rules",
			runs: []run{{4, caused}, {10, clean}}, events: []string{"3:slo", "13:hand-back"}},
		{name: "no hand-back while the policy stays short in shadow",
			runs: []run{{4, caused}, {30, short}}, events: []string{"3:slo"}, active: true},
		{name: "hand-back once the shadow shortfalls fall below the threshold",
			runs: []run{{4, caused}, {6, short}, {19, clean}}, events: []string{"3:slo", "26:hand-back"}},
		{name: "after a hand-back the window starts empty",
			runs: []run{{4, caused}, {10, clean}, {3, caused}}, events: []string{"3:slo", "13:hand-back"}},
		{name: "window 0 never trips",
			cfg: &FallbackConfig{}, runs: []run{{100, caused}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.cfg != nil {
				c = *tc.cfg
			}
			f := NewFallback(c)
			var events []string
			tick, active := 0, false
			for _, r := range tc.runs {
				for range r.n {
					var ev FallbackEvent
					active, ev = f.Observe(r.sc)
					if ev.Reason != "" {
						events = append(events, fmt.Sprintf("%d:%s", tick, ev.Reason))
						// A trip is explained by live breaches, a hand-back by the shadow.
						if want := map[string]string{FallbackSLO: "policy-caused breaches", FallbackCost: "policy ",
							FallbackHandBack: "policy shortfalls"}[ev.Reason]; !strings.Contains(ev.Detail, want) {
							t.Errorf("tick %d: switch %s detail %q does not name %q", tick, ev.Reason, ev.Detail, want)
						}
					}
					tick++
				}
			}
			if !slices.Equal(events, tc.events) || active != tc.active || f.Active() != active {
				t.Errorf("events %v active %v, want %v active %v", events, active, tc.events, tc.active)
			}
		})
	}
}

func TestDefaultFallbackCountsTicks(t *testing.T) {
	c := DefaultFallback(10 * time.Second)
	if c.Window != 180 || c.Hold != 180 || c.BreachFraction != 0.05 || c.CostMargin != 0.1 {
		t.Fatalf("default fallback at a 10s tick: %+v", c)
	}
}

// starve is a sabotaged policy: every app at its minimum.
type starve struct{}

func (starve) Decide(in Input, out []int32) string {
	for i, a := range in.Apps {
		out[i] = a.Min
	}
	return "starve"
}

// TestTickSwitchesToTheBaselineAndBack runs a Soldier whose policy starves
// its apps through breaches: the automatic fallback switches the domain to
// the baseline (it acts and is recorded with both decisions), holds it, and
// hands it back once a clean policy would no longer be short.
func TestTickSwitchesToTheBaselineAndBack(t *testing.T) {
	s, fc, _, rec := newTestSoldier(domains.ModeActive)
	s.cfg.Fallback = FallbackConfig{Window: 12, BreachFraction: 0.25, CostMargin: 0.1, ShortTolerance: 0.1, Hold: 6}
	s.auto = NewFallback(s.cfg.Fallback)
	pol := &switchable{Policy: starve{}}
	s.policy = pol
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Breaching telemetry: both apps over the 0.2 s SLO at 1400 rps.
	for i := range fc.obs {
		fc.obs[i].P99 = 0.5
	}
	tick := func() TickResult {
		t.Helper()
		if ok, why := s.OnDirective(directive(uint64(now.Unix()), 100, now), now); !ok {
			t.Fatalf("directive rejected: %s", why)
		}
		res, err := s.Tick(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Second)
		return res
	}
	dom := &domainFigures{fakeCluster: fc, p99: 0.5}
	s.observer = dom
	var res TickResult
	// ceil(0.25 x 12) = 3 caused ticks trip the slo rule.
	for i := range 2 {
		res = tick()
		if res.AutoFallback || res.Switch.Reason != "" {
			t.Fatalf("tick %d: switched after %d caused ticks, want 3", i, i+1)
		}
	}
	res = tick()
	if !res.AutoFallback || res.Switch.Reason != FallbackSLO || !res.Fallback {
		t.Fatalf("3rd caused tick: %+v, want a switch to the baseline on slo", res)
	}
	last := rec.got[len(rec.got)-1]
	if !last.AutoFallback || last.Switch.Reason != FallbackSLO || !slices.Equal(last.PolicyTargets, []int32{1, 1}) ||
		len(last.BaselineTargets) != 2 || last.BaselineTargets[0] <= 1 {
		t.Fatalf("record at the switch: auto %v switch %+v policy %v baseline %v", last.AutoFallback, last.Switch, last.PolicyTargets, last.BaselineTargets)
	}
	if fc.obs[0].Replicas <= 4 {
		t.Fatalf("the baseline did not scale the breaching apps up: %d replicas", fc.obs[0].Replicas)
	}
	// The domain recovers but the policy still starves it in shadow: held.
	dom.p99 = 0.05
	for i := range fc.obs {
		fc.obs[i].P99 = 0.05
	}
	for i := range 20 {
		if res = tick(); !res.AutoFallback || res.Switch.Reason != "" {
			t.Fatalf("shadow tick %d of a starving policy: %+v, want held on the baseline", i, res)
		}
	}
	// The policy turns sane: after a shadow window under the threshold, it
	// gets the domain back.
	pol.Policy = lean{}
	handedBack := -1
	for i := range 20 {
		if res = tick(); res.Switch.Reason == FallbackHandBack {
			handedBack = i
			break
		}
	}
	if handedBack < 0 || res.AutoFallback || res.Fallback {
		t.Fatalf("no hand-back after the policy turned sane: %+v", res)
	}
	if handedBack > 12 {
		t.Fatalf("hand-back after %d clean shadow ticks, want within the window of 12", handedBack+1)
	}
	// At the hand-back the record holds the lean policy's 19 replicas and the
	// baseline's 20 (1400 rps at 100 per replica and 70%).
	if last := rec.got[len(rec.got)-1]; last.Switch.Reason != FallbackHandBack ||
		!slices.Equal(last.PolicyTargets, []int32{19, 19}) || !slices.Equal(last.BaselineTargets, []int32{20, 20}) {
		t.Fatalf("record at the hand-back: switch %+v policy %v baseline %v", last.Switch, last.PolicyTargets, last.BaselineTargets)
	}
}

// lean sizes one replica under the proportional policy: short of demand,
// within the tolerance.
type lean struct{}

func (lean) Decide(in Input, out []int32) string {
	r := (&SqrtStaffing{}).Decide(in, out)
	for i := range out {
		out[i]--
	}
	return r
}

// switchable is a policy whose implementation a test changes mid-run.
type switchable struct{ Policy }

// domainFigures adds the domain's merged p99 to a fakeCluster's telemetry.
type domainFigures struct {
	*fakeCluster
	p99 float64
}

func (d *domainFigures) Observe(ctx context.Context, o *Observation) error {
	o.P99 = d.p99
	return d.fakeCluster.Observe(ctx, o)
}

func TestRecommendRecordsBothDecisions(t *testing.T) {
	s, fc, _, rec := newTestSoldier(domains.ModeRecommend)
	s.policy = starve{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, why := s.OnDirective(directive(1, 100, now), now); !ok {
		t.Fatalf("directive rejected: %s", why)
	}
	if _, err := s.Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	r := rec.got[0]
	// 1400 rps at 100 per replica and 70% wants 20 replicas: the baseline's,
	// recorded beside the policy's minimum; neither is actuated.
	if !slices.Equal(r.PolicyTargets, []int32{1, 1}) || !slices.Equal(r.BaselineTargets, []int32{20, 20}) || fc.obs[0].Replicas != 4 {
		t.Fatalf("recommend record policy %v baseline %v, live %d", r.PolicyTargets, r.BaselineTargets, fc.obs[0].Replicas)
	}
}

// TestNewConfigTakesTheDomainMode pins that a domain's own mode overrides the
// soldier block's, and that Reload applies a change of it.
func TestNewConfigTakesTheDomainMode(t *testing.T) {
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "c"},
		Soldier: domains.Soldier{Tick: 10 * time.Second, Mode: domains.ModeActive},
		Domains: []domains.Domain{
			{Name: "a", SLO: domains.SLO{LatencyP99: time.Second}},
			{Name: "b", SLO: domains.SLO{LatencyP99: time.Second}, Mode: domains.ModeShadow},
		},
	}
	for _, tc := range []struct {
		domain string
		want   domains.Mode
	}{{"a", domains.ModeActive}, {"b", domains.ModeShadow}} {
		c, err := NewConfig(cfg, tc.domain)
		if err != nil {
			t.Fatal(err)
		}
		if c.Soldier.Mode != tc.want {
			t.Errorf("domain %s: mode %q, want %q", tc.domain, c.Soldier.Mode, tc.want)
		}
		if c.Fallback != DefaultFallback(10*time.Second) {
			t.Errorf("domain %s: fallback %+v", tc.domain, c.Fallback)
		}
	}
	c, _ := NewConfig(cfg, "a")
	s := New(c, &SqrtStaffing{}, nil, nil, nil, nil)
	next := *cfg
	next.Domains = slices.Clone(cfg.Domains)
	next.Domains[0].Mode = domains.ModeOff
	if err := s.Reload(&next); err != nil {
		t.Fatal(err)
	}
	if s.cfg.Soldier.Mode != domains.ModeOff {
		t.Fatalf("after reload: mode %q, want off", s.cfg.Soldier.Mode)
	}
}

func BenchmarkCompare(b *testing.B) {
	for _, n := range []int{20, 500} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			apps := make([]App, n)
			obs := Observation{Apps: make([]AppObservation, n), P99: 0.3}
			p, q := make([]int32, n), make([]int32, n)
			for i := range apps {
				apps[i] = App{Index: i, CPU: 0.5, Min: 1, Max: 100, Capacity: 100}
				obs.Apps[i] = AppObservation{RPS: 1000 * rng.Float64(), P99: 0.4 * rng.Float64(), Ready: 5, CPUUtil: rng.Float64()}
				p[i], q[i] = int32(1+rng.IntN(20)), int32(1+rng.IntN(20))
			}
			f := NewFallback(DefaultFallback(10 * time.Second))
			b.ReportAllocs()
			for b.Loop() {
				sc := Compare(apps, &obs, 0.2, 0.001, 0.7, 0.1, p, q)
				f.Observe(sc)
			}
		})
	}
}

// compare with same (the baseline a copy of the policy's targets) scores
// what Compare scores on the two equal slices, bit for bit, with and
// without breaching apps.
func TestCompareSameIsCompare(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for range 200 {
		n := 1 + r.IntN(60)
		apps, obs := make([]App, n), &Observation{Apps: make([]AppObservation, n), P99: 0.5 * r.Float64()}
		targets := make([]int32, n)
		for i := range n {
			apps[i] = App{CPU: 0.25 + r.Float64(), Capacity: 10 + 100*r.Float64()}
			obs.Apps[i] = AppObservation{RPS: 1000 * r.Float64(), Ready: int32(r.IntN(20)), CPUUtil: r.Float64(), P99: 0.5 * r.Float64()}
			targets[i] = int32(r.IntN(30))
		}
		want := Compare(apps, obs, 0.3, 0.01, 0.7, 0.05, targets, slices.Clone(targets))
		got := compare(apps, obs, 0.3, 0.01, 0.7, 0.05, targets, targets, true)
		if got != want {
			t.Fatalf("compare same %+v, Compare %+v", got, want)
		}
	}
}
