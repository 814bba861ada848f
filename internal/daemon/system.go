package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/live"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/wire"
)

// System is Regiment on one machine over a simulated cluster (`regiment
// run`): an embedded NATS server, the Commander process and one Soldier
// process per domain, each on its own connection as separate processes
// would be, recording into one store, DataDir/regiment.db. The Commander
// signs its directives with a key made for the run, which the Soldiers
// require, and takes its term from the simulated clock they judge terms by.
// Run drives them in lockstep with the simulation's clock: each simulated tick, the
// Commander decides when its tick is due and every Soldier has its
// directive before it ticks; every report reaches the Commander before the
// simulation steps. Close shuts down in order: the Soldiers have stopped
// actuating, every connection drains, the episodes end, the steps flush, the
// store closes, the server stops and its JetStream directory is removed.
type System struct {
	cfg      *domains.Config
	cluster  *live.Cluster
	dataDir  string // the store's
	natsDir  string // the embedded server's JetStream, the run's own (Open)
	log      hclog.Logger
	srv      *bus.Embedded
	st       *store.Store
	steps    *store.Appender
	cmd      *CommanderProcess
	soldiers []*SoldierProcess
	episodes []string
	reports  *counter

	closeOnce sync.Once
	closeErr  error
	stats     SystemStats
}

// SystemStats is what a System recorded and rejected, complete after Close.
type SystemStats struct {
	DBPath   string // the store
	Episodes int    // the run's episodes: the Commander's and one per Soldier
	Steps    int    // the steps the run recorded
	Writes   int    // replica writes applied to the simulated cluster
	Rejected int    // messages rejected by every process
}

// NewSystem returns the system for cfg over the simulation s, storing under
// dataDir; it starts nothing.
func NewSystem(cfg *domains.Config, s *sim.Sim, dataDir string, log hclog.Logger) *System {
	cfg = cfg.WithPlanned(s.Planned()) // the events the scenario announced, for the Commander
	return &System{cfg: cfg, cluster: live.New(s, cfg), dataDir: dataDir, log: log,
		stats: SystemStats{DBPath: filepath.Join(dataDir, "regiment.db")}}
}

// Cluster is the simulated cluster the system drives.
func (y *System) Cluster() *live.Cluster { return y.cluster }

// Open starts the embedded server, opens the store and builds every process.
// On an error, Close releases what was opened.
func (y *System) Open(ctx context.Context) error {
	cfg := y.cfg
	if err := os.MkdirAll(y.dataDir, 0o755); err != nil {
		return err
	}
	var err error
	if y.st, err = store.Open(y.stats.DBPath, store.Options{}); err != nil {
		return err
	}
	// The bus's state (the last directive of each domain, the operators'
	// pins) is the run's own: a previous run's belongs to another simulated
	// day and was signed with another run's key, so its Soldiers would start
	// by rejecting it. It lives in a directory of its own, removed at Close;
	// the episodes stay in the store.
	if y.natsDir, err = os.MkdirTemp("", "regiment-run-nats-"); err != nil {
		return err
	}
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: y.natsDir, Logger: y.log.Named("nats")})
	if err != nil {
		return fmt.Errorf("start embedded nats: %w", err)
	}
	y.srv = srv
	y.steps = y.st.NewAppender(256, time.Second)
	// Unique even for a run restarted on the same data directory within the
	// millisecond: "run-20260415T093000.250Z", then "...250Z-2".
	runID, err := y.st.NewEpisodeID("run-", time.Now())
	if err != nil {
		return err
	}
	deps := func(conn *bus.Conn, episode string) Deps {
		return Deps{Conn: conn, Store: y.st, Steps: y.steps, EpisodeID: episode, Clock: y.simNow}
	}
	// The Commander signs with a key made for this run; the Soldiers
	// require it (docs/security.md#signed-directives).
	signer, err := bus.EphemeralSigner()
	if err != nil {
		return err
	}
	clog := y.log.Named("commander")
	conn, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Name: "commander", Cluster: cfg.Cluster.Name, Logger: clog, Signer: signer})
	if err != nil {
		return err
	}
	cdeps := deps(conn, runID+"-commander")
	cdeps.Pool = y.cluster // the Commander plans the simulated pool's capacity and counts its nodes (commander.NodeCounter)
	y.cmd = NewCommanderProcess(cfg, CommanderOptions{}, cdeps, clog)
	y.reports = newCounter(len(cfg.Domains))
	y.cmd.onReport = func(r wire.DomainReport) { y.reports.set(cfg.Domain(r.Domain), r.Seq) }
	if err := y.cmd.Open(ctx); err != nil {
		return err
	}
	y.episodes = append(y.episodes, y.cmd.ep.ID)
	for i, d := range cfg.Domains {
		slog := y.log.Named("soldier").With("domain", d.Name)
		conn, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Name: "soldier-" + d.Name, Cluster: cfg.Cluster.Name, Logger: slog,
			DirectiveKeys: []string{signer.PublicKey()}})
		if err != nil {
			return err
		}
		p := NewSoldierProcess(cfg, SoldierOptions{Domain: d.Name}, deps(conn, runID+"-"+d.Name), y.cluster.Domain(i), slog)
		y.soldiers = append(y.soldiers, p)
		if err := p.Open(ctx); err != nil {
			return err
		}
		y.episodes = append(y.episodes, p.ep.ID)
	}
	return nil
}

func (y *System) simNow() time.Time {
	var t time.Time
	y.cluster.Sim(func(s *sim.Sim) { t = s.Now() })
	return t
}

