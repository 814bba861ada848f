package soldier

import (
	"reflect"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

func decideConfig(mode domains.Mode) Config {
	return Config{
		Cluster: "c", Domain: "d", SLO: 0.2, ErrorBudget: 0.001, Policy: "proportional",
		Apps: []App{{Index: 0, Name: "d/a", CPU: 1, Min: 1, Max: 50, Capacity: 100}, {Index: 1, Name: "d/b", CPU: 1, Min: 1, Max: 50, Capacity: 100}},
		Soldier: domains.Soldier{Tick: 10 * time.Second, OverageCap: 0.1, ScaleDownCooldown: 5 * time.Minute,
			Mode: mode, TargetUtilisation: 0.7, ErrorRateVeto: 0.01},
	}
}

// decideObservation is two apps at 1400 rps each on 4 replicas: 20 replicas
// each at 70% of 100 rps per replica, 40 cores in all.
func decideObservation(p99 float64) *Observation {
	return &Observation{P99: p99, Apps: []AppObservation{
		{RPS: 1400, P99: p99, Ready: 4, Replicas: 4}, {RPS: 1400, P99: p99, Ready: 4, Replicas: 4}}}
}

// TestDecide pins Decide's rules, one per case: which source proposes the
// targets, when the baseline acts, and what the pins and guards change.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	budget := func(cores float64) *wire.Directive { d := directive(1, cores, now); return &d }
	tests := []struct {
		name      string
		mode      domains.Mode
		setup     func(st *State)
		directive *wire.Directive
		p99       float64
		// want
		source    Source
		fallback  bool
		rung      Rung
		guard     string // on app 0
		pinned    bool   // app 0
		writes    int
		maxCores  int32 // the sum of the writes at most (0: no check)
		recorded  bool  // policy and baseline targets both returned
		minTarget int32 // app 0's target at least (0: no check)
	}{
		{name: "a directive in force: the policy decides within the budget", mode: domains.ModeActive,
			directive: budget(30), p99: 0.05, source: SourcePolicy, writes: 2, maxCores: 33},
		{name: "no directive in force: the baseline sizes for demand", mode: domains.ModeActive,
			p99: 0.05, source: SourceFallback, fallback: true, writes: 2, minTarget: 20},
		{name: "mode off decides nothing", mode: domains.ModeOff,
			directive: budget(30), p99: 0.05, source: SourceOff},
		{name: "recommend mode: the policy and the baseline decide, nothing is written", mode: domains.ModeRecommend,
			directive: budget(10), p99: 0.05, source: SourceRecommend, recorded: true},
		{name: "shadow mode is recommend mode", mode: domains.ModeShadow,
			directive: budget(10), p99: 0.05, source: SourceRecommend, recorded: true},
		{name: "recommend mode without a directive recommends the baseline's sizing", mode: domains.ModeRecommend,
			p99: 0.05, source: SourceRecommend, fallback: true, recorded: true, minTarget: 20},
		{name: "the ladder at revert hands the domain to the baseline", mode: domains.ModeActive,
			setup: func(st *State) {
				st.cfg.Ladder = LadderConfig{Alert: 1.2, Freeze: 1.5, Revert: 2, CoolOff: time.Minute}
				st.ladder = NewLadder(st.cfg.Ladder)
			},
			directive: budget(10), p99: 0.5, source: SourceLadderRevert, fallback: true, rung: RungRevert, writes: 2, minTarget: 20},
		{name: "the ladder at freeze holds the policy and lets the baseline scale up", mode: domains.ModeActive,
			setup: func(st *State) {
				st.cfg.Ladder = LadderConfig{Alert: 1.2, Freeze: 1.5, Revert: 20, CoolOff: time.Minute}
				st.ladder = NewLadder(st.cfg.Ladder)
			},
			directive: budget(10), p99: 0.5, source: SourceLadderFreeze, rung: RungFreeze, writes: 2, minTarget: 20},
		{name: "an operator's pin sets the target above the policy", mode: domains.ModeActive,
			setup: func(st *State) { st.exec.Pin(0, 7) }, directive: budget(30), p99: 0.05,
			source: SourcePolicy, pinned: true, guard: GuardOverride, writes: 2},
		{name: "the budget guard trims scale-ups beyond the overage cap", mode: domains.ModeActive,
			setup: func(st *State) { st.policy = greedy{} }, directive: budget(10), p99: 0.05,
			source: SourcePolicy, guard: GuardBudget, maxCores: 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := NewState(decideConfig(tt.mode), &SqrtStaffing{}, false)
			if tt.setup != nil {
				tt.setup(st)
			}
			dec := Decide(st, decideObservation(tt.p99), tt.directive, now)
			if got := dec.Apps[0].Source; got != tt.source {
				t.Errorf("source %q, want %q (reason %q)", got, tt.source, dec.Reason)
			}
			if dec.Fallback != tt.fallback || dec.Rung != tt.rung || dec.Valid != (tt.directive != nil) {
				t.Errorf("fallback %v, rung %s, valid %v; want %v, %s, %v", dec.Fallback, dec.Rung, dec.Valid, tt.fallback, tt.rung, tt.directive != nil)
			}
			if dec.Apps[0].Pinned != tt.pinned || (tt.guard != "" && dec.Apps[0].Guard != tt.guard) {
				t.Errorf("app 0: %+v, want pinned %v, guard %q", dec.Apps[0], tt.pinned, tt.guard)
			}
			if tt.writes > 0 && len(dec.Writes) != tt.writes {
				t.Errorf("%d writes %v, want %d", len(dec.Writes), dec.Writes, tt.writes)
			}
			if !tt.mode.Writes() && len(dec.Writes) != 0 {
				t.Errorf("mode %s wrote %v", tt.mode, dec.Writes)
			}
			var cores int32
			for _, w := range dec.Writes {
				cores += w.Replicas
			}
			if tt.maxCores > 0 && cores > tt.maxCores {
				t.Errorf("writes %v: %d cores, want at most %d", dec.Writes, cores, tt.maxCores)
			}
			if tt.minTarget > 0 && dec.Apps[0].Target < tt.minTarget {
				t.Errorf("app 0's target %d, want at least %d", dec.Apps[0].Target, tt.minTarget)
			}
			if (dec.PolicyTargets != nil) != tt.recorded {
				t.Errorf("policy targets %v, baseline targets %v; want both: %v", dec.PolicyTargets, dec.BaselineTargets, tt.recorded)
			}
		})
	}
}

