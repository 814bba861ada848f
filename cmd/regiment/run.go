package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/bus/wire"
	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/daemon"
	"github.com/regimentd/regiment/recording"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/live"
	"github.com/regimentd/regiment/soldier"
	"github.com/regimentd/regiment/store"
)

// The built-in example `regiment run` uses without flags.
const (
	defaultConfig   = "examples/tenth.hcl"
	defaultScenario = "examples/scenarios/tenth-day.hcl"
)

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", defaultConfig, "cluster config `file` (HCL)")
	scenarioPath := fs.String("scenario", defaultScenario, "scenario `file` (HCL) driving the simulated cluster")
	speed := fs.Float64("speed", 0, "simulated seconds per wall second; 0: as fast as possible")
	duration := fs.Duration("duration", 0, "override the scenario's duration, e.g. 6h")
	dataDir := fs.String("data", "data", "`dir`ectory for the episode store (regiment.db) and NATS JetStream")
	logLevel := fs.String("log-level", "warn", "log level: trace, debug, info, warn, error")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: regiment run [--config F] [--scenario F] [--speed N] [--duration D] [--data DIR]

Runs the whole system on one machine: an embedded NATS server, the Commander,
one Soldier per domain and a simulated cluster replaying the scenario's
traffic, on an accelerated clock. Directives and reports really cross NATS;
every step is recorded in DIR/regiment.db. It ends with a summary next to the
Kubernetes HPA, the perfect-foresight oracle (the limit) and static
provisioning on the same traffic. Inspect the episodes afterwards with
"regiment episodes list --data DIR".

Examples:
  regiment run                                   # a tenth of the seed-scale world, 24 h
  regiment run --duration 2h --speed 600         # two simulated hours at 600x
  regiment run --config examples/paymentscale.hcl --scenario examples/scenarios/flash-sale.hcl

