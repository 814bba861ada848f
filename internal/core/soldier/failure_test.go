package soldier

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

func TestRetryDelay(t *testing.T) {
	tests := []struct {
		name            string
		failures, limit int
		want            int
	}{
		{"first failure retries at the next tick", 1, 30, 1},
		{"second waits two ticks", 2, 30, 2},
		{"third waits four", 3, 30, 4},
		{"fifth waits sixteen", 5, 30, 16},
		{"capped at the limit", 6, 30, 30},
		{"a long run stays at the limit", 1000, 30, 30},
		{"a limit under one tick is one", 4, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryDelay(tt.failures, tt.limit); got != tt.want {
				t.Errorf("RetryDelay(%d, %d) = %d, want %d", tt.failures, tt.limit, got, tt.want)
			}
		})
	}
	if got := retryLimit(10 * time.Second); got != 30 {
		t.Errorf("retry limit at a 10s tick: %d ticks, want 30 (5m)", got)
	}
}

// failingCluster is fakeCluster whose writes to the apps in fail fail with
// err (a WriteErrors naming them unless whole is set, which fails every
// write with a plain error).
type failingCluster struct {
	fakeCluster
	fail     map[int]error
	whole    error
	tick     int           // set by the test before each Soldier tick
	attempts map[int][]int // per app, the ticks it was written to
}

func (f *failingCluster) Apply(ctx context.Context, ch []Change) error {
	f.applied = append(f.applied, append([]Change(nil), ch...))
	for _, c := range ch {
		f.attempts[c.App] = append(f.attempts[c.App], f.tick)
	}
	if f.whole != nil {
		return f.whole
	}
	var we WriteErrors
	for _, c := range ch {
		if err := f.fail[c.App]; err != nil {
			we = append(we, AppFailure{App: c.App, Reason: FailDenied, Err: err})
			continue
		}
		f.obs[c.App].Replicas = c.Replicas
	}
	if we != nil {
		return we
	}
	return nil
}

func newFailingSoldier(t *testing.T) (*Soldier, *failingCluster, *reports, *records) {
	t.Helper()
	s, fc, rep, rec := newTestSoldier(domains.ModeActive)
	fl := &failingCluster{fakeCluster: *fc, fail: map[int]error{}, attempts: map[int][]int{}}
	s.act, s.observer = fl, fl
	return s, fl, rep, rec
}

