package commander

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// reloadConfig is a fresh three-domain config; each call returns a new one so
// a test can change it without touching the Commander's.
func reloadConfig() *domains.Config {
	mk := func(name string, prio int, floor, ceil float64, deps ...string) domains.Domain {
		return domains.Domain{Name: name, Priority: prio, Floor: floor, Ceiling: ceil, Weight: 1,
			SLO: domains.SLO{LatencyP99: 200 * time.Millisecond},
			AppSets: []domains.AppSet{{Name: "a", Count: 2, CPUPerReplica: 1, ServiceTime: 10 * time.Millisecond,
				DependsOn: deps}}}
	}
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "c", CapacityCores: 1000},
		Domains: []domains.Domain{mk("p0", 0, 0.2, 0.7, "p1/a"), mk("p1", 1, 0.1, 0.6), mk("p3", 3, 0.05, 0.5)},
	}
	cfg.Defaults()
	return cfg
}

// reloadPublisher keeps the last directive per domain; safe for concurrent use.
type reloadPublisher struct {
	mu   sync.Mutex
	last map[string]wire.Directive
}

func (p *reloadPublisher) PublishDirective(_ context.Context, d wire.Directive) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]wire.Directive{}
	}
	p.last[d.Domain] = d
	return nil
}

func (p *reloadPublisher) PublishAllocation(context.Context, wire.Allocation) error { return nil }

func (p *reloadPublisher) directive(domain string) wire.Directive {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last[domain]
}

// tickWithDemand feeds every domain the same demand and ticks at now.
func tickWithDemand(t *testing.T, c *Commander, cfg *domains.Config, cores float64, now time.Time) Decision {
	t.Helper()
	for _, d := range cfg.Domains {
		c.OnReport(wire.DomainReport{Version: wire.Version, Cluster: cfg.Cluster.Name, Domain: d.Name, Seq: 1, SentAt: now,
			RPS: 1000, RPSP95: 1000, P99Seconds: 0.1, DemandCores: cores, CoresUsed: cores, Mode: wire.ModeActive})
	}
	dec, err := c.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	return dec
}

func TestReloadAppliesRulesFromTheNextTick(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		change func(cfg *domains.Config)
		check  func(t *testing.T, dec Decision, pub *reloadPublisher)
	}{
		{"a raised floor holds the domain at it", func(cfg *domains.Config) { cfg.Domains[2].Floor = 0.3 },
			func(t *testing.T, dec Decision, _ *reloadPublisher) {
				if dec.Shares[2] < 0.3-1e-9 {
					t.Errorf("p3 share %.3f, want >= the new floor 0.3", dec.Shares[2])
				}
			}},
		{"a lowered ceiling caps the domain", func(cfg *domains.Config) { cfg.Domains[0].Ceiling = 0.25 },
			func(t *testing.T, dec Decision, _ *reloadPublisher) {
				if dec.Shares[0] > 0.25+1e-9 {
					t.Errorf("p0 share %.3f, want <= the new ceiling 0.25", dec.Shares[0])
				}
			}},
		{"a raised reserve_min is kept free", func(cfg *domains.Config) { cfg.Commander.ReserveMin = 0.3 },
			func(t *testing.T, dec Decision, _ *reloadPublisher) {
				if dec.Reserve < 0.3-1e-9 {
					t.Errorf("reserve %.3f, want >= the new reserve_min 0.3", dec.Reserve)
				}
			}},
		{"a fixed headroom goes out with the next directive", func(cfg *domains.Config) { cfg.Commander.Headroom = 0.07 },
			func(t *testing.T, _ Decision, pub *reloadPublisher) {
				if got := pub.directive("p0").Headroom; got != 0.07 {
					t.Errorf("headroom %v, want 0.07", got)
				}
			}},
		{"a domain's own headroom goes out with its next directive", func(cfg *domains.Config) { cfg.Domains[2].Headroom = 0.03 },
			func(t *testing.T, _ Decision, pub *reloadPublisher) {
				if got := pub.directive("p3").Headroom; got != 0.03 {
					t.Errorf("p3's headroom %v, want 0.03", got)
				}
				if got := pub.directive("p0").Headroom; got == 0.03 {
					t.Errorf("p0's headroom %v: p3's own headroom reached it", got)
				}
			}},
		{"a new directive_ttl goes out with the next directive", func(cfg *domains.Config) { cfg.Commander.DirectiveTTL = 7 * time.Minute },
			func(t *testing.T, _ Decision, pub *reloadPublisher) {
				if got := time.Duration(pub.directive("p0").TTL); got != 7*time.Minute {
					t.Errorf("ttl %s, want 7m0s", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := reloadConfig()
			pub := &reloadPublisher{}
			c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, nil, 1, 0)
			// Everyone wants 500 of the 1000 cores: the pool is contested.
			tickWithDemand(t, c, cfg, 500, t0)
			next := reloadConfig()
			next.Commander.MaxShareChange = 1 // reach the new rule in one tick
			tt.change(next)
			if err := c.Reload(next); err != nil {
				t.Fatalf("reload: %v", err)
			}
			tt.check(t, tickWithDemand(t, c, cfg, 500, t0.Add(time.Minute)), pub)
		})
	}
}

