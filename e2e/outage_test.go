package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/live"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/wire"
)

// TestNATSOutageFiveMinutes is the outage literally: the nats-server
// is down for 5 minutes of the cluster's clock, with the shipped timing of
// examples/small.hcl (Commander tick 60 s, directive TTL 3 min, Soldier tick
// 10 s). The daemons' own clock is the wall clock, so this test runs their
// parts in one process, as `regiment run` does, in lockstep on the simulated
// cluster's clock: the Commander, the five Soldiers and their bus.Conns, each
// connection its own client of a real nats-server, the Soldiers attached
// with daemon.AttachSoldier, their steps recorded in a real bbolt file.
//
// 10 simulated minutes run before the outage and 10 after. The clients'
// reconnect backoff is wall-clock: the test waits for every connection to
// be back with the simulated clock stopped at the end of the outage. It pins
// the same rules as TestNATSOutage, for every domain: the last directive's
// budget holds until it expires (2-3 minutes into the outage), then fallback
// until the server returns; no replica target below an app's minimum; the
// first directive after the outage (a newer seq) is accepted at once and
// ends the fallback. A step may still be on the baseline while a directive
// is in force when the rollback ladder or the automatic fallback put it
// there (guardFallback); that is not the outage's doing.
func TestNATSOutageFiveMinutes(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test with a real nats-server; skipped with -short")
	}
	const (
		cfgPath = "../examples/small.hcl"
		lead    = 10 * time.Minute // before the outage
		outage  = 5 * time.Minute
		tail    = 10 * time.Minute // after it
	)
	t0 := time.Now()
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile(scenarioPath(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	cluster := live.New(s, cfg)
	simNow := func() time.Time {
		var now time.Time
		cluster.Sim(func(s *sim.Sim) { now = s.Now() })
		return now
	}

	natsDir := filepath.Join(t.TempDir(), "nats")
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: natsDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown() })
	url, port := srv.ClientURL(), srv.Port()
	var conns []*bus.Conn
	connect := func(name string) *bus.Conn {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		c, err := bus.Connect(ctx, bus.ConnectOptions{URL: url, Name: name, Cluster: cfg.Cluster.Name,
			KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		conns = append(conns, c)
		return c
	}
	dbPath := filepath.Join(t.TempDir(), "outage.db")
	st, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	app := st.NewAppender(64, 0)
	null := hclog.NewNullLogger()

	cpol, err := commander.NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cconn := connect("commander")
	// The term comes from the clock the Soldiers judge it by (the simulated
	// one), as in regiment run: they refuse a term past their clock.
	cmd := commander.New(cfg, cpol, cfg.Commander.Policy, cconn, nil, commander.FirstTerm(simNow()), 0)
	if _, err := daemon.AttachCommander(cconn, cmd, daemon.NewMetrics(prometheus.NewRegistry(), "commander"), null, nil); err != nil {
		t.Fatal(err)
	}
	soldiers := make([]*soldier.Soldier, len(cfg.Domains))
	episodes := make([]string, len(cfg.Domains))
	for i, d := range cfg.Domains {
		scfg, err := soldier.NewConfig(cfg, d.Name)
		if err != nil {
			t.Fatal(err)
		}
		spol, err := soldier.NewPolicy(cfg, scfg)
		if err != nil {
			t.Fatal(err)
		}
		conn := connect("soldier-" + d.Name)
		ep := recording.SoldierEpisode("outage-"+d.Name, cfg, d.Name, cfg.Soldier.Policy)
		ep.Started = simNow()
		if err := st.BeginEpisode(ep); err != nil {
			t.Fatal(err)
		}
		episodes[i] = ep.ID
		view := cluster.Domain(i)
		soldiers[i] = soldier.New(scfg, spol, view, view, conn,
			&recording.Soldier{Episode: ep.ID, Out: app, Ledger: st.AppendLedger, Err: func(err error) { t.Error(err) }})
		if _, err := daemon.AttachSoldier(t.Context(), conn, soldiers[i], d.Name, simNow,
			daemon.NewMetrics(prometheus.NewRegistry(), "soldier"), null); err != nil {
			t.Fatal(err)
		}
	}

	connected := func(want bool) func() (bool, string) {
		return func() (bool, string) {
			n := 0
			for _, c := range conns {
				if c.Connected() == want {
					n++
				}
			}
			return n == len(conns), fmt.Sprintf("%d of %d connections connected=%v", n, len(conns), want)
		}
	}
	start := simNow()
	down, up, end := start.Add(lead), start.Add(lead+outage), start.Add(lead+outage+tail)
	ratio := int(cfg.Commander.Tick / cfg.Soldier.Tick)
	before := make([]wire.Directive, len(soldiers)) // in force when the server went away
	var after uint64                                // seq of the first directive after the outage
	var reconnect time.Duration
	failed, isDown := 0, false
	commanderTick := func(now time.Time) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		dec, err := cmd.Tick(ctx, now)
		cancel()
		switch {
		case isDown && err == nil:
			t.Fatalf("commander tick at %s succeeded with the server down", now.Sub(start))
		case isDown:
			failed++ // it cannot store the directive
		case err != nil:
			t.Fatalf("commander tick at %s: %v", now.Sub(start), err)
		default:
			if after == 0 && now.After(down) {
				after = dec.Seq
			}
			waitFor(t, 10*time.Second, fmt.Sprintf("directive %d reaches every soldier", dec.Seq), func() (bool, string) {
				for i, sd := range soldiers {
					if d, ok := sd.Directive(); !ok || d.Seq != dec.Seq {
						return false, fmt.Sprintf("%s holds seq %d", cfg.Domains[i].Name, d.Seq)
					}
				}
				return true, ""
			})
		}
	}
	for step := 0; ; step++ {
		now := simNow()
		if !now.Before(end) {
			break
		}
		if !isDown && after == 0 && !now.Before(down) {
			for i, sd := range soldiers {
				before[i], _ = sd.Directive()
			}
			srv.Shutdown()
			isDown = true
			waitFor(t, 10*time.Second, "every client sees the server gone", connected(false))
		}
		if isDown && !now.Before(up) {
			t1 := time.Now()
			if srv, err = bus.StartEmbedded(bus.EmbeddedOptions{Port: port, StoreDir: natsDir}); err != nil {
				t.Fatalf("restart nats on port %d: %v", port, err)
			}
			t.Cleanup(func() { srv.Shutdown() })
			isDown = false
			waitFor(t, 30*time.Second, "every client reconnects", connected(true))
			reconnect = time.Since(t1)
		}
		if step > 0 && step%ratio == 0 {
			commanderTick(now)
		}
		for i, sd := range soldiers {
			if _, err := sd.Tick(t.Context(), now); err != nil {
				t.Fatalf("%s tick at %s (server down %v): %v", cfg.Domains[i].Name, now.Sub(start), isDown, err)
			}
		}
		if step == 0 { // the first tick comes on every domain's report, as commander.Run's
			waitFor(t, 10*time.Second, "every soldier's first report reaches the commander", func() (bool, string) {
				n, _ := cmd.Builder().Reports()
				return n == len(cfg.Domains), fmt.Sprintf("%d of %d domains reported", n, len(cfg.Domains))
			})
			commanderTick(now)
		}
		cluster.Step()
	}
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s simulated (%s down) in %s; %d commander ticks failed during the outage; clients back %s after the server",
		end.Sub(start), outage, time.Since(t0).Round(time.Millisecond), failed, reconnect.Round(time.Millisecond))
	if failed != int(outage/cfg.Commander.Tick) {
		t.Errorf("%d commander ticks failed, want the %d of the outage", failed, outage/cfg.Commander.Tick)
	}

	for i, dom := range cfg.Domains {
		d := before[i]
		if d.Seq == 0 || after <= d.Seq {
			t.Fatalf("%s: directive seq %d before the outage, %d after: want one before and a later one after", dom.Name, d.Seq, after)
		}
		var steps []store.Step
		if err := st.Steps(episodes[i], time.Time{}, time.Time{}, func(s store.Step) error {
			steps = append(steps, s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		checkMinReplicas(t, cfgPath, dom.Name, steps)
		expiry := d.Expires()
		kept, fell, back, guarded := 0, 0, 0, 0
		for _, s := range steps {
			fb, budget := s.Outcome["fallback"], s.Action["budget_cores"]
			if guardFallback(s) {
				guarded++
			}
			switch {
			case s.At.Before(down):
			case !s.At.After(expiry):
				kept++
				if budget != d.Cores || fb != 0 && !guardFallback(s) {
					t.Errorf("%s at %s, the last directive in force until %s: fallback %v, budget %v, want 0 and %v",
						dom.Name, s.At.Sub(start), expiry.Sub(start), fb, budget, d.Cores)
				}
			case s.At.Before(up):
				fell++
				if fb != 1 || budget != 0 {
					t.Errorf("%s at %s, after the last directive expired at %s: fallback %v, budget %v, want 1 and none",
						dom.Name, s.At.Sub(start), expiry.Sub(start), fb, budget)
				}
			default:
				back++
				if budget <= 0 || fb != 0 && !guardFallback(s) {
					t.Errorf("%s at %s, after the outage: fallback %v, budget %v, want 0 and a budget", dom.Name, s.At.Sub(start), fb, budget)
				}
			}
		}
		if kept < int(2*time.Minute/cfg.Soldier.Tick) || fell < int(2*time.Minute/cfg.Soldier.Tick) || back != int(tail/cfg.Soldier.Tick) {
			t.Errorf("%s: %d steps on the last directive, %d in fallback, %d after: want at least 12, at least 12, and %d",
				dom.Name, kept, fell, back, tail/cfg.Soldier.Tick)
		}
		t.Logf("%s: seq %d held %s into the outage (%d steps), fallback for %s (%d steps), then seq %d; %d of %d steps on the baseline by the ladder or the automatic fallback",
			dom.Name, d.Seq, expiry.Sub(down), kept, up.Sub(expiry), fell, after, guarded, len(steps))
	}
}
