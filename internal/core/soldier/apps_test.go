package soldier

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// namedCluster serves every app 700 rps, keeps replicas by app name and
// observes the apps it was last given (swap), as kube.Observer does.
type namedCluster struct {
	mu       sync.Mutex
	apps     []string
	replicas map[string]int32
	writes   map[string]int
}

func (c *namedCluster) Observe(_ context.Context, obs *Observation) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(obs.Apps) != len(c.apps) {
		return errors.New("observation and cluster disagree on the apps")
	}
	for i, name := range c.apps {
		r := c.replicas[name]
		obs.Apps[i] = AppObservation{RPS: 700, P99: 0.02, CPUUtil: min(1, 700/(100*float64(max(r, 1)))), Ready: r, Replicas: r}
	}
	obs.P99 = 0.02
	return nil
}

func (c *namedCluster) Apply(_ context.Context, changes []Change) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range changes {
		c.replicas[c.apps[ch.App]] = ch.Replicas
		c.writes[c.apps[ch.App]]++
	}
	return nil
}

func (c *namedCluster) swap(cfg *domains.Config) func() error {
	return func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.apps = c.apps[:0]
		for _, a := range Apps(cfg, 0) {
			c.apps = append(c.apps, a.Name)
		}
		return nil
	}
}

// appsConfig is reloadConfig's domain web with app sets a (count a) and,
// when b, a set b of one app; apps are sized for 35% utilisation and a
// scale-down is held only by the stabiliser.
func appsConfig(a int, b bool) *domains.Config {
	cfg := reloadConfig()
	d := &cfg.Domains[0]
	d.AppSets[0].Count = a
	if b {
		s := d.AppSets[0]
		s.Name, s.Count = "b", 1
		d.AppSets = append(d.AppSets, s)
	}
	cfg.Soldier.TargetUtilisation, cfg.Soldier.ScaleDownCooldown = 0.35, time.Nanosecond
	return cfg
}

func TestReloadAppsMovesStateByName(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	cfg := appsConfig(3, false)
	scfg, _ := NewConfig(cfg, "web")
	c := &namedCluster{replicas: map[string]int32{"web/a-0": 10, "web/a-1": 10, "web/a-2": 10, "web/b": 5}, writes: map[string]int{}}
	_ = c.swap(cfg)()
	s := New(scfg, &SqrtStaffing{}, c, c, nil, nil)
	if _, err := s.Tick(ctx, t0); err != nil {
		t.Fatal(err)
	}
	if ok, why := s.OnOverride(wire.Override{Version: wire.Version, Cluster: "c", Domain: "web", App: "web/a-1", Replicas: new(30),
		IssuedAt: t0, Until: t0.Add(time.Hour), By: "alice", Reason: "test"}, t0); !ok {
		t.Fatal(why)
	}
	// a-2 goes, b comes; then the apps want less (100% utilisation).
	next := appsConfig(2, true)
	next.Soldier.TargetUtilisation = 1
	if err := s.ReloadApps(next, c.swap(next)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tick(ctx, t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	// a-0 keeps its stabilisation window (20 proposed 10 s ago): held at
	// 20. a-1 keeps its pin. b, new, is sized from what it runs: 5 -> 7.
	want := map[string]int32{"web/a-0": 20, "web/a-1": 30, "web/a-2": 20, "web/b": 7}
	for name, n := range want {
		if c.replicas[name] != n {
			t.Errorf("%s: %d replicas, want %d (all %v)", name, c.replicas[name], n, c.replicas)
		}
	}
	if c.writes["web/a-2"] != 1 {
		t.Errorf("the removed a-2 was written %d times, want once (before it went)", c.writes["web/a-2"])
	}
	if pins := s.Overrides(); len(pins) != 1 || pins[0].App != "web/a-1" {
		t.Errorf("pins %v, want a-1's", pins)
	}
}

type fixedPolicy struct{}

func (fixedPolicy) Decide(in Input, out []int32) string {
	for i := range out {
		out[i] = 1
	}
	return "fixed"
}

func TestReloadAppsRefusals(t *testing.T) {
	cfg := appsConfig(3, false)
	scfg, _ := NewConfig(cfg, "web")
	c := &namedCluster{replicas: map[string]int32{}, writes: map[string]int{}}
	_ = c.swap(cfg)()
	next := appsConfig(2, true)

	s := New(scfg, &fixedPolicy{}, c, c, nil, nil)
	called := false
	err := s.ReloadApps(next, func() error { called = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "learned policy") || called {
		t.Errorf("another policy: %v (swap called: %v), want a refusal before the swap", err, called)
	}

	s = New(scfg, &SqrtStaffing{}, c, c, nil, nil)
	if err := s.ReloadApps(next, func() error { return errors.New("namespace not watched") }); err == nil || !strings.Contains(err.Error(), "not watched") {
		t.Errorf("a failed swap: %v", err)
	}
	if len(s.cfg.Apps) != 3 || len(s.obs.Apps) != 3 || len(s.exec.current) != 3 {
		t.Errorf("a failed swap changed the apps: %d", len(s.cfg.Apps))
	}
}

// A discovering domain may start with no apps (nothing labelled yet): its
// Soldier ticks, then takes the first app found.
func TestReloadAppsFromNone(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	cfg := appsConfig(1, false)
	cfg.Domains[0].AppSets = nil
	scfg, _ := NewConfig(cfg, "web")
	c := &namedCluster{replicas: map[string]int32{"web/b": 5}, writes: map[string]int{}}
	_ = c.swap(cfg)()
	s := New(scfg, &SqrtStaffing{}, c, c, nil, nil)
	if res, err := s.Tick(ctx, t0); err != nil || res.Writes != 0 {
		t.Fatalf("tick with no apps: %+v, %v", res, err)
	}
	next := appsConfig(0, true)
	next.Domains[0].AppSets = next.Domains[0].AppSets[1:] // b only
	if err := s.ReloadApps(next, c.swap(next)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tick(ctx, t0.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if c.replicas["web/b"] != 20 {
		t.Errorf("b: %d replicas, want 20 (700 rps at 35%%)", c.replicas["web/b"])
	}
}