// Run runs the system until the scenario ends or ctx ends (stopped is then
// true), at speed simulated seconds per wall second (0: as fast as
// possible). progress, if not nil, sees the simulated time elapsed after
// every tick.
func (y *System) Run(ctx context.Context, speed float64, progress func(simElapsed time.Duration)) (stopped bool, err error) {
	cfg := y.cfg
	ratio := max(1, int(cfg.Commander.Tick/cfg.Soldier.Tick))
	start, begin := time.Now(), y.simNow()
	var seq uint64
	for step := 0; !y.done(); step++ {
		if ctx.Err() != nil {
			return true, nil
		}
		now := y.simNow()
		if step > 0 && step%ratio == 0 {
			if err := y.commanderTick(ctx, now); err != nil {
				return false, err
			}
		}
		seq++
		if err := y.soldiersTick(ctx, now); err != nil {
			return false, err
		}
		if err := y.reports.await(ctx, seq); err != nil {
			return false, fmt.Errorf("reports of tick %d did not reach the commander: %w", seq, err)
		}
		if step == 0 {
			// The Commander's first tick comes once every domain has
			// reported, as commander.Run's does.
			if err := y.commanderTick(ctx, now); err != nil {
				return false, err
			}
		}
		y.cluster.Step()
		simElapsed := now.Sub(begin) + cfg.Soldier.Tick
		if speed > 0 {
			if ahead := time.Duration(float64(simElapsed)/speed) - time.Since(start); ahead > 0 {
				time.Sleep(ahead)
			}
		}
		if progress != nil {
			progress(simElapsed)
		}
	}
	return false, nil
}

func (y *System) done() bool {
	done := false
	y.cluster.Sim(func(s *sim.Sim) { done = s.Done() })
	return done
}

// commanderTick runs the Commander's tick at now and waits until its
// directive reached every Soldier.
func (y *System) commanderTick(ctx context.Context, now time.Time) error {
	dec, err := y.cmd.Tick(ctx, now)
	if err != nil {
		return fmt.Errorf("commander tick: %w", err)
	}
	if err := waitFor(ctx, func() bool {
		for _, p := range y.soldiers {
			if seq, ok := p.Directive(); !ok || seq < dec.Seq {
				return false
			}
		}
		return true
	}); err != nil {
		return fmt.Errorf("directive %d did not reach every soldier: %w", dec.Seq, err)
	}
	return nil
}

// soldiersTick runs every Soldier's tick at now, at once.
func (y *System) soldiersTick(ctx context.Context, now time.Time) error {
	var wg sync.WaitGroup
	errs := make([]error, len(y.soldiers))
	for i, p := range y.soldiers {
		wg.Go(func() { errs[i] = p.Tick(ctx, now) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("soldier tick: %w", err)
	}
	return nil
}

// Close shuts the system down (see System) and completes Stats. It is
// idempotent.
func (y *System) Close() error {
	y.closeOnce.Do(func() {
		var errs []error
		for _, p := range y.soldiers {
			errs = append(errs, p.Close())
			y.stats.Rejected += p.Rejected()
		}
		if y.cmd != nil {
			errs = append(errs, y.cmd.Close())
			y.stats.Rejected += y.cmd.Rejected()
		}
		if y.st != nil {
			errs = append(errs, y.closeStore())
		}
		if y.srv != nil {
			y.srv.Shutdown()
		}
		if y.natsDir != "" {
			errs = append(errs, os.RemoveAll(y.natsDir))
		}
		y.stats.Writes = y.cluster.Writes()
		y.closeErr = errors.Join(errs...)
	})
	return y.closeErr
}

// closeStore ends the episodes, flushes the steps, counts the run's steps
// and closes the store.
func (y *System) closeStore() error {
	end := y.simNow()
	var err error
	for _, id := range y.episodes {
		if err = y.st.EndEpisode(id, end); err != nil {
			break
		}
	}
	if err == nil {
		if err = y.steps.Close(); err != nil {
			err = fmt.Errorf("flush steps: %w", err)
		}
	}
	y.stats.Episodes = len(y.episodes)
	for _, id := range y.episodes { // this run's, not the store's: a data directory keeps every run's
		if err != nil {
			break
		}
		var n int
		n, err = y.st.StepCount(id)
		y.stats.Steps += n
	}
	return errors.Join(err, y.st.Close())
}

// Stats is what the system recorded and rejected; complete after Close.
func (y *System) Stats() SystemStats { return y.stats }

// counter tracks the newest report sequence number per domain, and wakes
// whoever waits for one as soon as it arrives.
type counter struct {
	mu   sync.Mutex
	seq  []uint64
	wake chan struct{} // closed, and replaced, at every set
}

func newCounter(n int) *counter { return &counter{seq: make([]uint64, n), wake: make(chan struct{})} }

func (c *counter) set(i int, seq uint64) {
	if i < 0 {
		return
	}
	c.mu.Lock()
	c.seq[i] = max(c.seq[i], seq)
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
}

// atLeast reports whether every domain's report reached seq, and a channel
// closed at the next report.
func (c *counter) atLeast(seq uint64) (bool, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.seq {
		if s < seq {
			return false, c.wake
		}
	}
	return true, c.wake
}

// await waits until every domain's report reached seq, ctx ends or 10 s pass.
func (c *counter) await(ctx context.Context, seq uint64) error {
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		ok, wake := c.atLeast(seq)
		if ok {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return errors.New("timed out after 10s")
		}
	}
}

// waitFor polls cond until it holds, ctx ends or 10 s pass.
func waitFor(ctx context.Context, cond func() bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 20 * time.Microsecond; !cond(); wait = min(2*wait, time.Millisecond) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return errors.New("timed out after 10s")
		}
		time.Sleep(wait)
	}
	return nil
}
