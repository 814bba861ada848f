package soldier

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

var pinT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func replicaPin(app string, n int, issued time.Time, d time.Duration) wire.Override {
	return wire.Override{Version: wire.Version, Cluster: "c", Domain: "d", App: app, Replicas: &n,
		IssuedAt: issued, Until: issued.Add(d), By: "alice", Reason: "incident 123"}
}

func cancelPin(app string, issued time.Time) wire.Override {
	return wire.Override{Version: wire.Version, Cluster: "c", Domain: "d", App: app, Cancel: true, IssuedAt: issued, By: "alice"}
}

func TestPinsOffer(t *testing.T) {
	apps := []App{{Name: "d/a", Min: 1, Max: 50}, {Name: "d/b", Min: 2, Max: 10}}
	share := 0.3
	tests := []struct {
		rule     string
		before   []wire.Override // accepted first
		offer    wire.Override
		now      time.Time
		kind     string
		reason   string // substring
		targetB  int32  // app d/b's target after
		targetA  int32
		wantKind string
	}{
		{"a replica pin is accepted", nil, replicaPin("d/a", 20, pinT0, 15*time.Minute), pinT0, wire.OverrideAccepted, "d/a pinned at 20 replicas", -1, 20, ""},
		{"a pin above max is held to max", nil, replicaPin("d/b", 20, pinT0, time.Minute), pinT0, wire.OverrideAccepted, "(asked 20, held to [2,10])", 10, -1, ""},
		{"a pin below min is held to min", nil, replicaPin("d/b", 0, pinT0, time.Minute), pinT0, wire.OverrideAccepted, "(asked 0, held to [2,10])", 2, -1, ""},
		{"an unknown app is rejected", nil, replicaPin("d/zz", 3, pinT0, time.Minute), pinT0, wire.OverrideRejected, "d/zz is not an app of domain d", -1, -1, ""},
		{"another domain is rejected", nil, func() wire.Override { o := replicaPin("e/a", 3, pinT0, time.Minute); o.Domain = "e"; return o }(), pinT0, wire.OverrideRejected, "this Soldier runs d", -1, -1, ""},
		{"a share pin is the commander's", nil, wire.Override{Version: wire.Version, Cluster: "c", Domain: "d", Share: &share, IssuedAt: pinT0, Until: pinT0.Add(time.Minute), By: "a"}, pinT0, wire.OverrideRejected, "Commander's", -1, -1, ""},
		{"an invalid override is rejected", nil, func() wire.Override { o := replicaPin("d/a", 3, pinT0, time.Minute); o.By = ""; return o }(), pinT0, wire.OverrideRejected, "by is empty", -1, -1, ""},
		{"a lapsed pin is rejected", nil, replicaPin("d/a", 3, pinT0, time.Minute), pinT0.Add(2 * time.Minute), wire.OverrideRejected, "lapsed at", -1, -1, ""},
		{"a pin from the future is rejected", nil, replicaPin("d/a", 3, pinT0.Add(2*time.Minute), time.Minute), pinT0, wire.OverrideRejected, "ahead of this Soldier's clock", -1, -1, ""},
		{"a newer pin replaces the old", []wire.Override{replicaPin("d/a", 3, pinT0, time.Hour)}, replicaPin("d/a", 7, pinT0.Add(time.Second), time.Hour), pinT0.Add(time.Second), wire.OverrideAccepted, "", -1, 7, ""},
		{"an older pin is rejected", []wire.Override{replicaPin("d/a", 3, pinT0.Add(time.Second), time.Hour)}, replicaPin("d/a", 7, pinT0, time.Hour), pinT0.Add(time.Second), wire.OverrideRejected, "before the pin in force", -1, 3, ""},
		{"a cancel lifts the pin", []wire.Override{replicaPin("d/a", 3, pinT0, time.Hour)}, cancelPin("d/a", pinT0.Add(time.Minute)), pinT0.Add(time.Minute), wire.OverrideCancelled, "lifted by alice", -1, -1, ""},
		{"a cancel without a pin is rejected", []wire.Override{replicaPin("d/b", 3, pinT0, time.Hour)}, cancelPin("d/a", pinT0), pinT0, wire.OverrideRejected, "has no pin to cancel", 3, -1, ""},
		{"a cancel older than the pin is rejected", []wire.Override{replicaPin("d/a", 3, pinT0.Add(time.Minute), time.Hour)}, cancelPin("d/a", pinT0), pinT0.Add(time.Minute), wire.OverrideRejected, "before the pin in force", -1, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			p := NewPins("d", apps)
			for _, o := range tt.before {
				if e := p.Offer(o, o.IssuedAt); e.Kind != wire.OverrideAccepted {
					t.Fatalf("setup pin refused: %s", e.Reason)
				}
			}
			e := p.Offer(tt.offer, tt.now)
			if e.Kind != tt.kind || !strings.Contains(e.Reason, tt.reason) {
				t.Fatalf("event %s %q, want %s containing %q", e.Kind, e.Reason, tt.kind, tt.reason)
			}
			if a, b := p.Target(0), p.Target(1); a != tt.targetA || b != tt.targetB {
				t.Fatalf("targets %d %d, want %d %d", a, b, tt.targetA, tt.targetB)
			}
		})
	}
}

