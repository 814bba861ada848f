package soldier

import (
	"math"
	"testing"
	"time"
)

func TestExecutorRules(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []App{{Name: "d/a", CPU: 1, Min: 2, Max: 10}, {Name: "d/b", CPU: 1, Min: 1, Max: 10}}
	cfg := ExecutorConfig{OverageCap: 0.1, ScaleDownCooldown: 5 * time.Minute, ErrorRateVeto: 0.01}
	tests := []struct {
		name      string
		cfg       ExecutorConfig
		current   []int32
		lastUp    time.Duration // before now, for app 0
		errRate   float64       // app 0
		budget    float64
		proposed  []int32
		want      []int32
		wantGuard string
		wantWrite int
	}{
		{"bounds clamp below min", cfg, []int32{4, 4}, time.Hour, 0, math.Inf(1), []int32{0, 4}, []int32{2, 4}, GuardBounds, 1},
		{"bounds clamp above max", cfg, []int32{4, 4}, time.Hour, 0, math.Inf(1), []int32{50, 4}, []int32{10, 4}, GuardBounds, 1},
		{"cooldown blocks scale-down", cfg, []int32{6, 4}, time.Minute, 0, math.Inf(1), []int32{3, 4}, []int32{6, 4}, GuardCooldown, 0},
		{"scale-down allowed after cooldown", cfg, []int32{6, 4}, 6 * time.Minute, 0, math.Inf(1), []int32{3, 4}, []int32{3, 4}, "", 1},
		{"elevated errors veto scale-down", cfg, []int32{6, 4}, time.Hour, 0.05, math.Inf(1), []int32{3, 4}, []int32{6, 4}, GuardErrorVeto, 0},
		{"errors do not block scale-up", cfg, []int32{6, 4}, time.Hour, 0.05, math.Inf(1), []int32{8, 4}, []int32{8, 4}, "", 1},
		{"budget trims scale-up to budget plus overage", cfg, []int32{4, 4}, time.Hour, 0, 10, []int32{9, 4}, []int32{7, 4}, GuardBudget, 1},
		{"budget never cuts running replicas", cfg, []int32{8, 8}, time.Hour, 0, 4, []int32{8, 8}, []int32{8, 8}, "", 0},
		{"no-op is not written", cfg, []int32{4, 4}, time.Hour, 0, math.Inf(1), []int32{4, 4}, []int32{4, 4}, "", 0},
		{"rate limit defers the smaller move", ExecutorConfig{MaxWritesPerTick: 1, OverageCap: 0.1}, []int32{4, 4}, time.Hour, 0, math.Inf(1), []int32{9, 5}, []int32{9, 4}, GuardRateLimit, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewExecutor(tt.cfg, 2)
			copy(e.current, tt.current)
			e.lastUp[0] = t0.Add(-tt.lastUp)
			obs := &Observation{Apps: []AppObservation{{ErrorRate: tt.errRate, Replicas: tt.current[0]}, {Replicas: tt.current[1]}}}
			proposed := append([]int32(nil), tt.proposed...)
			guards, writes := e.Apply(t0, apps, obs, tt.budget, proposed, nil, nil)
			for i := range proposed {
				if proposed[i] != tt.want[i] {
					t.Fatalf("targets %v, want %v (guards %+v)", proposed, tt.want, guards)
				}
			}
			if tt.wantGuard == "" && len(guards) > 0 || tt.wantGuard != "" && (len(guards) == 0 || guards[0].Name != tt.wantGuard) {
				t.Fatalf("guards %+v, want %q", guards, tt.wantGuard)
			}
			if len(writes) != tt.wantWrite {
				t.Fatalf("writes %+v, want %d", writes, tt.wantWrite)
			}
		})
	}
}

func TestScaleUpStartsTheCooldown(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []App{{CPU: 1, Min: 1, Max: 10}}
	e := NewExecutor(ExecutorConfig{ScaleDownCooldown: 5 * time.Minute}, 1)
	obs := &Observation{Apps: []AppObservation{{Replicas: 2}}}
	e.Apply(t0, apps, obs, math.Inf(1), []int32{5}, nil, nil)
	p := []int32{2}
	guards, _ := e.Apply(t0.Add(time.Minute), apps, obs, math.Inf(1), p, nil, nil)
	if p[0] != 5 || len(guards) != 1 || guards[0].Name != GuardCooldown {
		t.Fatalf("scale-down a minute after a scale-up: target %d guards %+v", p[0], guards)
	}
}

