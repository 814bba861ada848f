package soldier

import (
	"context"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
)

// guardsConfig is a cluster config with domains "p0", "p1" and "p5" at those
// priorities and soldier holding the given soldier block body.
func guardsConfig(t *testing.T, soldier string) *domains.Config {
	t.Helper()
	src := `cluster "c" {
  capacity_cores = 1000
}
soldier {
` + soldier + `}
`
	for _, d := range []struct{ name, priority string }{{"p0", "0"}, {"p1", "1"}, {"p5", "5"}} {
		src += `domain "` + d.name + `" {
  priority = ` + d.priority + `
  slo { latency_p99 = "200ms" }
  apps "a" {
    count           = 3
    cpu_per_replica = 1
    service_time    = "10ms"
  }
}
`
	}
	cfg, err := config.Parse([]byte(src), "cluster.hcl")
	if err != nil {
		t.Fatalf("parse:\n%v\nsource:\n%s", err, src)
	}
	return cfg
}

func TestNewConfigTakesTheLadderAndFallbackFromTheConfig(t *testing.T) {
	cases := []struct {
		name     string
		soldier  string
		ladders  map[string]LadderConfig // by domain
		fallback FallbackConfig
	}{
		{name: "no blocks: the tier defaults and the default fallback",
			ladders:  map[string]LadderConfig{"p0": DefaultLadder(0), "p1": DefaultLadder(1), "p5": DefaultLadder(5)},
			fallback: DefaultFallback(10 * time.Second)},
		{name: "a tier's block applies to its domains; unset attributes and other tiers keep the defaults",
			soldier: `  ladder "p1" {
    alert   = 1.1
    sustain = "5s"
  }
  ladder "p5" {
    alert    = 1.05
    freeze   = 1.1
    revert   = 1.2
    sustain  = "1m"
    cool_off = "10m"
  }
`,
			ladders: map[string]LadderConfig{"p0": DefaultLadder(0),
				"p1": {Alert: 1.1, Freeze: 1.3 * 1.25, Revert: 1.3 * 5 / 3, Sustain: 5 * time.Second, CoolOff: 5 * time.Minute},
				"p5": {Alert: 1.05, Freeze: 1.1, Revert: 1.2, Sustain: time.Minute, CoolOff: 10 * time.Minute}},
			fallback: DefaultFallback(10 * time.Second)},
		{name: "fallback lengths become whole soldier ticks",
			soldier: `  tick = "20s"
  fallback {
    window          = "10m"
    breach_fraction = 0.2
    cost_margin     = 0.3
    short_tolerance = 0.4
    hold            = "5m"
  }
`,
			ladders:  map[string]LadderConfig{"p0": DefaultLadder(0), "p1": DefaultLadder(1), "p5": DefaultLadder(5)},
			fallback: FallbackConfig{Window: 30, BreachFraction: 0.2, CostMargin: 0.3, ShortTolerance: 0.4, Hold: 15}},
		{name: "a window of 0s turns the automatic fallback off",
			soldier:  "  fallback {\n    window = \"0s\"\n  }\n",
			ladders:  map[string]LadderConfig{"p0": DefaultLadder(0), "p1": DefaultLadder(1), "p5": DefaultLadder(5)},
			fallback: FallbackConfig{Window: 0, BreachFraction: 0.05, CostMargin: 0.10, ShortTolerance: 0.10, Hold: 180}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := guardsConfig(t, tc.soldier)
			for domain, want := range tc.ladders {
				c, err := NewConfig(cfg, domain)
				if err != nil {
					t.Fatal(err)
				}
				if c.Ladder != want {
					t.Errorf("domain %s: ladder %+v, want %+v", domain, c.Ladder, want)
				}
				if c.Fallback != tc.fallback {
					t.Errorf("domain %s: fallback %+v, want %+v", domain, c.Fallback, tc.fallback)
				}
			}
		})
	}
}

// slowCluster is a steadyCluster whose domain p99 is p99 seconds.
type slowCluster struct {
	*steadyCluster
	p99 float64
}

func (c *slowCluster) Observe(ctx context.Context, obs *Observation) error {
	if err := c.steadyCluster.Observe(ctx, obs); err != nil {
		return err
	}
	obs.P99 = c.p99
	return nil
}

func TestReloadAppliesTheLadder(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	// p99 at 1.3x the 200 ms SLO: over P0's default alert (1.2x), under 1.4x.
	high := `  ladder "p0" {
    alert  = 1.4
    freeze = 1.6
    revert = 2
  }
`
	scfg, err := NewConfig(guardsConfig(t, high), "p0")
	if err != nil {
		t.Fatal(err)
	}
	c := &slowCluster{newSteadyCluster(len(scfg.Apps)), 0.26}
	s := New(scfg, &SqrtStaffing{}, c, c, nil, nil)
	tick := func(at time.Duration) Rung {
		t.Helper()
		res, err := s.Tick(ctx, t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return res.Rung
	}
	for at := time.Duration(0); at <= time.Minute; at += 10 * time.Second {
		if r := tick(at); r != RungNone {
			t.Fatalf("at %s under alert = 1.4: rung %s, want none", at, r)
		}
	}
	// Back to the defaults (alert 1.2x sustained 15 s): the same p99 alerts
	// once it has been seen over the new threshold for 15 s.
	if err := s.Reload(guardsConfig(t, "")); err != nil {
		t.Fatal(err)
	}
	if r := tick(70 * time.Second); r != RungNone {
		t.Fatalf("first tick over the default alert threshold: rung %s, want none (not sustained)", r)
	}
	if r := tick(85 * time.Second); r != RungAlert {
		t.Fatalf("15s over the default alert threshold: rung %s, want alert", r)
	}
	// A ladder raised over the p99 keeps the rung in force until its cool-off
	// has passed below the new alert threshold.
	if err := s.Reload(guardsConfig(t, `  ladder "p0" {
    alert    = 1.4
    freeze   = 1.6
    revert   = 2
    cool_off = "30s"
  }
`)); err != nil {
		t.Fatal(err)
	}
	if r := tick(95 * time.Second); r != RungAlert {
		t.Fatalf("right after raising the ladder: rung %s, want alert (held through cool-off)", r)
	}
	if r := tick(125 * time.Second); r != RungNone {
		t.Fatalf("30s below the raised alert threshold: rung %s, want none", r)
	}
}

func TestReloadAppliesTheFallback(t *testing.T) {
	s, _ := newReloadSoldier(t, reloadConfig())
	if got, want := len(s.auto.ring), DefaultFallback(10*time.Second).Window; got != want {
		t.Fatalf("window %d ticks before reload, want %d", got, want)
	}
	cfg := reloadConfig()
	cfg.Soldier.Fallback.Window = 5 * time.Minute
	cfg.Soldier.Fallback.Hold = 2 * time.Minute
	if err := s.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if s.cfg.Fallback.Window != 30 || s.cfg.Fallback.Hold != 12 || len(s.auto.ring) != 30 {
		t.Errorf("after reload: window %d ticks (ring %d), hold %d; want 30, 30, 12", s.cfg.Fallback.Window, len(s.auto.ring), s.cfg.Fallback.Hold)
	}
	cfg = reloadConfig()
	cfg.Soldier.Fallback.Off = true
	if err := s.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	if s.cfg.Fallback.Window != 0 || len(s.auto.ring) != 0 {
		t.Errorf("after reload with the fallback off: window %d ticks (ring %d), want 0", s.cfg.Fallback.Window, len(s.auto.ring))
	}
}
