package soldier

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// reloadConfig is a fresh two-domain config; each call returns a new one.
func reloadConfig() *domains.Config {
	mk := func(name string) domains.Domain {
		return domains.Domain{Name: name, Floor: 0.1, Ceiling: 0.9, SLO: domains.SLO{LatencyP99: 200 * time.Millisecond},
			AppSets: []domains.AppSet{{Name: "a", Count: 3, CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 100,
				ServiceTime: 10 * time.Millisecond, Concurrency: 1}}}
	}
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "c", CapacityCores: 1000},
		Domains: []domains.Domain{mk("web"), mk("batch")},
		// A staffing safety this large never undercuts the target
		// utilisation's size: apps are sized by target_utilisation alone.
		Soldier: domains.Soldier{StaffingSafety: 10},
	}
	cfg.Defaults()
	return cfg
}

// steadyCluster serves every app 700 rps at low latency and keeps the
// replicas written to it; safe for concurrent use.
type steadyCluster struct {
	mu       sync.Mutex
	replicas []int32
	writes   int
}

func newSteadyCluster(n int) *steadyCluster {
	c := &steadyCluster{replicas: make([]int32, n)}
	for i := range c.replicas {
		c.replicas[i] = 10
	}
	return c
}

func (c *steadyCluster) Observe(_ context.Context, obs *Observation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range obs.Apps {
		// 700 rps on replicas of 100 rps (10 ms, concurrency 1).
		util := min(1, 700/(100*float64(max(c.replicas[i], 1))))
		obs.Apps[i] = AppObservation{RPS: 700, P99: 0.02, CPUUtil: util, Ready: c.replicas[i], Replicas: c.replicas[i]}
	}
	obs.P99 = 0.02
	return nil
}

func (c *steadyCluster) Apply(_ context.Context, changes []Change) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range changes {
		c.replicas[ch.App] = ch.Replicas
		c.writes++
	}
	return nil
}

func (c *steadyCluster) state() (replicas []int32, writes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int32(nil), c.replicas...), c.writes
}

func newReloadSoldier(t *testing.T, cfg *domains.Config) (*Soldier, *steadyCluster) {
	t.Helper()
	scfg, err := NewConfig(cfg, "web")
	if err != nil {
		t.Fatal(err)
	}
	c := newSteadyCluster(len(scfg.Apps))
	return New(scfg, &SqrtStaffing{}, c, c, nil, nil), c
}

func TestReloadAppliesSettingsFromTheNextTick(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	// With no directive the Soldier sizes for demand: 700 rps at 100 rps per
	// replica and 0.7 utilisation is 10 replicas per app, what runs already.
	tests := []struct {
		name   string
		change func(cfg *domains.Config)
		want   []int32 // replicas after the tick following the reload
		writes int     // writes in that tick
	}{
		{"a lower target utilisation scales up", func(cfg *domains.Config) { cfg.Soldier.TargetUtilisation = 0.35 },
			[]int32{20, 20, 20}, 3},
		{"max_writes_per_tick limits the writes", func(cfg *domains.Config) {
			cfg.Soldier.TargetUtilisation, cfg.Soldier.MaxWritesPerTick = 0.35, 1
		}, []int32{20, 10, 10}, 1},
		{"mode off stops actuating", func(cfg *domains.Config) {
			cfg.Soldier.TargetUtilisation, cfg.Soldier.Mode = 0.35, domains.ModeOff
		}, []int32{10, 10, 10}, 0},
		{"new replica bounds clamp the targets", func(cfg *domains.Config) { cfg.Domains[0].AppSets[0].MaxReplicas = 8 },
			[]int32{8, 8, 8}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := reloadConfig()
			s, c := newReloadSoldier(t, cfg)
			ctx := context.Background()
			if _, err := s.Tick(ctx, t0); err != nil {
				t.Fatal(err)
			}
			tt.change(cfg)
			_, before := c.state()
			if err := s.Reload(cfg); err != nil {
				t.Fatalf("reload: %v", err)
			}
			res, err := s.Tick(ctx, t0.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			got, after := c.state()
			if !equal32(got, tt.want) || after-before != tt.writes || res.Writes != tt.writes {
				t.Errorf("replicas %v after %d writes (result %d), want %v after %d", got, after-before, res.Writes, tt.want, tt.writes)
			}
		})
	}
}