func TestReloadRefusesWhatNeedsARestart(t *testing.T) {
	tests := []struct {
		name   string
		change func(cfg *domains.Config)
		want   string
	}{
		{"a removed domain", func(cfg *domains.Config) { cfg.Domains = cfg.Domains[:2] }, "set of domains"},
		{"a renamed domain", func(cfg *domains.Config) { cfg.Domains[1].Name = "p2" }, "set of domains"},
		{"an added app", func(cfg *domains.Config) { cfg.Domains[1].AppSets[0].Count = 3 }, "set of apps"},
		{"a changed dependency", func(cfg *domains.Config) { cfg.Domains[0].AppSets[0].DependsOn = []string{"p3/a"} }, "dependencies"},
		{"a bigger pool", func(cfg *domains.Config) { cfg.Cluster.CapacityCores = 2000 }, "cluster block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := reloadConfig()
			c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &reloadPublisher{}, nil, 1, 0)
			next := reloadConfig()
			tt.change(next)
			next.Commander.DeadZone = 0.5 // would apply if the reload were taken
			err := c.Reload(next)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "restart to apply") {
				t.Fatalf("reload: %v, want an error naming %q and \"restart to apply\"", err, tt.want)
			}
			if c.rules.DeadZone != cfg.Commander.DeadZone || c.cfg != cfg {
				t.Errorf("a refused reload changed the rules: dead_zone %v", c.rules.DeadZone)
			}
		})
	}
}

func TestReloadOfTheTickResetsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := reloadConfig()
		cfg.Commander.Tick, cfg.Commander.DirectiveTTL = time.Hour, 3*time.Hour
		c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &reloadPublisher{}, nil, 1, 0)
		ctx, cancel := context.WithCancel(context.Background())
		var ticks []time.Time
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = c.Run(ctx, time.Now, func(_ Decision, err error) {
				if err != nil {
					t.Error(err)
				}
				ticks = append(ticks, time.Now())
			})
		}()
		synctest.Wait()
		start := time.Now()
		next := reloadConfig()
		next.Commander.Tick, next.Commander.DirectiveTTL = 10*time.Second, 30*time.Second
		if err := c.Reload(next); err != nil {
			t.Fatal(err)
		}
		time.Sleep(35 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		if len(ticks) != 3 {
			t.Fatalf("%d ticks in 35s after reloading a 10s tick, want 3", len(ticks))
		}
		if got := ticks[0].Sub(start); got != 10*time.Second {
			t.Errorf("first tick %s after the reload, want 10s", got)
		}
	})
}

// TestReloadIsSafeDuringTicks runs Reload and Tick from two goroutines. It
// pins the lock only under the race detector, which make test runs on this
// package (RACE_PKGS in the Makefile): with Commander.Reload without mu, go test -race
// reports the data races and fails it; plain go test passes either way.
func TestReloadIsSafeDuringTicks(t *testing.T) {
	cfg := reloadConfig()
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &reloadPublisher{}, nil, 1, 0)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			tickWithDemand(t, c, cfg, 300, t0.Add(time.Duration(i)*time.Minute))
		}
	})
	wg.Go(func() {
		for i := range 50 {
			next := reloadConfig()
			next.Domains[2].Floor = 0.05 + 0.001*float64(i)
			if err := c.Reload(next); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
}

func TestReloadReachesTheHeuristicUnderALearnedResidual(t *testing.T) {
	cfg := reloadConfig()
	l, err := NewLearned(newTestLearned(t, 7, len(cfg.Domains), ObsLayout(cfg)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := New(cfg, l, "learned", &reloadPublisher{}, nil, 1, 0)
	next := reloadConfig()
	next.Commander.ReserveMin, next.Commander.Headroom = 0.3, 0.07
	if err := c.Reload(next); err != nil {
		t.Fatalf("reload: %v", err)
	}
	if l.base.ReserveMin != 0.3 || l.base.Headroom != 0.07 {
		t.Errorf("the learned Commander's heuristic keeps reserve_min %v and headroom %v after a reload to 0.3 and 0.07", l.base.ReserveMin, l.base.Headroom)
	}
}
