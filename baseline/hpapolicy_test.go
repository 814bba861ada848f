package baseline

import (
	"fmt"
	"testing"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim"
)

// oneSet is a config of one domain with n alike apps.
func oneSet(n int) *domains.Config {
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: 1e6},
		Domains: []domains.Domain{{
			Name: "d", SLO: domains.SLO{LatencyP99: 300 * time.Millisecond},
			AppSets: []domains.AppSet{{Name: "a", Count: n, CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 100, ServiceTime: 20 * time.Millisecond, Concurrency: 2}},
		}},
	}
	cfg.Defaults()
	return cfg
}

// flat is telemetry of n apps, each with ready replicas at util.
func flat(n int, ready int32, util float64) *sim.Telemetry {
	t := &sim.Telemetry{Apps: make([]sim.AppTelemetry, n)}
	for i := range t.Apps {
		t.Apps[i] = sim.AppTelemetry{Ready: ready, CPUUtil: util, Target: ready}
	}
	return t
}

func TestHPASyncPeriod(t *testing.T) {
	tests := []struct {
		name  string
		ticks []int // seconds
		syncs []int // ticks on which the HPA reconciles
	}{
		{"10 s ticks reconcile at the first tick at or after each 15 s mark",
			[]int{0, 10, 20, 30, 40, 50, 60, 70, 80, 90},
			[]int{0, 20, 30, 50, 60, 80, 90}},
		{"a gap of several periods reconciles once, then keeps the marks",
			[]int{0, 100, 110, 120},
			[]int{0, 100, 110, 120}},
		{"ticks between marks do not reconcile",
			[]int{0, 5, 10, 14, 15, 29},
			[]int{0, 15}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHPA(oneSet(1), DefaultHPASettings(oneSet(1)))
			var got []int
			for _, s := range tt.ticks {
				before := h.syncs
				h.Decide(t0.Add(time.Duration(s)*time.Second), flat(1, 4, 0.7), []int32{4})
				if h.syncs != before {
					got = append(got, s)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.syncs) {
				t.Fatalf("reconciled at %v s, want %v s", got, tt.syncs)
			}
		})
	}
}

func TestHPAPolicy(t *testing.T) {
	t.Run("scale-down waits out the 300 s window from the first reconcile", func(t *testing.T) {
		cfg := oneSet(1)
		h := NewHPA(cfg, DefaultHPASettings(cfg))
		targets := []int32{10}
		for s := time.Duration(0); s <= 300; s += 10 {
			h.Decide(t0.Add(s*time.Second), flat(1, targets[0], 0.28), targets)
			want := int32(10)
			if s == 300 {
				want = 4
			}
			if targets[0] != want {
				t.Fatalf("at %d s: %d replicas (%s), want %d", s, targets[0], h.Reason(0), want)
			}
		}
	})
	t.Run("scale-up doubles per reconcile while utilisation stays high", func(t *testing.T) {
		cfg := oneSet(1)
		h := NewHPA(cfg, DefaultHPASettings(cfg))
		targets := []int32{5}
		var got []int32
		for s := time.Duration(0); s <= 30; s += 10 {
			h.Decide(t0.Add(s*time.Second), flat(1, targets[0], 1.0), targets)
			got = append(got, targets[0])
		}
		// 100/70 x 5 = 7.1 -> 8; 20 s: 12; 30 s: 18 (ratio 1.43, limit 2x)
		if fmt.Sprint(got) != "[8 8 12 18]" {
			t.Fatalf("replicas %v, want [8 8 12 18]", got)
		}
	})
	t.Run("replicas created since the telemetry count as not ready", func(t *testing.T) {
		cfg := oneSet(1)
		h := NewHPA(cfg, DefaultHPASettings(cfg))
		// Telemetry shows 4 ready at 100%; 4 more were requested since: at 0%
		// they bring the usage to 50/70, a reversal, so nothing changes.
		targets := []int32{8}
		h.Decide(t0, flat(1, 4, 1.0), targets)
		if targets[0] != 8 || h.Reason(0) != ReasonReversed {
			t.Fatalf("%d replicas (%s), want 8 (%s)", targets[0], h.Reason(0), ReasonReversed)
		}
	})
	t.Run("replicas removed since the telemetry are ignored", func(t *testing.T) {
		cfg := oneSet(1)
		h := NewHPA(cfg, DefaultHPASettings(cfg))
		tel := flat(1, 10, 1.0)
		tel.Apps[0].Pending = 2
		targets := []int32{6} // cut 6: 2 pending, then 4 ready; 6 ready at 100%/70% -> ceil(8.6)
		h.Decide(t0, tel, targets)
		if targets[0] != 9 {
			t.Fatalf("%d replicas (%s), want 9", targets[0], h.Reason(0))
		}
	})
}

func TestHPADecideDoesNotAllocate(t *testing.T) {
	cfg := oneSet(500)
	h := NewHPA(cfg, DefaultHPASettings(cfg))
	targets := make([]int32, 500)
	for i := range targets {
		targets[i] = 10
	}
	tel := flat(500, 10, 0.5)
	now := t0
	allocs := testing.AllocsPerRun(200, func() {
		h.Decide(now, tel, targets)
		now = now.Add(10 * time.Second)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per Decide, want 0", allocs)
	}
}

// BenchmarkHPADecide is one reconcile of every app's HPA (a tick with a sync
// due), by app count.
func BenchmarkHPADecide(b *testing.B) {
	for _, n := range []int{100, 1550, 10000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			cfg := oneSet(n)
			h := NewHPA(cfg, DefaultHPASettings(cfg))
			targets := make([]int32, n)
			tel := flat(n, 10, 0.5)
			for i := range targets {
				targets[i] = 10
				tel.Apps[i].CPUUtil = 0.3 + 0.6*float64(i%7)/7 // seeded spread of ratios
			}
			now := t0
			b.ReportAllocs()
			for b.Loop() {
				h.Decide(now, tel, targets)
				now = now.Add(DefaultSyncPeriod)
			}
		})
	}
}
