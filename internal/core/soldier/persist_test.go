package soldier

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// skimp is the baseline's sizing, cut to 60% in the first four minutes of
// every ten: a policy the automatic fallback trips on and hands back to.
type skimp struct{ base SqrtStaffing }

func (l skimp) Decide(in Input, out []int32) string {
	r := l.base.Decide(in, out)
	if in.Now.Minute()%10 < 4 {
		for i := range out {
			out[i] = int32(math.Ceil(0.6 * float64(out[i])))
		}
	}
	return r
}

// persistConfig is decideConfig with the ladder and a short automatic
// fallback, so that every timer a Snapshot holds moves within a few
// hundred ticks.
func persistConfig(mode domains.Mode) Config {
	cfg := decideConfig(mode)
	cfg.Ladder = LadderConfig{Alert: 1.2, Freeze: 1.4, Revert: 1.6, Sustain: 20 * time.Second, CoolOff: time.Minute}
	cfg.Soldier.ScaleDownCooldown = 10 * time.Minute
	cfg.Fallback = FallbackConfig{Window: 20, BreachFraction: 0.1, CostMargin: 0.1, ShortTolerance: 0.1, Hold: 12}
	return cfg
}

// twinCluster is what a domain of persistConfig's two apps observes at tick
// k: load swinging between 200 and 2600 rps per app out of phase, with the
// p99 rising as the replicas in force fall behind it.
func twinObservation(k int, replicas []int32) *Observation {
	obs := &Observation{Apps: make([]AppObservation, len(replicas))}
	for i, r := range replicas {
		rps := 1400 + 1200*math.Sin(float64(k)/9+float64(i)*2)
		if k%37 < 3 {
			rps *= 0.3 // short dips the stabiliser holds
		}
		load := rps / (100 * float64(max(r, 1)))
		p99 := 0.05 + 2*max(0, load-0.7)
		obs.Apps[i] = AppObservation{RPS: rps, P99: p99, Ready: r, Replicas: r, CPUUtil: min(1, load)}
		obs.P99 = max(obs.P99, p99)
	}
	return obs
}

// decisionOf is what of a Decision two Soldiers must agree on.
func decisionOf(d Decision) string {
	return fmt.Sprintf("writes=%v guards=%v apps=%v rung=%v auto=%v switch=%q fallback=%v",
		d.Writes, d.Guards, d.Apps, d.Rung, d.AutoFallback, d.Switch.Reason, d.Fallback)
}

// TestRestoredSoldierDecidesAsOneThatNeverStopped runs two Soldiers'
// decision states on the same observations of a cluster that applies their
// writes; one is snapshotted, encoded, decoded into a fresh state and
// restored at restart ticks. Both must decide the same, tick by tick, and
// the run must exercise the cooldown, the stabiliser, the ladder and the
// automatic fallback, or it proves nothing.
func TestRestoredSoldierDecidesAsOneThatNeverStopped(t *testing.T) {
	for _, mode := range []domains.Mode{domains.ModeActive, domains.ModeRecommend} {
		t.Run(string(mode), func(t *testing.T) {
			cfg := persistConfig(mode)
			never, restarted := NewState(cfg, skimp{}, false), NewState(cfg, skimp{}, false)
			replicas := map[*State][]int32{never: {4, 4}, restarted: {4, 4}}
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			seen := map[string]bool{}
			for k := range 400 {
				now := start.Add(time.Duration(k) * cfg.Soldier.Tick)
				if k > 0 && k%23 == 0 { // a restart: the state goes through its encoding
					restarted = restart(t, cfg, restarted, now, replicas)
				}
				d := directive(uint64(k+1), 30+float64(k%50), now)
				var got [2]string
				for j, st := range []*State{never, restarted} {
					dec := Decide(st, twinObservation(k, replicas[st]), &d, now)
					for _, w := range dec.Writes {
						replicas[st][w.App] = w.Replicas
					}
					got[j] = decisionOf(dec)
					for _, a := range dec.Apps {
						seen["guard "+a.Guard], seen["held"] = true, seen["held"] || a.Held
					}
					seen["rung "+dec.Rung.String()] = true
					seen["switch "+dec.Switch.Reason] = true
				}
				if got[0] != got[1] {
					t.Fatalf("tick %d: the restarted Soldier decided\n %s\nthe one that never stopped\n %s", k, got[1], got[0])
				}
			}
			want := []string{"held"}
			if mode == domains.ModeActive {
				want = append(want, "guard cooldown", "rung freeze", "rung revert", "switch slo", "switch hand-back")
			}
			for _, w := range want {
				if !seen[w] {
					t.Errorf("the run never exercised %q: it proves nothing about it (seen %v)", w, seen)
				}
			}
		})
	}
}