// TestDecideIsDeterministic: two states fed the same ticks decide the same.
func TestDecideIsDeterministic(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := NewState(decideConfig(domains.ModeActive), &SqrtStaffing{}, false)
	b := NewState(decideConfig(domains.ModeActive), &SqrtStaffing{}, false)
	writes, targets := 0, map[int32]bool{}
	for k := range 20 {
		at := now.Add(time.Duration(k) * 10 * time.Second)
		// The budget and one app's traffic move, so targets rise and fall.
		d := directive(uint64(k+1), 10+3*float64(k%7), at)
		obs := decideObservation(0.05 + 0.02*float64(k%5))
		obs.Apps[0].RPS = 600 + 300*float64(k%4)
		da, db := Decide(a, obs, &d, at), Decide(b, obs, &d, at)
		if da.Reason != db.Reason {
			t.Fatalf("tick %d: reasons %q vs %q", k, da.Reason, db.Reason)
		}
		if !reflect.DeepEqual(da.Writes, db.Writes) {
			t.Fatalf("tick %d: writes %v vs %v", k, da.Writes, db.Writes)
		}
		if !reflect.DeepEqual(da.Apps, db.Apps) {
			t.Fatalf("tick %d: per-app targets %+v vs %+v", k, da.Apps, db.Apps)
		}
		if !reflect.DeepEqual(da.Guards, db.Guards) {
			t.Fatalf("tick %d: guards %+v vs %+v", k, da.Guards, db.Guards)
		}
		writes += len(da.Writes)
		for _, app := range da.Apps {
			targets[app.Target] = true
		}
	}
	// The ticks must exercise the decision: writes happen and targets move,
	// so equal decisions are not two empty ones.
	if writes == 0 || len(targets) < 2 {
		t.Fatalf("20 ticks wrote %d replica changes over %d distinct targets: the test decides nothing", writes, len(targets))
	}
}

// greedy ignores the budget: every app gets 20 replicas.
type greedy struct{}

func (greedy) Decide(_ Input, out []int32) string {
	for i := range out {
		out[i] = 20
	}
	return "greedy"
}

// A write is in force from the tick it is made: a cluster whose observation
// lags the write by one tick is not written again, however many ticks the
// domain stays active. Two apps at 4 replicas go to greedy's 20 once (2
// writes); the next tick still observes 4 and writes nothing, as does the
// tick that observes 20. Forgetting the targets in force on an active tick
// after an active tick would write both apps again: 4 writes.
func TestDecideDoesNotRewriteWhileTheClusterLags(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := NewState(decideConfig(domains.ModeActive), greedy{}, false)
	d := directive(1, 100, now)
	lagging := decideObservation(0.05)
	caught := decideObservation(0.05)
	for i := range caught.Apps {
		caught.Apps[i].Replicas, caught.Apps[i].Ready = 20, 20
	}
	writes := 0
	for k, obs := range []*Observation{lagging, lagging, caught} {
		dec := Decide(st, obs, &d, now.Add(time.Duration(k)*10*time.Second))
		writes += len(dec.Writes)
		t.Logf("tick %d: writes %v", k, dec.Writes)
	}
	if writes != 2 {
		t.Fatalf("%d writes in 3 ticks with the cluster one write behind, want 2 (each app once)", writes)
	}
}

// script proposes its targets in turn, one slice per tick.
type script struct {
	ticks [][]int32
	k     int
}

func (s *script) Decide(_ Input, out []int32) string {
	copy(out, s.ticks[s.k])
	s.k++
	return "script"
}

// In recommend mode the stabiliser holds the recommendations against the
// targets they would have put in force, a recommended 0 included: an app
// (min 0) with no load recommended down to 0 from the 4 it runs would then
// run 0, so a proposal of 6 the next tick is recommended as it is (Hold
// takes any proposal over an unknown or zero target), not held at the live
// 4 (a need of 0 is within the tolerance of 4).
func TestRecommendHoldsAgainstARecommendedZero(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := decideConfig(domains.ModeRecommend)
	for i := range cfg.Apps {
		cfg.Apps[i].Min = 0
	}
	st := NewState(cfg, &script{ticks: [][]int32{{0, 4}, {6, 4}}}, false)
	d := directive(1, 100, now)
	idle := &Observation{P99: 0.05, Apps: []AppObservation{{P99: 0.05, Ready: 4, Replicas: 4}, {P99: 0.05, Ready: 4, Replicas: 4}}}
	if dec := Decide(st, idle, &d, now); dec.Apps[0].Target != 0 {
		t.Fatalf("tick 0: app 0 recommended %d, want 0 (reason %q)", dec.Apps[0].Target, dec.Reason)
	}
	if dec := Decide(st, idle, &d, now.Add(10*time.Second)); dec.Apps[0].Target != 6 || dec.Apps[0].Held {
		t.Fatalf("tick 1: app 0 recommended %d (held %v), want 6 as proposed over the recommended 0 (reason %q)", dec.Apps[0].Target, dec.Apps[0].Held, dec.Reason)
	}
}