func TestFailedAppIsRetriedWithBackoffWhileTheOthersAct(t *testing.T) {
	s, fc, rep, rec := newFailingSoldier(t)
	fc.fail[1] = errors.New(`admission webhook "policy" denied the request`)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const ticks = 16
	for k := range ticks {
		if k%6 == 0 {
			s.OnDirective(directive(uint64(k+1), 100, now), now)
		}
		// Demand moves every tick so app 0 (and app 1, were it written)
		// needs a write each tick.
		fc.obs[0].RPS, fc.obs[1].RPS = 700+70*float64(k), 700+70*float64(k)
		fc.tick = k
		res, err := s.Tick(context.Background(), now)
		if err != nil {
			t.Fatalf("tick %d: %v", k, err)
		}
		if len(res.Failing) != 1 || res.Failing[0].App != 1 || res.Failing[0].Reason != FailDenied {
			t.Fatalf("tick %d: failing %+v, want app 1 denied", k, res.Failing)
		}
		now = now.Add(10 * time.Second)
	}
	// Attempts at ticks 0, 1 (1 tick later), 3 (2), 7 (4), 15 (8).
	if got, want := fc.attempts[1], []int{0, 1, 3, 7, 15}; !slices.Equal(got, want) {
		t.Errorf("app 1 tried at ticks %v, want %v", got, want)
	}
	if got := fc.attempts[0]; len(got) != ticks {
		t.Errorf("app 0 written at ticks %v, want every one of %d", got, ticks)
	}
	if len(rep.got) != ticks || len(rec.got) != ticks {
		t.Fatalf("%d reports and %d records over %d ticks, want one each per tick", len(rep.got), len(rec.got), ticks)
	}
	last := rec.got[ticks-1]
	if len(last.Failing) != 1 || last.Failing[0].App != "d/b" || last.Failing[0].Failures != 5 || last.Failing[0].RetryIn != 15 {
		t.Errorf("last record's failing %+v, want d/b after 5 failures, next try in 15 ticks", last.Failing)
	}
	for _, c := range last.Changes {
		if c.App == "d/b" {
			t.Errorf("the record lists a write to d/b that failed: %+v", last.Changes)
		}
	}
	// The app's writes succeed again: it is tried at its next attempt,
	// with the observation (4 replicas) in force, not the target that
	// failed; then it acts like the others.
	delete(fc.fail, 1)
	for k := ticks; k < 32; k++ {
		s.OnDirective(directive(uint64(k+1), 100, now), now)
		fc.obs[0].RPS, fc.obs[1].RPS = 2000+10*float64(k), 2000+10*float64(k)
		fc.tick = k
		res, err := s.Tick(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		if k == 31 && (len(res.Failing) != 0 || fc.obs[1].Replicas == 4) {
			t.Errorf("after recovery: failing %+v, app 1 at %d replicas", res.Failing, fc.obs[1].Replicas)
		}
		now = now.Add(10 * time.Second)
	}
	if got := fc.attempts[1][5:]; len(got) == 0 || got[0] != 31 {
		t.Errorf("app 1 tried again at ticks %v, want its next attempt at 31 (16 ticks after the fifth failure)", got)
	}
}

func TestFailedWriteIsNotTakenAsInForce(t *testing.T) {
	s, fc, _, _ := newFailingSoldier(t)
	fc.fail[1] = errors.New("conflict")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.OnDirective(directive(1, 100, now), now)
	if _, err := s.Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	want := fc.applied[0][slices.IndexFunc(fc.applied[0], func(c Change) bool { return c.App == 1 })].Replicas
	delete(fc.fail, 1)
	// Same demand: the target is unchanged, but it was never written; the
	// cluster still has 4, so the retry writes it.
	if _, err := s.Tick(context.Background(), now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if fc.obs[1].Replicas != want {
		t.Errorf("app 1 at %d replicas after the retry, want the target %d", fc.obs[1].Replicas, want)
	}
	if got := s.exec.Current(1); got != want {
		t.Errorf("target in force %d, want %d once written", got, want)
	}
}

func TestMissingAppIsNotWritten(t *testing.T) {
	s, fc, _, rec := newFailingSoldier(t)
	fc.obs[1].Missing = true
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.OnDirective(directive(1, 100, now), now)
	res, err := s.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if got := fc.attempts[1]; len(got) != 0 {
		t.Errorf("missing app written at ticks %v", got)
	}
	if got := fc.attempts[0]; len(got) != 1 {
		t.Errorf("app 0 written at ticks %v, want 0", got)
	}
	if len(res.Failing) != 1 || res.Failing[0].Reason != FailNotFound || res.Failing[0].Failures != 0 || res.Failing[0].Target <= 4 {
		t.Errorf("failing %+v, want app 1 not found with the target it wanted", res.Failing)
	}
	if !slices.ContainsFunc(rec.got[0].Guards, func(g NamedGuard) bool { return g.App == "d/b" && g.Name == GuardNotFound }) {
		t.Errorf("guards %+v, want not_found on d/b", rec.got[0].Guards)
	}
	fc.obs[1].Missing, fc.tick = false, 1 // back: written at once
	if _, err := s.Tick(context.Background(), now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := fc.attempts[1]; !slices.Equal(got, []int{1}) {
		t.Errorf("app 1 written at ticks %v once back, want [1]", got)
	}
}

func TestActuatorErrorStillReportsAndRecords(t *testing.T) {
	s, fc, rep, rec := newFailingSoldier(t)
	fc.whole = errors.New("connection refused")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.OnDirective(directive(1, 100, now), now)
	res, err := s.Tick(context.Background(), now)
	if err == nil {
		t.Fatal("an actuator error that names no app is not returned")
	}
	if len(rep.got) != 1 || len(rec.got) != 1 || len(res.Failing) != 2 || res.Writes != 0 {
		t.Errorf("%d reports, %d records, failing %+v, %d writes; want the tick reported and recorded, both apps failing, no write",
			len(rep.got), len(rec.got), res.Failing, res.Writes)
	}
}

// TestTargetInForceFollowsTheCluster pins the level-triggered target in
// force: an observation that lags a write by a tick is not taken for a
// change, and a cluster moved away from the target (another writer) gets
// the target written again.
func TestTargetInForceFollowsTheCluster(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []App{{Name: "d/a", CPU: 1, Min: 1, Max: 20}}
	e := NewExecutor(ExecutorConfig{}, 1)
	obs := &Observation{Apps: []AppObservation{{Replicas: 4}}}
	steps := []struct {
		name      string
		observed  int32
		proposed  int32
		wantWrite bool
	}{
		{"first write", 4, 8, true},
		{"the observation lags the write by a tick: nothing to write", 4, 8, false},
		{"the cluster still has 4 a tick later: written again", 4, 8, true},
		{"the cluster caught up", 8, 8, false},
		{"another writer set 3: the target is written again at once", 3, 8, true},
		{"the cluster has it", 8, 8, false},
	}
	for k, st := range steps {
		obs.Apps[0].Replicas = st.observed
		_, writes := e.Apply(now.Add(time.Duration(k)*10*time.Second), apps, obs, math.Inf(1), []int32{st.proposed}, nil, nil)
		if got := len(writes) == 1; got != st.wantWrite {
			t.Errorf("%s: wrote %v, want %v", st.name, writes, st.wantWrite)
		}
	}
}

// A scale-up that failed was not made: it starts no scale-down cooldown.
func TestFailedScaleUpStartsNoCooldown(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []App{{Name: "d/a", CPU: 1, Min: 1, Max: 20}}
	e := NewExecutor(ExecutorConfig{ScaleDownCooldown: 5 * time.Minute, ErrorRateVeto: 1}, 1)
	obs := &Observation{Apps: []AppObservation{{Replicas: 4}}}
	if _, w := e.Apply(now, apps, obs, math.Inf(1), []int32{8}, nil, nil); len(w) != 1 {
		t.Fatalf("scale-up not written: %v", w)
	}
	e.Failed(0, 8, FailDenied, "denied")
	guards, w := e.Apply(now.Add(10*time.Second), apps, obs, math.Inf(1), []int32{2}, nil, nil)
	if len(w) != 1 || w[0].Replicas != 2 {
		t.Errorf("scale-down after a failed scale-up: writes %v, guards %v; want 2 written", w, guards)
	}
}