// restart is st saved at now, encoded, decoded and restored into a fresh
// state, as a restarted Soldier would; the cluster's replicas carry over.
func restart(t *testing.T, cfg Config, st *State, now time.Time, replicas map[*State][]int32) *State {
	t.Helper()
	b, err := st.Snapshot(now).Encode()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	fresh := NewState(cfg, st.policy, false)
	if ok, why := fresh.Restore(snap, now.Add(cfg.Soldier.Tick/2)); !ok {
		t.Fatalf("not restored: %s", why)
	}
	replicas[fresh] = replicas[st]
	return fresh
}

// TestSnapshotRoundTrip pins the encoding: a snapshot decodes to itself,
// and restoring it into a fresh state snapshots the same again.
func TestSnapshotRoundTrip(t *testing.T) {
	cfg := persistConfig(domains.ModeActive)
	st := NewState(cfg, skimp{}, false)
	replicas := []int32{4, 4}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var now time.Time
	for k := range 60 {
		now = start.Add(time.Duration(k) * cfg.Soldier.Tick)
		d := directive(uint64(k+1), 40, now)
		for _, w := range Decide(st, twinObservation(k, replicas), &d, now).Writes {
			replicas[w.App] = w.Replicas
		}
	}
	snap := st.Snapshot(now)
	b, err := snap.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSnapshot(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, snap) {
		t.Fatalf("decoded\n %+v\nwant\n %+v", back, snap)
	}
	fresh := NewState(cfg, skimp{}, false)
	fresh.Restore(back, now)
	again, _ := fresh.Snapshot(now).Encode()
	for name, a := range snap.Apps { // active mode: the cluster's replicas are the targets in force
		a.Target = -1
		snap.Apps[name] = a
	}
	if b, _ = snap.Encode(); !bytes.Equal(again, b) {
		t.Fatalf("restored and saved again:\n %s\nwant\n %s", again, b)
	}
	if len(snap.Apps["d/a"].Window) != stabilisationTicks || snap.Fallback == nil || len(snap.Fallback.Scores) == 0 {
		t.Fatalf("snapshot misses state: %s", b)
	}
	if _, err := DecodeSnapshot(bytes.Replace(b, []byte(`"version":1`), []byte(`"version":2`), 1)); err == nil {
		t.Fatal("a snapshot of another version decoded")
	}
}