Flags:
`)
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "regiment run: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "regiment", Level: hclog.LevelFromString(*logLevel), Output: stderr})
	w, err := loadWorld(*configPath, *scenarioPath)
	if err != nil {
		fmt.Fprintf(stderr, "regiment run: %v\n", err)
		if *configPath == defaultConfig {
			fmt.Fprintln(stderr, "regiment run: the built-in example is read from the repository: run from its root, or pass --config and --scenario")
		}
		return 1
	}
	if *duration > 0 {
		w.sc.Duration = *duration
	}
	sum, err := runSystem(ctx, w, *dataDir, *speed, log, newProgress(stderr))
	if err != nil {
		fmt.Fprintf(stderr, "regiment run: %v\n", err)
		return 1
	}
	printSummary(stdout, w, sum)
	return 0
}

// runSummary is what a run did.
type runSummary struct {
	metrics   sim.Metrics
	baselines []sim.Metrics // summaryBaselines on the same traffic
	episodes  int
	steps     int
	writes    int
	rejected  int
	wall      time.Duration
	dbPath    string
	stopped   bool
}

// runSystem runs the Commander and Soldiers over an embedded NATS server
// against a simulated cluster, in lockstep with the simulation's clock: each
// simulated tick, the Commander decides when its tick is due and every
// Soldier has its directive before it ticks; every report reaches the
// Commander before the simulation steps.
func runSystem(ctx context.Context, w *world, dataDir string, speed float64, log hclog.Logger, bar *progress) (runSummary, error) {
	var sum runSummary
	cfg := w.cfg
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return sum, err
	}
	s, err := w.newSim()
	if err != nil {
		return sum, err
	}
	cluster := live.New(s, cfg)

	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: filepath.Join(dataDir, "nats"), Logger: log.Named("nats")})
	if err != nil {
		return sum, fmt.Errorf("start embedded nats: %w", err)
	}
	defer srv.Shutdown()

	sum.dbPath = filepath.Join(dataDir, "regiment.db")
	st, err := store.Open(sum.dbPath, store.Options{})
	if err != nil {
		return sum, err
	}
	defer st.Close()
	app := st.NewAppender(256, time.Second)

	// Unique even for a run restarted on the same --data within the
	// millisecond: "run-20260415T093000.250Z", then "...250Z-2".
	runID, err := st.NewEpisodeID("run-", time.Now())
	if err != nil {
		return sum, err
	}
	simNow := func() time.Time {
		var t time.Time
		cluster.Sim(func(s *sim.Sim) { t = s.Now() })
		return t
	}
	recErr := func(err error) { log.Error("record step", "error", err) }

	// The Commander, on its own connection.
	cconn, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Name: "commander", Cluster: cfg.Cluster.Name, Logger: log.Named("commander")})
	if err != nil {
		return sum, err
	}
	defer cconn.Close()
	names := make([]string, len(cfg.Domains))
	for i, d := range cfg.Domains {
		names[i] = d.Name
	}
	cmdEp := recording.CommanderEpisode(runID+"-commander", cfg, cfg.Commander.Policy)
	cmdEp.Started = simNow()
	if err := st.BeginEpisode(cmdEp); err != nil {
		return sum, err
	}
	episodes := []string{cmdEp.ID}
	cpolicy, err := commander.NewPolicy(cfg)
	if err != nil {
		return sum, err
	}
	cmd := commander.New(cfg, cpolicy, cfg.Commander.Policy, cconn,
		&recording.Commander{Episode: cmdEp.ID, Domains: names, Out: app, Ledger: st.AppendLedger, Err: recErr}, uint64(time.Now().UnixNano()), 0)
	reports := newCounter(len(cfg.Domains))
	cmetrics := daemon.NewMetrics(prometheus.NewRegistry(), "commander")
	if _, err := daemon.AttachCommander(cconn, cmd, cmetrics, log.Named("commander"), func(r wire.DomainReport) {
		reports.set(cfg.Domain(r.Domain), r.Seq)
	}); err != nil {
		return sum, err
	}

	// One Soldier per domain, each on its own connection, as separate
	// processes would be.
	soldiers := make([]*soldier.Soldier, len(cfg.Domains))
	smetrics := make([]*daemon.Metrics, len(cfg.Domains))
	for i, d := range cfg.Domains {
		scfg, err := soldier.NewConfig(cfg, d.Name)
		if err != nil {
			return sum, err
		}
		conn, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Name: "soldier-" + d.Name, Cluster: cfg.Cluster.Name, Logger: log.Named("soldier").With("domain", d.Name)})
		if err != nil {
			return sum, err
		}
		defer conn.Close()
		ep := recording.SoldierEpisode(runID+"-"+d.Name, cfg, d.Name, cfg.Soldier.Policy)
		ep.Started = simNow()
		if err := st.BeginEpisode(ep); err != nil {
			return sum, err
		}
		episodes = append(episodes, ep.ID)
		view := cluster.Domain(i)
		spolicy, err := soldier.NewPolicy(cfg, scfg)
		if err != nil {
			return sum, err
		}
		soldiers[i] = soldier.New(scfg, spolicy, view, view, conn,
			&recording.Soldier{Episode: ep.ID, Out: app, Ledger: st.AppendLedger, Err: recErr})
		smetrics[i] = daemon.NewMetrics(prometheus.NewRegistry(), "soldier")
		if _, err := daemon.AttachSoldier(ctx, conn, soldiers[i], d.Name, simNow, smetrics[i], log.Named("soldier").With("domain", d.Name)); err != nil {
			return sum, err
		}
	}

	ratio := max(1, int(cfg.Commander.Tick/cfg.Soldier.Tick))
	start := time.Now()
	var seq uint64
	var wg sync.WaitGroup
	errs := make([]error, len(soldiers))
	for step := 0; !s.Done(); step++ {
		if ctx.Err() != nil {
			sum.stopped = true
			break
		}
		now := simNow()
		if step%ratio == 0 {
			t0 := time.Now()
			dec, err := cmd.Tick(ctx, now)
			cmetrics.CommanderTick(dec, err, time.Since(t0))
			if err != nil {
				return sum, fmt.Errorf("commander tick: %w", err)
			}
			if err := waitFor(ctx, func() bool {
				for _, sd := range soldiers {
					if d, ok := sd.Directive(); !ok || d.Seq < dec.Seq {
						return false
					}
				}
				return true
			}); err != nil {
				return sum, fmt.Errorf("directive %d did not reach every soldier: %w", dec.Seq, err)
			}
		}
		seq++
		for i, sd := range soldiers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				res, err := sd.Tick(ctx, now)
				smetrics[i].SoldierTick(res, err, time.Since(t0))
				if res.Switch.Reason != "" {
					log.Info("automatic fallback switched", "domain", cfg.Domains[i].Name, "at", now.Format(time.RFC3339),
						"reason", res.Switch.Reason, "detail", res.Switch.Detail)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return sum, fmt.Errorf("soldier tick: %w", err)
		}
		if err := reports.await(ctx, seq); err != nil {
			return sum, fmt.Errorf("reports of tick %d did not reach the commander: %w", seq, err)
		}
		cluster.Step()
		elapsed := time.Since(start)
		simElapsed := now.Sub(w.sc.Start) + cfg.Soldier.Tick
		if speed > 0 {
			if ahead := time.Duration(float64(simElapsed)/speed) - elapsed; ahead > 0 {
				time.Sleep(ahead)
			}
		}
		bar.update(false, "%s  %s of %s  (%.0fx real time)", w.sc.Name, simElapsed, w.sc.Duration, simElapsed.Seconds()/max(elapsed.Seconds(), 1e-9))
	}
	bar.done()
	sum.wall = time.Since(start)

	// Shutdown: Soldiers have stopped actuating; drain NATS, then the store.
	end := simNow()
	for _, id := range episodes {
		if err := st.EndEpisode(id, end); err != nil {
			return sum, err
		}
	}
	if err := app.Close(); err != nil {
		return sum, fmt.Errorf("flush steps: %w", err)
	}
	sum.episodes = len(episodes)
	stats, err := st.Stats()
	if err != nil {
		return sum, err
	}
	sum.steps = stats.Steps
	cluster.Sim(func(s *sim.Sim) { sum.metrics = s.Metrics() })
	sum.writes = cluster.Writes()
	sum.rejected = int(counterValue(cmetrics.Rejected))
	for _, m := range smetrics {
		sum.rejected += int(counterValue(m.Rejected))
	}

	// The baselines on the same traffic, for comparison.
	for _, name := range summaryBaselines {
		if sum.stopped {
			break
		}
		bar.update(true, "running the %s baseline on the same traffic", name)
		bs, err := w.newSim()
		if err != nil {
			return sum, err
		}
		p, err := w.newPolicy(name, bs)
		if err != nil {
			return sum, err
		}
		sum.baselines = append(sum.baselines, bs.Run(p))
	}
	bar.done()
	return sum, nil
}

// summaryBaselines are the policies `regiment run` compares itself with: the
// Kubernetes HPA teams run today, the oracle (perfect foresight: the limit),
// and static provisioning for the known peak.
var summaryBaselines = []string{"hpa", "oracle", "static"}

func printSummary(out io.Writer, w *world, sum runSummary) {
	m := sum.metrics
	if sum.stopped {
		fmt.Fprintf(out, "stopped after %s simulated (interrupted)\n\n", time.Duration(m.SimSeconds)*time.Second)
	}
	fmt.Fprintf(out, "cluster %s, scenario %s: %s simulated in %s (%.0fx real time)\n",
		w.cfg.Cluster.Name, w.sc.Name, time.Duration(m.SimSeconds)*time.Second, sum.wall.Round(time.Millisecond), m.SimSeconds/sum.wall.Seconds())
	fmt.Fprintf(out, "regiment: commander policy %s, soldier policy %s\n\n",
		cmp.Or(w.cfg.Commander.Policy, commander.ForecastPolicy), cmp.Or(w.cfg.Soldier.Policy, soldier.ProportionalPolicy))
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\tregiment\t")
	for i := range sum.baselines {
		fmt.Fprintf(tw, "%s\t", summaryBaselines[i])
	}
	fmt.Fprintln(tw)
	row := func(name string, cell func(m sim.Metrics) string) {
		fmt.Fprintf(tw, "%s\t%s\t", name, cell(m))
		for _, b := range sum.baselines {
			fmt.Fprintf(tw, "%s\t", cell(b))
		}
		fmt.Fprintln(tw)
	}
	row("cost (core-hours)", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.CostCoreHours) })
	row("cost", func(m sim.Metrics) string { return fmt.Sprintf("%.2f", m.Cost) })
	row("SLO compliance", func(m sim.Metrics) string { return fmt.Sprintf("%.4f", m.SLOCompliance) })
	row("breach app-minutes", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.BreachAppMinutes) })
	row("scaling actions", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.ScalingActions) })
	row("peak nodes", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.PeakNodes) })
	row("node churn", func(m sim.Metrics) string { return fmt.Sprintf("%d", m.NodeChurn) })
	row("pending pod-hours", func(m sim.Metrics) string { return fmt.Sprintf("%.1f", m.PendingPodHours) })
	tw.Flush()
	fmt.Fprintf(out, "\n%d episodes, %d steps written to %s; %d replica writes; %d messages rejected\n",
		sum.episodes, sum.steps, sum.dbPath, sum.writes, sum.rejected)
	fmt.Fprintf(out, "inspect: regiment episodes list --data %s\n", filepath.Dir(sum.dbPath))
}

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

func counterValue(v *prometheus.CounterVec) float64 {
	ch := make(chan prometheus.Metric, 16)
	go func() { v.Collect(ch); close(ch) }()
	total := 0.0
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err == nil && pb.Counter != nil {
			total += pb.Counter.GetValue()
		}
	}
	return total
}
