package soldier

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// fakeCluster is a hand-written Observer and Actuator over fixed telemetry.
type fakeCluster struct {
	obs     []AppObservation
	applied [][]Change
}

func (f *fakeCluster) Observe(_ context.Context, o *Observation) error {
	copy(o.Apps, f.obs)
	return nil
}

func (f *fakeCluster) Apply(_ context.Context, ch []Change) error {
	f.applied = append(f.applied, append([]Change(nil), ch...))
	for _, c := range ch {
		f.obs[c.App].Replicas = c.Replicas
	}
	return nil
}

type reports struct{ got []wire.DomainReport }

func (r *reports) PublishReport(_ context.Context, rep wire.DomainReport) error {
	r.got = append(r.got, rep)
	return nil
}

type records struct{ got []Record }

func (r *records) Record(rec Record) { r.got = append(r.got, rec) }

func newTestSoldier(mode domains.Mode) (*Soldier, *fakeCluster, *reports, *records) {
	cfg := Config{
		Cluster: "c", Domain: "d", SLO: 0.2, ErrorBudget: 0.001, Policy: "proportional",
		Apps: []App{{Index: 0, Name: "d/a", CPU: 1, Min: 1, Max: 50, Capacity: 100}, {Index: 1, Name: "d/b", CPU: 1, Min: 1, Max: 50, Capacity: 100}},
		Soldier: domains.Soldier{Tick: 10 * time.Second, OverageCap: 0.1, ScaleDownCooldown: 5 * time.Minute,
			Mode: mode, TargetUtilisation: 0.7, ErrorRateVeto: 0.01},
	}
	fc := &fakeCluster{obs: []AppObservation{{RPS: 1400, P99: 0.05, Ready: 4, Replicas: 4}, {RPS: 1400, P99: 0.05, Ready: 4, Replicas: 4}}}
	rep, rec := &reports{}, &records{}
	return New(cfg, &SqrtStaffing{}, fc, fc, rep, rec), fc, rep, rec
}

func directive(seq uint64, cores float64, at time.Time) wire.Directive {
	return wire.Directive{Version: wire.Version, Cluster: "c", Domain: "d", Term: 1, Seq: seq, IssuedAt: at,
		TTL: wire.Duration(3 * time.Minute), Share: 0.1, Cores: cores, Policy: "test"}
}

func TestTickActsWithinTheBudget(t *testing.T) {
	s, fc, rep, rec := newTestSoldier(domains.ModeActive)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if ok, why := s.OnDirective(directive(1, 30, now), now); !ok {
		t.Fatalf("directive rejected: %s", why)
	}
	res, err := s.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	// 1400 rps at 100/replica and 70% wants 20 replicas each: 40 cores, budget 30 x 1.1.
	got := fc.obs[0].Replicas + fc.obs[1].Replicas
	if res.Fallback || got > 33 || got < 28 {
		t.Fatalf("replicas %d (fallback %v), want about the 30-core budget", got, res.Fallback)
	}
	if len(rep.got) != 1 || rep.got[0].BudgetCores != 30 || rep.got[0].DemandCores != 40 || rep.got[0].DirectiveSeq != 1 {
		t.Fatalf("report %+v", rep.got)
	}
	if len(rec.got) != 1 || len(rec.got[0].Changes) != 2 || rec.got[0].Reward.Total == 0 {
		t.Fatalf("record %+v", rec.got)
	}
}