// TestRestore pins what a restart restores and what it ignores.
func TestRestore(t *testing.T) {
	saved := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := persistConfig(domains.ModeActive)
	upAt := saved.Add(-time.Minute) // app a scaled up a minute before the stop; the cooldown is 5 minutes
	base := func() Snapshot {
		return Snapshot{Version: SnapshotVersion, Domain: "d", SavedAt: saved, Mode: "active",
			Apps: map[string]AppSnapshot{
				"d/a":    {Target: 9, LastScaleUp: upAt, Window: []int32{9, 9, 8}},
				"d/gone": {Target: 3, LastScaleUp: upAt, Window: []int32{3, 3, 3}},
			},
			Ladder:   LadderSnapshot{Rung: RungAlert, Calm: saved.Add(-10 * time.Second)},
			Fallback: &FallbackSnapshot{Window: 20, Scores: []Score{{Caused: true, PolicyCores: 5, BaselineCores: 6}}, Policy: 5, Base: 6},
		}
	}
	tests := []struct {
		name     string
		edit     func(s *Snapshot)
		mode     domains.Mode
		after    time.Duration // restored this long after saved
		restored bool
		check    func(t *testing.T, st *State)
	}{
		{name: "the scale-down cooldown runs on across a restart", after: time.Minute, restored: true,
			check: func(t *testing.T, st *State) {
				if !st.exec.lastUp[0].Equal(upAt) {
					t.Errorf("last scale-up %v, want %v", st.exec.lastUp[0], upAt)
				}
			}},
		{name: "an app no longer configured is dropped and a new one starts fresh", after: time.Minute, restored: true,
			check: func(t *testing.T, st *State) {
				if !st.exec.lastUp[1].IsZero() || st.stab.most[1] != 0 || st.stab.most[0] != 9 || st.stab.ticks != 3 {
					t.Errorf("app b: last up %v, window max %d; app a's window max %d over %d ticks",
						st.exec.lastUp[1], st.stab.most[1], st.stab.most[0], st.stab.ticks)
				}
			}},
		{name: "in a writing mode the targets in force are the cluster's", after: time.Minute, restored: true,
			check: func(t *testing.T, st *State) {
				if st.exec.Current(0) != -1 {
					t.Errorf("target in force %d, want -1 (unknown: take the observation)", st.exec.Current(0))
				}
			}},
		{name: "in recommend mode the targets in force are the recommendations'", mode: domains.ModeRecommend,
			edit: func(s *Snapshot) { s.Mode = "recommend" }, after: time.Minute, restored: true,
			check: func(t *testing.T, st *State) {
				if st.exec.Current(0) != 9 {
					t.Errorf("target in force %d, want 9", st.exec.Current(0))
				}
			}},
		{name: "the ladder's rung and timers and the fallback's window come back", after: time.Minute, restored: true,
			check: func(t *testing.T, st *State) {
				if st.ladder.Rung() != RungAlert || st.auto.n != 1 || st.auto.caused != 1 || st.auto.pc != 5 {
					t.Errorf("rung %v, fallback %d scores %d caused %.0f cores", st.ladder.Rung(), st.auto.n, st.auto.caused, st.auto.pc)
				}
			}},
		{name: "a fallback window of another length starts afresh", after: time.Minute, restored: true,
			edit: func(s *Snapshot) { s.Fallback.Window = 30 },
			check: func(t *testing.T, st *State) {
				if st.auto.n != 0 {
					t.Errorf("fallback kept %d scores", st.auto.n)
				}
			}},
		{name: "a window saved longer ago than it spans has passed", after: 6 * time.Minute, restored: true,
			check: func(t *testing.T, st *State) {
				if st.stab.ticks != 0 || !st.exec.lastUp[0].Equal(upAt) {
					t.Errorf("window of %d ticks restored after 6 minutes (30 ticks of 10 s); last up %v", st.stab.ticks, st.exec.lastUp[0])
				}
			}},
		{name: "state older than the longest timer and a margin is ignored", after: MaxStateAge(cfg) + time.Second},
		{name: "state from the future is ignored", after: -time.Minute},
		{name: "another domain's state is ignored", after: time.Minute, edit: func(s *Snapshot) { s.Domain = "other" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			if tt.mode != "" {
				c = persistConfig(tt.mode)
			}
			st := NewState(c, &SqrtStaffing{}, false)
			s := base()
			if tt.edit != nil {
				tt.edit(&s)
			}
			ok, why := st.Restore(s, saved.Add(tt.after))
			if ok != tt.restored {
				t.Fatalf("restored %v (%s), want %v", ok, why, tt.restored)
			}
			if !ok && (st.exec.lastUp[0] != time.Time{} || st.ladder.Rung() != RungNone || st.auto.n != 0) {
				t.Fatalf("an ignored state (%s) changed the Soldier", why)
			}
			if tt.check != nil {
				tt.check(t, st)
			}
		})
	}
}

