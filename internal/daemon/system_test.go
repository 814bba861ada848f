package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
	"github.com/regimentd/regiment/wire"
)

// TestSystemSignsWithARunKeyOnTheSimulatedClock: regiment run's system
// signs every directive with a key made for the run, which its Soldiers
// require (an unsigned directive on its server is refused and counted as
// unsigned), and its Commander's term comes from the simulated clock the
// Soldiers judge terms by, not from the wall clock.
func TestSystemSignsWithARunKeyOnTheSimulatedClock(t *testing.T) {
	// small.hcl's Commander ticks every minute: three of its ticks.
	cfg, s := simtest.WorldFor(t, "../../examples/small.hcl", "../../cmd/regiment/testdata/small-sample.hcl", 3*time.Minute)
	y := NewSystem(cfg, s, t.TempDir(), hclog.NewNullLogger())
	defer y.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	begin := y.simNow()
	if err := y.Open(ctx); err != nil {
		t.Fatal(err)
	}
	if want := commander.FirstTerm(begin); y.cmd.term != want {
		t.Fatalf("term %d, want %d: the simulated clock's (%s)", y.cmd.term, want, begin)
	}
	if stopped, err := y.Run(ctx, 0, nil); err != nil || stopped {
		t.Fatalf("Run: stopped %v, %v", stopped, err)
	}
	for _, p := range y.soldiers {
		if n := p.Rejected(); n != 0 {
			t.Fatalf("soldier %s rejected %d of the system's own messages", p.opts.Domain, n)
		}
	}
	// The Commander asked the simulated pool for its capacity plan once the
	// Soldiers had reported (capacity_plan defaults to "forecast").
	var target float64
	y.Cluster().Sim(func(s *sim.Sim) { target = s.CapacityTarget() })
	if target <= 0 {
		t.Fatalf("the simulated pool has no capacity target after three Commander ticks: its plan did not reach it")
	}

	plain := connectTest(t, y.srv.ClientURL(), "commander", cfg)
	last, ok, err := plain.LastDirective(ctx, "payment")
	if err != nil || !ok {
		t.Fatalf("last directive: %v, %v", ok, err)
	}
	if last.Sig == "" || last.Signer == "" || last.Term != y.cmd.term {
		t.Fatalf("last directive %+v: want one signed, of term %d", last, y.cmd.term)
	}
	// The leader's gauges hold its last tick: payment's budget is its last
	// directive's cores, the plan the one the pool was asked for; the
	// payment Soldier exports its SLO.
	cg := gathered(t, y.cmd.reg)
	if got := cg["regiment_commander_domain_budget_cores{domain=payment}"]; got != last.Cores {
		t.Errorf("budget gauge %g cores, the last directive %g", got, last.Cores)
	}
	if got := cg["regiment_commander_capacity_target_cores{}"]; got != target {
		t.Errorf("capacity plan gauge %g cores, the pool was asked for %g", got, target)
	}
	slo := cfg.Domains[cfg.Domain("payment")].SLO.LatencyP99Seconds()
	if got := gathered(t, y.soldiers[cfg.Domain("payment")].reg)["regiment_soldier_slo_p99_seconds{domain=payment}"]; got != slo {
		t.Errorf("SLO gauge %g s, want payment's %g", got, slo)
	}

	// The same directive, newer, from a connection without the run's key.
	forged := last
	forged.Seq, forged.IssuedAt, forged.Sig, forged.Signer = last.Seq+1, y.simNow(), "", ""
	if err := plain.PublishDirective(ctx, forged); err != nil {
		t.Fatal(err)
	}
	payment := y.soldiers[cfg.Domain("payment")]
	key := "regiment_soldier_rejected_messages_total{reason=" + wire.RejectUnsigned + "}"
	deadline := time.Now().Add(10 * time.Second)
	for gathered(t, payment.reg)[key] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the unsigned directive was not rejected as unsigned: %v", gathered(t, payment.reg))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if seq, _ := payment.Directive(); seq != last.Seq {
		t.Fatalf("the soldier follows seq %d, want the signed %d", seq, last.Seq)
	}
}

