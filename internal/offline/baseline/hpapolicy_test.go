package baseline

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
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

// flat is telemetry of n apps, each with ready replicas using util of their
// CPU request.
func flat(n int, ready int32, util float64) *sim.Telemetry {
	t := &sim.Telemetry{Apps: make([]sim.AppTelemetry, n)}
	for i := range t.Apps {
		t.Apps[i] = sim.AppTelemetry{Ready: ready, CPUUtil: min(util, 1), CPURequestUtil: util, Target: ready}
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

func TestHPABurst(t *testing.T) {
	// 10 ready replicas asked for 3x what they serve at the 0.7 target, 5
	// more starting: metrics-server shows their usage capped at the limit.
	tests := []struct {
		name  string
		limit float64
		set   func(*domains.Config) HPASettings
		want  int32
	}{
		// 200/70 with 5 pods at 0%: 133/70 = 1.9, ceil(1.9 x 15); the
		// limit of max(2 x 15, 15 + 4) = 30 does not bind.
		{"a 2x limit lets the HPA see the burst past the starting pods", 2, DefaultHPASettings, 29},
		{"so does the legacy path, whose limit is 2 x 15", 2, LegacyHPASettings, 29},
		// 100/70 with 5 pods at 0%: 66/70 = 0.94, within tolerance.
		{"usage capped at the request stalls while pods start", 1, DefaultHPASettings, 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := oneSet(1)
			h := NewHPA(cfg, tt.set(cfg))
			tel := flat(1, 10, min(3*0.7, tt.limit))
			tel.Apps[0].Starting = 5
			targets := []int32{15}
			h.Decide(t0, tel, targets)
			if targets[0] != tt.want {
				t.Fatalf("%d replicas (%s), want %d", targets[0], h.Reason(0), tt.want)
			}
		})
	}
}

func TestHPALegacyPolicy(t *testing.T) {
	t.Run("a peak the scale-up limit cut short is still pursued", func(t *testing.T) {
		// 2 replicas at 10x the target: 20 wanted, 4 allowed. Then 4 at
		// 1.5x: 6 wanted, but 20 is in the window; 8 allowed.
		cfg := oneSet(1)
		set := LegacyHPASettings(cfg)
		set.Target = 0.1
		h := NewHPA(cfg, set)
		targets := []int32{2}
		h.Decide(t0, flat(1, 2, 1.0), targets)
		h.Decide(t0.Add(DefaultSyncPeriod), flat(1, 4, 0.15), targets)
		if targets[0] != 8 || h.Reason(0) != ReasonLegacyUpLimit {
			t.Fatalf("%d replicas (%s), want 8 (%s)", targets[0], h.Reason(0), ReasonLegacyUpLimit)
		}
		withBehaviour := DefaultHPASettings(cfg)
		withBehaviour.Target = 0.1
		def := NewHPA(cfg, withBehaviour)
		targets = []int32{2}
		def.Decide(t0, flat(1, 2, 1.0), targets)
		def.Decide(t0.Add(DefaultSyncPeriod), flat(1, 4, 0.15), targets)
		if targets[0] != 6 {
			t.Fatalf("with behaviour: %d replicas (%s), want 6", targets[0], def.Reason(0))
		}
	})
	t.Run("scale-down waits out the 5-minute window, its start included", func(t *testing.T) {
		cfg := oneSet(1)
		h := NewHPA(cfg, LegacyHPASettings(cfg))
		targets := []int32{10}
		for s := time.Duration(0); s <= 320; s += 10 {
			h.Decide(t0.Add(s*time.Second), flat(1, targets[0], 0.28), targets)
			// At 300 s the initial recommendation (10, made at 0 s) is
			// exactly the window old and still counts
			// (!timestamp.Before(cutoff)); the behaviour path's window drops
			// it there (timestamp.After(cutoff)). The next reconcile, at the
			// 320 s tick for the 315 s mark, is the first without it.
			want := int32(10)
			if s == 320 {
				want = 4
			}
			if targets[0] != want {
				t.Fatalf("at %d s: %d replicas (%s), want %d", s, targets[0], h.Reason(0), want)
			}
		}
	})
}

func TestHPADecideDoesNotAllocate(t *testing.T) {
	for _, set := range []func(*domains.Config) HPASettings{DefaultHPASettings, LegacyHPASettings} {
		cfg := oneSet(500)
		h := NewHPA(cfg, set(cfg))
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
			t.Fatalf("%.1f allocations per Decide (NoBehaviour %v), want 0", allocs, set(cfg).NoBehaviour)
		}
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
				tel.Apps[i].CPURequestUtil = 0.3 + 0.6*float64(i%7)/7 // seeded spread of ratios
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

// TestHPAKeptBoundsMatchAFullScan pins the bounds Decide keeps between
// reconciles to a scan of the whole history at every reconcile, target for
// target, over random utilisation, with and without spec.behavior, with
// scale-up and scale-down windows of 0 to 5 minutes and ticks of 5 to 60 s.
func TestHPAKeptBoundsMatchAFullScan(t *testing.T) {
	const seed = 13
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 14))
	const n = 40
	for trial := range 60 {
		cfg := oneSet(n)
		set := DefaultHPASettings(cfg)
		if trial%3 == 0 {
			set = LegacyHPASettings(cfg)
		}
		set.Behaviour.ScaleUp.StabilizationWindow = time.Duration(r.IntN(5)) * time.Minute
		set.Behaviour.ScaleDown.StabilizationWindow = time.Duration(r.IntN(6)) * time.Minute
		set.DownscaleWindow = time.Duration(1+r.IntN(5)) * time.Minute
		tick := time.Duration(5+5*r.IntN(12)) * time.Second
		kept, full := NewHPA(cfg, set), NewHPA(cfg, set)
		full.fullScan = true
		a, b := make([]int32, n), make([]int32, n)
		for i := range a {
			a[i] = int32(1 + r.IntN(20))
			b[i] = a[i]
		}
		tel := flat(n, 1, 0.5)
		now := t0
		for k := range 400 {
			for i := range tel.Apps {
				tel.Apps[i].Ready = a[i]
				tel.Apps[i].CPURequestUtil = 0.1 + 1.5*r.Float64()
				if r.IntN(10) == 0 {
					tel.Apps[i].Ready = 0 // no metric: recommendation not recorded
				}
			}
			kept.Decide(now, tel, a)
			full.Decide(now, tel, b)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("trial %d (%+v, tick %v), reconcile %d, app %d: kept bounds give %d replicas, full scan %d",
						trial, set, tick, k, i, a[i], b[i])
				}
			}
			now = now.Add(tick)
		}
	}
}