// TestRestoredCooldownHoldsScaleDown is the rule the restart keeps: a
// Soldier restarted inside a scale-down cooldown does not scale down before
// the cooldown ends, and does once it has.
func TestRestoredCooldownHoldsScaleDown(t *testing.T) {
	cfg := decideConfig(domains.ModeActive)
	saved := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := NewState(cfg, &SqrtStaffing{}, false)
	d := directive(1, 100, saved)
	high := decideObservation(0.05) // 20 replicas each needed
	Decide(st, high, &d, saved)     // scales up both apps from 4: the cooldown starts
	snap := st.Snapshot(saved)
	for name, a := range snap.Apps { // the cooldown alone: no window for the stabiliser to hold on
		a.Window = nil
		snap.Apps[name] = a
	}
	low := func(replicas int32) *Observation {
		return &Observation{P99: 0.05, Apps: []AppObservation{
			{RPS: 140, P99: 0.05, Ready: replicas, Replicas: replicas}, {RPS: 140, P99: 0.05, Ready: replicas, Replicas: replicas}}}
	}
	end := saved.Add(cfg.Soldier.ScaleDownCooldown)
	for _, at := range []time.Duration{time.Minute, 3 * time.Minute, cfg.Soldier.ScaleDownCooldown - time.Second} {
		fresh := NewState(cfg, &SqrtStaffing{}, false)
		fresh.Restore(snap, saved.Add(at))
		d := directive(2, 100, saved.Add(at))
		dec := Decide(fresh, low(20), &d, saved.Add(at))
		if len(dec.Writes) != 0 || dec.Apps[0].Guard != GuardCooldown {
			t.Errorf("restarted %s after the scale-up (cooldown ends %s later): writes %v, guard %q", at, end.Sub(saved.Add(at)), dec.Writes, dec.Apps[0].Guard)
		}
	}
	fresh := NewState(cfg, &SqrtStaffing{}, false)
	fresh.Restore(snap, end)
	d = directive(2, 100, end)
	if dec := Decide(fresh, low(20), &d, end); dec.Apps[0].Guard == GuardCooldown {
		t.Errorf("the cooldown held past its end: %s", decisionOf(dec))
	}
	// Without the restore the same Soldier would have scaled down at once.
	forgot := NewState(cfg, &SqrtStaffing{}, false)
	if dec := Decide(forgot, low(20), &d, saved.Add(time.Minute)); len(dec.Writes) == 0 {
		t.Fatalf("a Soldier without its state held the scale-down too: the test proves nothing")
	}
}

// BenchmarkSnapshotEncode is the per-tick cost of the state a Soldier saves:
// Snapshot and Encode of a domain whose stabilisation windows are full.
func BenchmarkSnapshotEncode(b *testing.B) {
	for _, n := range []int{10, 500} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			cfg := persistConfig(domains.ModeActive)
			cfg.Apps = make([]App, n)
			replicas := make([]int32, n)
			for i := range cfg.Apps {
				cfg.Apps[i] = App{Index: i, Name: fmt.Sprintf("d/app-%d", i), CPU: 1, Min: 1, Max: 50, Capacity: 100}
				replicas[i] = 4
			}
			st := NewState(cfg, skimp{}, true)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for k := range 40 {
				now := start.Add(time.Duration(k) * cfg.Soldier.Tick)
				d := directive(uint64(k+1), float64(20*n), now)
				for _, w := range Decide(st, twinObservation(k, replicas), &d, now).Writes {
					replicas[w.App] = w.Replicas
				}
			}
			var size int
			b.ReportAllocs()
			for b.Loop() {
				raw, err := st.Snapshot(start).Encode()
				if err != nil {
					b.Fatal(err)
				}
				size = len(raw)
			}
			b.ReportMetric(float64(size), "bytes")
		})
	}
}