func TestPinsExpireAndApplyOnce(t *testing.T) {
	p := NewPins("d", []App{{Name: "d/a", Min: 1, Max: 50}, {Name: "d/b", Min: 1, Max: 50}})
	p.Offer(replicaPin("d/a", 9, pinT0, time.Minute), pinT0)
	p.Offer(replicaPin("d/b", 4, pinT0, time.Hour), pinT0)
	var ev []OverrideEvent
	ev = p.Applied(0, 5, pinT0, ev) // not there yet
	ev = p.Applied(0, 9, pinT0, ev)
	ev = p.Applied(0, 9, pinT0.Add(10*time.Second), ev) // once only
	if len(ev) != 1 || ev[0].Kind != wire.OverrideApplied || ev[0].Replicas != 9 {
		t.Fatalf("applied events %+v, want one for 9 replicas", ev)
	}
	if ev = p.Expire(pinT0.Add(time.Minute), nil); len(ev) != 0 {
		t.Fatalf("expired at Until: %+v", ev)
	}
	ev = p.Expire(pinT0.Add(time.Minute+time.Nanosecond), nil)
	if len(ev) != 1 || ev[0].Kind != wire.OverrideExpired || ev[0].Override.App != "d/a" || p.Target(0) != -1 || p.Target(1) != 4 {
		t.Fatalf("after the deadline: events %+v, targets %d %d", ev, p.Target(0), p.Target(1))
	}
	if got := p.Active(); len(got) != 1 || got[0].App != "d/b" {
		t.Fatalf("active %+v, want d/b", got)
	}
}

func TestExecutorPin(t *testing.T) {
	apps := []App{{Name: "d/a", CPU: 1, Min: 2, Max: 30}, {Name: "d/b", CPU: 1, Min: 1, Max: 30}}
	tests := []struct {
		rule      string
		cfg       ExecutorConfig
		current   []int32
		lastUp    time.Duration // before now, app 0
		errRate   float64       // app 0
		blind     bool          // app 0
		budget    float64
		pin       int32 // app 0
		proposed  []int32
		want      []int32
		wantGuard []string
	}{
		{"pin wins over the policy", ExecutorConfig{}, []int32{4, 4}, time.Hour, 0, false, math.Inf(1), 20, []int32{6, 4}, []int32{20, 4}, []string{GuardOverride}},
		{"pin equal to the proposal adds no guard", ExecutorConfig{}, []int32{4, 4}, time.Hour, 0, false, math.Inf(1), 6, []int32{6, 4}, []int32{6, 4}, nil},
		{"pin stays within max", ExecutorConfig{}, []int32{4, 4}, time.Hour, 0, false, math.Inf(1), 99, []int32{6, 4}, []int32{30, 4}, []string{GuardOverride}},
		{"pin stays within min", ExecutorConfig{}, []int32{4, 4}, time.Hour, 0, false, math.Inf(1), 0, []int32{6, 4}, []int32{2, 4}, []string{GuardOverride}},
		{"pin wins over the cooldown", ExecutorConfig{ScaleDownCooldown: time.Hour}, []int32{10, 4}, time.Minute, 0, false, math.Inf(1), 3, []int32{10, 4}, []int32{3, 4}, []string{GuardOverride}},
		{"pin wins over the error veto", ExecutorConfig{ErrorRateVeto: 0.01}, []int32{10, 4}, time.Hour, 0.5, false, math.Inf(1), 3, []int32{10, 4}, []int32{3, 4}, []string{GuardOverride}},
		{"pin wins over blindness", ExecutorConfig{}, []int32{10, 4}, time.Hour, 0, true, math.Inf(1), 12, []int32{10, 4}, []int32{12, 4}, []string{GuardOverride}},
		{"pin wins over the budget, others are trimmed", ExecutorConfig{OverageCap: 0}, []int32{4, 4}, time.Hour, 0, false, 24, 20, []int32{4, 8}, []int32{20, 4}, []string{GuardOverride, GuardBudget}},
		{"pin is written first under the rate limit", ExecutorConfig{MaxWritesPerTick: 1}, []int32{4, 4}, time.Hour, 0, false, math.Inf(1), 5, []int32{4, 20}, []int32{5, 4}, []string{GuardOverride, GuardRateLimit}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			e := NewExecutor(tt.cfg, 2)
			copy(e.current, tt.current)
			e.lastUp[0] = pinT0.Add(-tt.lastUp)
			e.Pin(0, tt.pin)
			obs := &Observation{Apps: []AppObservation{{ErrorRate: tt.errRate, Blind: tt.blind, Replicas: tt.current[0]}, {Replicas: tt.current[1]}}}
			proposed := append([]int32(nil), tt.proposed...)
			guards, _ := e.Apply(pinT0, apps, obs, tt.budget, proposed, nil, nil)
			if proposed[0] != tt.want[0] || proposed[1] != tt.want[1] {
				t.Fatalf("targets %v, want %v (guards %+v)", proposed, tt.want, guards)
			}
			var names []string
			for _, g := range guards {
				names = append(names, g.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.wantGuard, ",") {
				t.Fatalf("guards %v, want %v", names, tt.wantGuard)
			}
		})
	}
}