func TestReloadOfTheCooldownReleasesAHeldScaleDown(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	s, c := newReloadSoldier(t, reloadConfig())
	step := func(at time.Duration, change func(cfg *domains.Config)) []int32 {
		t.Helper()
		cfg := reloadConfig()
		change(cfg)
		if err := s.Reload(cfg); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Tick(ctx, t0.Add(at)); err != nil {
			t.Fatal(err)
		}
		got, _ := c.state()
		return got
	}
	// Scale up (sized for 35% utilisation), then ask for less (100%) within
	// a 30m cooldown: held, also once the policy's 5m stabilisation window
	// has passed. Dropping the cooldown lets it through.
	long := func(cfg *domains.Config) { cfg.Soldier.ScaleDownCooldown = 30 * time.Minute }
	if got := step(0, func(cfg *domains.Config) { long(cfg); cfg.Soldier.TargetUtilisation = 0.35 }); got[0] != 20 {
		t.Fatalf("replicas %v, want 20 after the scale-up", got)
	}
	if got := step(10*time.Second, func(cfg *domains.Config) { long(cfg); cfg.Soldier.TargetUtilisation = 1 }); got[0] != 20 {
		t.Fatalf("replicas %v within the cooldown, want 20 held", got)
	}
	for k := range 30 { // the policy's stabilisation window, at 10 s ticks
		step(time.Duration(20+10*k)*time.Second, func(cfg *domains.Config) { long(cfg); cfg.Soldier.TargetUtilisation = 1 })
	}
	if got, _ := c.state(); got[0] != 20 {
		t.Fatalf("replicas %v past the stabilisation window but within the cooldown, want 20 held", got)
	}
	if got := step(6*time.Minute, func(cfg *domains.Config) {
		cfg.Soldier.TargetUtilisation, cfg.Soldier.ScaleDownCooldown = 1, time.Nanosecond
	}); !equal32(got, []int32{7, 7, 7}) {
		t.Fatalf("replicas %v after dropping the cooldown, want 7 each", got)
	}
}

func TestReloadRefusesWhatNeedsARestart(t *testing.T) {
	tests := []struct {
		name   string
		change func(cfg *domains.Config)
		want   string
	}{
		{"its domain removed", func(cfg *domains.Config) { cfg.Domains = cfg.Domains[1:] }, "not in the new config"},
		{"an added app", func(cfg *domains.Config) { cfg.Domains[0].AppSets[0].Count = 4 }, "set of apps"},
		{"a renamed app set", func(cfg *domains.Config) { cfg.Domains[0].AppSets[0].Name = "b" }, "set of apps"},
		{"a renamed cluster", func(cfg *domains.Config) { cfg.Cluster.Name = "d" }, "cluster name"},
		{"another policy", func(cfg *domains.Config) { cfg.Soldier.Policy = "models/soldier" }, "policy"},
		{"another actuation", func(cfg *domains.Config) { cfg.Soldier.Actuation = domains.ActuateReplicas }, "actuation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := reloadConfig()
			s, _ := newReloadSoldier(t, cfg)
			before := s.cfg
			next := reloadConfig()
			tt.change(next)
			next.Soldier.OverageCap = 0.5 // would apply if the reload were taken
			err := s.Reload(next)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "restart to apply") {
				t.Fatalf("reload: %v, want an error naming %q and \"restart to apply\"", err, tt.want)
			}
			if s.cfg.Soldier != before.Soldier || s.exec.cfg.OverageCap != before.Soldier.OverageCap {
				t.Errorf("a refused reload changed the settings: %+v", s.cfg.Soldier)
			}
		})
	}
}

func TestReloadOfTheTickResetsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := reloadConfig()
		cfg.Soldier.Tick = time.Hour
		s, _ := newReloadSoldier(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		var ticks []time.Time
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = s.Run(ctx, time.Now, func(_ TickResult, err error) {
				if err != nil {
					t.Error(err)
				}
				ticks = append(ticks, time.Now())
			})
		}()
		synctest.Wait()
		start := time.Now()
		next := reloadConfig()
		next.Soldier.Tick = 2 * time.Second
		if err := s.Reload(next); err != nil {
			t.Fatal(err)
		}
		time.Sleep(7 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		if len(ticks) != 3 {
			t.Fatalf("%d ticks in 7s after reloading a 2s tick, want 3", len(ticks))
		}
		if got := ticks[0].Sub(start); got != 2*time.Second {
			t.Errorf("first tick %s after the reload, want 2s", got)
		}
	})
}

// TestReloadIsSafeDuringTicks runs Reload and Tick from two goroutines. It
// pins the lock only under the race detector, which make test runs on this
// package (RACE_PKGS in the Makefile): with Soldier.Reload without tickMu, go test -race
// reports the data races and fails it; plain go test passes either way.
func TestReloadIsSafeDuringTicks(t *testing.T) {
	s, _ := newReloadSoldier(t, reloadConfig())
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			if _, err := s.Tick(context.Background(), t0.Add(time.Duration(i)*10*time.Second)); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Go(func() {
		for i := range 50 {
			next := reloadConfig()
			next.Soldier.TargetUtilisation = 0.3 + 0.01*float64(i)
			if err := s.Reload(next); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
}

func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
