package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// overrideConfig is a two-domain cluster with two apps in payment.
func overrideConfig() *domains.Config {
	mk := func(name string, prio int) domains.Domain {
		return domains.Domain{Name: name, Priority: prio, Floor: 0.1, Ceiling: 0.6, Weight: 1,
			SLO:     domains.SLO{LatencyP99: 200 * time.Millisecond, ErrorBudget: 0.001},
			AppSets: []domains.AppSet{{Name: "web", Count: 2, CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 50, ServiceTime: 10 * time.Millisecond}}}
	}
	cfg := &domains.Config{Cluster: domains.Cluster{Name: "prod", CapacityCores: 100},
		Domains: []domains.Domain{mk("payment", 0), mk("fraud", 1)}}
	cfg.Defaults()
	return cfg
}

func connectTest(t *testing.T, url, name string, cfg *domains.Config) *bus.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := bus.Connect(ctx, bus.ConnectOptions{URL: url, Name: name, Cluster: cfg.Cluster.Name,
		KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

type nopObserver struct{}

func (nopObserver) Observe(context.Context, *soldier.Observation) error { return nil }
func (nopObserver) Apply(context.Context, []soldier.Change) error       { return nil }

type nopPublisher struct{}

func (nopPublisher) PublishDirective(context.Context, wire.Directive) error   { return nil }
func (nopPublisher) PublishAllocation(context.Context, wire.Allocation) error { return nil }

// TestRestartedDaemonsHonourStoredPins: pins taken by a Soldier and a
// Commander are kept in the bus; a restarted Soldier and Commander restore
// the unexpired ones and only their own kind.
func TestRestartedDaemonsHonourStoredPins(t *testing.T) {
	e, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	cfg := overrideConfig()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log := hclog.NewNullLogger()
	now := time.Now().UTC()
	clock := func() time.Time { return now }

	startSoldier := func(name string) *soldier.Soldier {
		conn := connectTest(t, e.ClientURL(), name, cfg)
		scfg, err := soldier.NewConfig(cfg, "payment")
		if err != nil {
			t.Fatal(err)
		}
		sd := soldier.New(scfg, &soldier.SqrtStaffing{}, nopObserver{}, nopObserver{}, nil, nil)
		if _, err := AttachSoldierOverrides(ctx, conn, sd, "payment", clock, log); err != nil {
			t.Fatal(err)
		}
		if err := conn.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return sd
	}
	startCommander := func(name string) *commander.Commander {
		conn := connectTest(t, e.ClientURL(), name, cfg)
		c := commander.New(cfg, &commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", nopPublisher{}, nil, 1, 0)
		if _, err := AttachCommanderOverrides(ctx, conn, c, clock, log); err != nil {
			t.Fatal(err)
		}
		if err := conn.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	startSoldier("soldier-1")
	startCommander("commander-1")
	operator := connectTest(t, e.ClientURL(), "operator", cfg)

	n, share := 7, 0.4
	pins := []wire.Override{
		{Version: wire.Version, Cluster: "prod", Domain: "payment", App: "payment/web-0", Replicas: &n, IssuedAt: now, Until: now.Add(time.Hour), By: "alice"},
		{Version: wire.Version, Cluster: "prod", Domain: "payment", App: "payment/web-1", Replicas: &n, IssuedAt: now, Until: now.Add(time.Minute), By: "alice"},
		{Version: wire.Version, Cluster: "prod", Domain: "payment", Share: &share, IssuedAt: now, Until: now.Add(time.Hour), By: "bob"},
	}
	for _, o := range pins {
		a, err := operator.RequestOverride(ctx, o)
		if err != nil || !a.Accepted {
			t.Fatalf("%s: %+v, %v", o.Target(), a, err)
		}
		if want := map[bool]string{true: "commander", false: "soldier"}[o.ForCommander()]; a.From != want {
			t.Fatalf("%s answered by %s, want %s", o.Target(), a.From, want)
		}
	}

	// Two minutes on, both daemons restart: web-1's pin has lapsed.
	now = now.Add(2 * time.Minute)
	sd := startSoldier("soldier-2")
	if got := sd.Overrides(); len(got) != 1 || got[0].App != "payment/web-0" {
		t.Fatalf("restarted Soldier holds %+v, want only payment/web-0's pin", got)
	}
	c := startCommander("commander-2")
	if got := c.Overrides(); len(got) != 1 || got[0].Domain != "payment" || *got[0].Share != 0.4 {
		t.Fatalf("restarted Commander holds %+v, want payment's share pin", got)
	}
}