// overrideEvents records override events beside the tick records.
type overrideEvents struct {
	records
	events []OverrideEvent
}

func (o *overrideEvents) RecordOverride(e OverrideEvent) { o.events = append(o.events, e) }

func (o *overrideEvents) kinds() string {
	var ks []string
	for _, e := range o.events {
		ks = append(ks, e.Kind)
	}
	return strings.Join(ks, ",")
}

func TestSoldierAppliesAPinUntilItLapses(t *testing.T) {
	s, fc, _, _ := newTestSoldier(domains.ModeActive)
	rec := &overrideEvents{}
	s.rec = rec
	ctx := context.Background()
	now := pinT0
	s.OnDirective(directive(1, 100, now), now)
	if _, err := s.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	policy := fc.obs[0].Replicas // 1400 rps at 100/replica and 70%: 20
	if ok, why := s.OnOverride(replicaPin("d/a", 35, now, 15*time.Minute), now); !ok {
		t.Fatalf("pin refused: %s", why)
	}
	for k := 1; k <= 3; k++ {
		now = now.Add(10 * time.Second)
		s.OnDirective(directive(uint64(k+1), 100, now), now)
		if _, err := s.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
		if fc.obs[0].Replicas != 35 {
			t.Fatalf("tick %d with the pin: d/a at %d, want 35", k, fc.obs[0].Replicas)
		}
	}
	if got := rec.kinds(); got != "accepted,applied" {
		t.Fatalf("events %s, want accepted,applied", got)
	}
	if g := rec.got[len(rec.got)-1].Guards; len(g) != 1 || g[0].Name != GuardOverride || g[0].App != "d/a" {
		t.Fatalf("guards of a pinned tick %+v, want one override on d/a", g)
	}
	// Past the deadline the pin lapses; after the cooldown of its scale-up,
	// the policy's target returns.
	now = pinT0.Add(15*time.Minute + time.Second)
	for k := 0; k < 3; k++ {
		s.OnDirective(directive(uint64(10+k), 100, now), now)
		if _, err := s.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Second)
	}
	if fc.obs[0].Replicas != policy {
		t.Fatalf("after the pin lapsed: d/a at %d, want the policy's %d", fc.obs[0].Replicas, policy)
	}
	if got := rec.kinds(); got != "accepted,applied,expired" {
		t.Fatalf("events %s, want accepted,applied,expired", got)
	}
	if len(s.Overrides()) != 0 {
		t.Fatalf("pins in force after the deadline: %+v", s.Overrides())
	}
}

func TestSoldierCancelAndModeOff(t *testing.T) {
	s, fc, _, _ := newTestSoldier(domains.ModeOff)
	rec := &overrideEvents{}
	s.rec = rec
	ctx := context.Background()
	s.OnOverride(replicaPin("d/b", 9, pinT0, time.Hour), pinT0)
	if _, err := s.Tick(ctx, pinT0); err != nil {
		t.Fatal(err)
	}
	if fc.obs[1].Replicas != 4 || len(fc.applied) != 0 {
		t.Fatalf("mode off actuated a pin: d/b at %d, writes %v", fc.obs[1].Replicas, fc.applied)
	}
	if ok, why := s.OnOverride(cancelPin("d/b", pinT0.Add(time.Minute)), pinT0.Add(time.Minute)); !ok {
		t.Fatalf("cancel refused: %s", why)
	}
	if ok, _ := s.OnOverride(cancelPin("d/b", pinT0.Add(2*time.Minute)), pinT0.Add(2*time.Minute)); ok {
		t.Fatal("a second cancel was taken")
	}
	if got := rec.kinds(); got != "accepted,cancelled,rejected" {
		t.Fatalf("events %s", got)
	}
}

func BenchmarkExecutorApplyPinned(b *testing.B) {
	for _, n := range []int{50, 500} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			apps := make([]App, n)
			obs := &Observation{Apps: make([]AppObservation, n)}
			e := NewExecutor(ExecutorConfig{OverageCap: 0.1, ScaleDownCooldown: time.Minute, MaxWritesPerTick: 20}, n)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range apps {
				apps[i] = App{CPU: 0.5, Min: 1, Max: 100}
				obs.Apps[i].Replicas = int32(1 + rng.IntN(50))
				if i%10 == 0 {
					e.Pin(i, int32(rng.IntN(100)))
				}
			}
			proposed := make([]int32, n)
			guards, writes := make([]Guard, 0, 4*n), make([]Change, 0, n)
			now := pinT0
			b.ReportAllocs()
			for b.Loop() {
				for i := range proposed {
					proposed[i] = int32(1 + rng.IntN(100))
				}
				now = now.Add(10 * time.Second)
				guards, writes = e.Apply(now, apps, obs, float64(n)*20, proposed, guards[:0], writes[:0])
			}
		})
	}
}