func TestStaleDirectiveFallsBackAndReplayIsRejected(t *testing.T) {
	s, fc, _, _ := newTestSoldier(domains.ModeActive)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.OnDirective(directive(2, 10, now), now)
	if ok, why := s.OnDirective(directive(2, 99, now), now); ok || why != wire.RejectReplayed {
		t.Fatalf("replayed directive: ok %v reason %q", ok, why)
	}
	if ok, why := s.OnDirective(directive(1, 99, now), now); ok || why != wire.RejectReplayed {
		t.Fatalf("older directive: ok %v reason %q", ok, why)
	}
	if d, _ := s.Directive(); d.Cores != 10 {
		t.Fatalf("last good directive lost: cores %v", d.Cores)
	}
	// Past the ttl the budget no longer binds: the fallback sizes for demand.
	res, err := s.Tick(context.Background(), now.Add(4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Fallback || fc.obs[0].Replicas != 20 {
		t.Fatalf("stale directive: fallback %v, replicas %d; want fallback sizing 20", res.Fallback, fc.obs[0].Replicas)
	}
}

// TestRecommendModeWritesNothing pins recommend mode and its alias shadow:
// over ticks the Actuator is never called, the report goes out with the mode,
// and each tick's record and result carry the policy's recommendation (within
// the budget, advancing from the target it would have in force) beside the
// baseline's sizing and the live replicas.
func TestRecommendModeWritesNothing(t *testing.T) {
	for _, mode := range []domains.Mode{domains.ModeRecommend, domains.ModeShadow} {
		t.Run(string(mode), func(t *testing.T) {
			s, fc, rep, rec := newTestSoldier(mode)
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			s.OnDirective(directive(1, 30, now), now) // 30 cores: less than the 40 the demand needs
			for k := range 5 {
				res, err := s.Tick(context.Background(), now.Add(time.Duration(k)*10*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				r := res.Recommendation
				if r == nil || res.Writes != 0 {
					t.Fatalf("tick %d: recommendation %v, %d writes", k, r, res.Writes)
				}
				if r.Baseline[0] != 20 || r.Live[0].Replicas != 4 || r.Recommended[0] <= 4 || r.Recommended[0]+r.Recommended[1] > 33 {
					t.Fatalf("tick %d: recommended %v baseline %v live %d; want the baseline's 20, live 4, the policy within 33 cores",
						k, r.Recommended, r.Baseline, r.Live[0].Replicas)
				}
			}
			if len(fc.applied) != 0 {
				t.Fatalf("%s mode applied %v", mode, fc.applied)
			}
			last := rec.got[len(rec.got)-1]
			if rep.got[0].Mode != string(mode) || last.Mode != string(mode) || len(last.Changes) != 0 ||
				last.Apps[0].Replicas != 4 || last.PolicyTargets[0] <= 4 || last.BaselineTargets[0] != 20 {
				t.Fatalf("report mode %q; record mode %q, changes %v, live %d, policy %v, baseline %v",
					rep.got[0].Mode, last.Mode, last.Changes, last.Apps[0].Replicas, last.PolicyTargets, last.BaselineTargets)
			}
		})
	}
}

// TestActiveAfterRecommendWritesWhatTheClusterLacks: a domain switched from
// recommend to active writes its targets where the cluster differs, even
// those its recommendations already held (the executor forgets them).
func TestActiveAfterRecommendWritesWhatTheClusterLacks(t *testing.T) {
	s, fc, _, _ := newTestSoldier(domains.ModeRecommend)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.OnDirective(directive(1, 100, now), now)
	for k := range 3 {
		if _, err := s.Tick(context.Background(), now.Add(time.Duration(k)*10*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	s.cfg.Soldier.Mode = domains.ModeActive // as Reload sets it
	res, err := s.Tick(context.Background(), now.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if res.Writes != 2 || fc.obs[0].Replicas != 20 || fc.obs[1].Replicas != 20 {
		t.Fatalf("first active tick: %d writes, replicas %d and %d; want both apps written to 20", res.Writes, fc.obs[0].Replicas, fc.obs[1].Replicas)
	}
}

func TestOffModeWritesNothing(t *testing.T) {
	s, fc, rep, _ := newTestSoldier(domains.ModeOff)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	if len(fc.applied) != 0 || len(rep.got) != 1 {
		t.Fatalf("mode off: %d writes, %d reports; want none and one", len(fc.applied), len(rep.got))
	}
}

func TestLadderRevertsToTheBaselineAndFreezeHolds(t *testing.T) {
	s, fc, _, _ := newTestSoldier(domains.ModeActive)
	s.cfg.Ladder = DefaultLadder(0)
	s.ladder = NewLadder(s.cfg.Ladder)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.OnDirective(directive(1, 10, now), now) // a starving budget: 10 cores for 40 wanted
	fc.obs[0].P99, fc.obs[1].P99 = 0.1, 0.1
	if res, _ := s.Tick(context.Background(), now); res.Rung != RungNone || fc.obs[0].Replicas+fc.obs[1].Replicas > 11 {
		t.Fatalf("healthy: rung %s, replicas %d+%d", res.Rung, fc.obs[0].Replicas, fc.obs[1].Replicas)
	}
	// The domain p99 runs at 2.5x the 200 ms SLO.
	var res TickResult
	for k := 1; k <= 3; k++ {
		now = now.Add(10 * time.Second)
		s.obs.P99 = 0
		s.observer = observeP99{fc, 0.5}
		res, _ = s.Tick(context.Background(), now)
	}
	if res.Rung != RungRevert || !res.Fallback || fc.obs[0].Replicas < 20 {
		t.Fatalf("2.5x the SLO for 20 s: rung %s fallback %v replicas %d; want revert, the baseline's 20", res.Rung, res.Fallback, fc.obs[0].Replicas)
	}
	if !res.Report.Fallback {
		t.Fatal("the report does not say the baseline acts")
	}
}

// observeP99 is the fake cluster with the domain p99 pinned.
type observeP99 struct {
	*fakeCluster
	p99 float64
}

func (o observeP99) Observe(ctx context.Context, obs *Observation) error {
	o.fakeCluster.Observe(ctx, obs)
	obs.P99 = o.p99
	return nil
}

func TestReportCarriesMemoryAndRestarts(t *testing.T) {
	s, fc, rep, _ := newTestSoldier(domains.ModeActive)
	fc.obs[0].MemUtil, fc.obs[0].RestartRate = 0.4, 0.5
	fc.obs[1].MemUtil, fc.obs[1].RestartRate = 0.9, 2
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	// p75 (nearest rank) of two apps is the larger; restarts add up.
	if r := rep.got[0]; r.MemUtilP75 != 0.9 || r.RestartRate != 2.5 {
		t.Errorf("report mem_util_p75 %g, restart_rate %g; want 0.9 and 2.5", r.MemUtilP75, r.RestartRate)
	}
}

// TestTickResultCarriesTheSLOStatus: a tick's result has the domain's SLO
// and counts its apps at risk and breaching on the tick's observation.
func TestTickResultCarriesTheSLOStatus(t *testing.T) {
	s, fc, _, _ := newTestSoldier(domains.ModeActive)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fc.obs[0].P99 = 0.18 // over 80% of the 0.2 s SLO: at risk
	res, err := s.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if res.SLOSeconds != 0.2 || res.AppsAtRisk != 1 || res.AppsBreaching != 0 {
		t.Fatalf("SLO %g s, at risk %d, breaching %d; want 0.2, 1, 0", res.SLOSeconds, res.AppsAtRisk, res.AppsBreaching)
	}
	fc.obs[1].P99 = 0.3
	if res, err = s.Tick(context.Background(), now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if res.AppsAtRisk != 2 || res.AppsBreaching != 1 || len(res.BreachingAtMax) != 0 {
		t.Fatalf("at risk %d, breaching %d, at max %v; want 2, 1, none", res.AppsAtRisk, res.AppsBreaching, res.BreachingAtMax)
	}
}

// TestTickNamesTheAppsBreachingAtMax: an app over its SLO with its
// max_replicas ready is in the tick's result and its record; one short of
// its ceiling is not.
// An app whose load wants more than its max_replicas is named while it is
// still within its SLO, before it breaches: the leading side of
// BreachingAtMax.
func TestTickNamesTheAppsLimitedByMax(t *testing.T) {
	s, fc, _, rec := newTestSoldier(domains.ModeActive)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// 4000 rps at 100 a replica and 70% wants 58 replicas, over the max of 50.
	fc.obs[0] = AppObservation{RPS: 4000, P99: 0.05, Ready: 50, Replicas: 50}
	res, err := s.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BreachingAtMax) != 0 {
		t.Errorf("at max %+v, want none: the app is within its SLO", res.BreachingAtMax)
	}
	if len(res.LimitedByMax) != 1 || res.LimitedByMax[0].App != 0 || res.LimitedByMax[0].Max != 50 || res.LimitedByMax[0].Wanted < 57 {
		t.Fatalf("limited %+v, want app 0 wanting about 58 of its 50", res.LimitedByMax)
	}
	got := rec.got[len(rec.got)-1].LimitedByMax
	if want := []NamedLimited{{App: "d/a", Max: 50, Wanted: res.LimitedByMax[0].Wanted}}; !slices.Equal(got, want) {
		t.Fatalf("record %+v, want %+v", got, want)
	}
}

func TestTickNamesTheAppsBreachingAtMax(t *testing.T) {
	s, fc, _, rec := newTestSoldier(domains.ModeActive)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fc.obs[0] = AppObservation{RPS: 9000, P99: 0.9, Ready: 50, Replicas: 50}
	fc.obs[1] = AppObservation{RPS: 9000, P99: 0.9, Ready: 49, Replicas: 49}
	res, err := s.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if want := []AtMax{{App: 0, Max: 50, Ready: 50, P99: 0.9}}; !slices.Equal(res.BreachingAtMax, want) {
		t.Fatalf("at max %+v, want %+v", res.BreachingAtMax, want)
	}
	if got := rec.got[len(rec.got)-1].BreachingAtMax; !slices.Equal(got, []string{"d/a"}) {
		t.Fatalf("record names %v, want [d/a]", got)
	}
}