// TestCommanderProcessResumesOnlyFromATermOfSomeClock: a Commander process
// continues the seq and term of the last directive the bus holds, unless
// that term is past any clock (a forged or corrupt directive), which it
// ignores rather than push every later term past what Soldiers accept.
func TestCommanderProcessResumesOnlyFromATermOfSomeClock(t *testing.T) {
	cfg, err := config.LoadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	now := time.Now().UTC()
	clock := func() time.Time { return now }
	plain := connectTest(t, srv.ClientURL(), "previous", cfg)
	hold := func(domain string, term, seq uint64) {
		t.Helper()
		d := wire.Directive{Version: wire.Version, Cluster: cfg.Cluster.Name, Domain: domain, Term: term, Seq: seq, IssuedAt: now,
			TTL: wire.Duration(cfg.Commander.DirectiveTTL), Share: 0.5, Cores: 0.5 * cfg.Cluster.CapacityCores, Policy: "test", Reason: "held"}
		if err := plain.PublishDirective(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	open := func() *CommanderProcess {
		t.Helper()
		p := NewCommanderProcess(cfg, CommanderOptions{NATSURL: srv.ClientURL(), DataDir: t.TempDir()}, Deps{Clock: clock}, hclog.NewNullLogger())
		t.Cleanup(func() { p.Close() })
		if err := p.Open(ctx); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// A previous Commander whose clock ran a second ahead: its term + 1.
	ahead := commander.FirstTerm(now.Add(time.Second))
	hold("payment", ahead, 40)
	if p := open(); p.term != ahead+1 || p.seq0 != 40 {
		t.Fatalf("after a held term %d seq 40: term %d seq %d, want %d and 40", ahead, p.term, p.seq0, ahead+1)
	}
	// A term no clock gives (issue 16's 2^63) is ignored, with its seq.
	hold("merchant", 1<<63, 1000)
	hold("payment", commander.FirstTerm(now)-1, 41)
	if p := open(); p.term != commander.FirstTerm(now) || p.seq0 != 41 {
		t.Fatalf("after a held term of 2^63: term %d seq %d, want %d and 41", p.term, p.seq0, commander.FirstTerm(now))
	}
}

// TestReloadWhileRunning: a SIGHUP's Reload runs on its own goroutine while
// the Commander process runs, and replaces the config Run reads (under
// cfgMu: go test -race can flag an unguarded read, depending on which
// goroutine takes the Commander's lock first). Run ends cleanly and the
// reloaded file is in force.
func TestReloadWhileRunning(t *testing.T) {
	path := filepath.Join(t.TempDir(), "regiment.hcl")
	src, err := os.ReadFile("../../examples/tenth.hcl") // no checkpoint path to resolve
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := NewCommanderProcess(cfg, CommanderOptions{ConfigPath: path, NATSURL: srv.ClientURL(), DataDir: t.TempDir()}, Deps{}, hclog.NewNullLogger())
	defer p.Close()
	if err := p.Open(ctx); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()
	for range 3 {
		p.Reload()
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := p.config(); got == cfg {
		t.Fatal("Reload kept the config it started with")
	}
}

// TestSystemRunAgainOnItsDataStartsClean: a second run on the same data
// directory keeps the first's episodes but not its bus state, whose last
// directives were signed with the first run's key: its Soldiers reject
// nothing, it counts its own steps, not the store's, and each run removes
// its JetStream directory at Close.
func TestSystemRunAgainOnItsDataStartsClean(t *testing.T) {
	dir := t.TempDir()
	var episodes []int
	steps := 0
	for run := range 2 {
		cfg, s := simtest.WorldFor(t, "../../examples/small.hcl", "../../cmd/regiment/testdata/small-sample.hcl", 2*time.Minute)
		y := NewSystem(cfg, s, dir, hclog.NewNullLogger())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := y.Open(ctx); err != nil {
			t.Fatal(err)
		}
		if stopped, err := y.Run(ctx, 0, nil); err != nil || stopped {
			t.Fatalf("run %d: stopped %v, %v", run, stopped, err)
		}
		cancel()
		natsDir := y.natsDir
		if err := y.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(natsDir); !os.IsNotExist(err) {
			t.Errorf("run %d left its JetStream directory %s: %v", run, natsDir, err)
		}
		stats := y.Stats()
		if stats.Rejected != 0 {
			t.Fatalf("run %d rejected %d messages", run, stats.Rejected)
		}
		if run == 0 {
			steps = stats.Steps
		} else if stats.Steps != steps {
			t.Errorf("the second run counts %d steps, the first %d: it should count its own", stats.Steps, steps)
		}
		st, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		eps, err := st.Episodes()
		st.Close()
		if err != nil {
			t.Fatal(err)
		}
		episodes = append(episodes, len(eps))
	}
	if episodes[1] != 2*episodes[0] {
		t.Errorf("episodes in the store after each run %v: want the second run's added to the first's", episodes)
	}
}

// TestSystemPlansTheScenariosAnnouncedEvents: regiment run's Commander
// plans for the events its scenario announced: three minutes into the small
// sample with a sale announced for 20 min (its lead open since -10 min, its
// ramp done), the pool holds payment's cores x 3 on top of what the same
// run without the announcement asks.
func TestSystemPlansTheScenariosAnnouncedEvents(t *testing.T) {
	plan := func(announced string) float64 {
		cfg, s := simtest.WorldFor(t, "../../examples/small.hcl",
			simtest.AnnouncedSale(t, "../../cmd/regiment/testdata/small-sample.hcl", announced), 3*time.Minute)
		y := NewSystem(cfg, s, t.TempDir(), hclog.NewNullLogger())
		defer y.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := y.Open(ctx); err != nil {
			t.Fatal(err)
		}
		if stopped, err := y.Run(ctx, 0, nil); err != nil || stopped {
			t.Fatalf("Run: stopped %v, %v", stopped, err)
		}
		var target float64
		y.Cluster().Sim(func(s *sim.Sim) { target = s.CapacityTarget() })
		return target
	}
	if without, with := plan(""), plan("20m"); without <= 0 || with < 1.3*without {
		t.Fatalf("capacity plan after 3 min: %.0f cores with the sale announced, %.0f without; want at least 1.3x", with, without)
	}
}