func TestProportionalPolicy(t *testing.T) {
	apps := []App{
		{Name: "d/a", CPU: 1, Min: 1, Max: 100, Capacity: 100},
		{Name: "d/b", CPU: 1, Min: 1, Max: 100, Capacity: 100},
	}
	obs := &Observation{Apps: []AppObservation{{RPS: 700, P99: 0.1, Ready: 10}, {RPS: 700, P99: 0.5, Ready: 10}}}
	in := Input{Apps: apps, Obs: obs, BudgetCores: math.Inf(1), TargetUtil: 0.7, SLO: 0.4}
	out := make([]int32, 2)
	(&SqrtStaffing{}).Decide(in, out)
	if out[0] != 10 {
		t.Fatalf("700 rps at 100/replica and 70%%: %d replicas, want 10", out[0])
	}
	if out[1] != 10 {
		t.Fatalf("app over its SLO with its ready replicas enough for its load: %d replicas, want its 10 (no boost)", out[1])
	}
	in.BudgetCores = 14
	(&SqrtStaffing{}).Decide(in, out)
	if got := out[0] + out[1]; got > 14 {
		t.Fatalf("over budget: %v uses %d cores of 14", out, got)
	}
	if out[1] < out[0] {
		t.Fatalf("the at-risk app got less than the healthy one under a tight budget: %v", out)
	}
}

// An app another controller scales is left alone: no write whatever the
// policy, the pin or the budget say, its target follows what the other
// owner set, and the guard is recorded even when nothing changed.
func TestExecutorLeavesForeignOwnedAppsAlone(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []App{{Name: "d/a", CPU: 1, Min: 1, Max: 10}, {Name: "d/b", CPU: 1, Min: 1, Max: 10}}
	e := NewExecutor(ExecutorConfig{OverageCap: 0.1}, 2)
	e.Pin(0, 9)
	obs := &Observation{Apps: []AppObservation{{Replicas: 7, ForeignOwner: "hpa/a"}, {Replicas: 3}}}
	proposed := []int32{2, 5}
	guards, writes := e.Apply(t0, apps, obs, math.Inf(1), proposed, nil, nil)
	if len(writes) != 1 || writes[0].App != 1 || proposed[0] != 7 || e.Current(0) != 7 {
		t.Fatalf("writes %+v, targets %v, current %d; want only app 1 written, app 0 at the other owner's 7", writes, proposed, e.Current(0))
	}
	if len(guards) != 1 || guards[0] != (Guard{GuardForeignOwner, 0, 2, 7}) {
		t.Fatalf("guards %+v", guards)
	}
	// Unchanged, the guard still says why (the cluster now runs app 1's 5:
	// the target in force is what the cluster holds).
	obs.Apps[0].Replicas, obs.Apps[1].Replicas = 2, 5
	guards, writes = e.Apply(t0, apps, obs, math.Inf(1), []int32{2, 5}, nil, nil)
	if len(writes) != 0 || len(guards) != 1 || guards[0].Name != GuardForeignOwner {
		t.Fatalf("writes %+v, guards %+v", writes, guards)
	}
	// Once the other owner is gone, the app starts from what it runs.
	obs.Apps[0].ForeignOwner = ""
	e.Pin(0, -1)
	if _, writes = e.Apply(t0, apps, obs, math.Inf(1), []int32{4, 5}, nil, nil); len(writes) != 1 || writes[0] != (Change{0, 4}) {
		t.Fatalf("after the owner left: writes %+v", writes)
	}
}

// The executor's count of pinned apps, which lets a Soldier without pins
// skip its per-app pin passes, follows every Pin: set, moved, lifted,
// lifted again.
func TestExecutorCountsItsPins(t *testing.T) {
	e := NewExecutor(ExecutorConfig{}, 4)
	for _, p := range []struct {
		app      int
		replicas int32
	}{{0, 3}, {0, 5}, {2, 0}, {1, -1}, {0, -1}, {0, -7}, {3, 9}, {2, -1}} {
		e.Pin(p.app, p.replicas)
		want := 0
		for i := range 4 {
			if e.Pinned(i) >= 0 {
				want++
			}
		}
		if e.npinned != want {
			t.Fatalf("after Pin(%d, %d): %d pinned counted, %d pinned", p.app, p.replicas, e.npinned, want)
		}
	}
}
