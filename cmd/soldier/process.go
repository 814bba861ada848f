package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/daemon"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/recording"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/live"
	"github.com/regimentd/regiment/sim/trace"
	"github.com/regimentd/regiment/soldier"
	"github.com/regimentd/regiment/store"
)

// defaultNATS is where a Soldier looks without --nats or nats.url: a
// commander's embedded server.
const defaultNATS = "nats://127.0.0.1:4222"

// minSimStep is the least simulated time one tick advances the simulated
// cluster: a shorter soldier.tick runs the simulation faster than real time,
// with pod start-up and telemetry lag in simulated time.
const minSimStep = 10 * time.Second

// process is one Soldier process: its config, simulated cluster, connection,
// store and probes. Shutdown order: the tick loop stops (no more actuation),
// NATS drains, the appender flushes, the episode ends, the store closes.
type process struct {
	daemon.Lifecycle
	opts   options
	cfg    *domains.Config // in force; only the reload goroutine replaces it after start
	log    hclog.Logger
	ticked atomic.Bool
}

func newProcess(o options, cfg *domains.Config, log hclog.Logger) *process {
	return &process{Lifecycle: daemon.Lifecycle{Log: log}, opts: o, cfg: cfg, log: log}
}

// ready is /readyz's answer: "" once connected to NATS and after the first
// tick, until shutdown.
func (p *process) ready() string {
	if why := p.Ready(); why != "" {
		return why
	}
	if !p.ticked.Load() {
		return "no tick yet"
	}
	return ""
}

// newCluster builds the simulated cluster: the whole config replaying the
// scenario, stepping max(soldier tick, minSimStep) per tick.
func (p *process) newCluster() (*live.Cluster, error) {
	sc, err := config.LoadScenarioFile(p.opts.scenarioPath, p.cfg)
	if err != nil {
		return nil, err
	}
	traces, err := trace.Load(sc)
	if err != nil {
		return nil, err
	}
	simCfg := *p.cfg
	simCfg.Soldier.Tick = max(simCfg.Soldier.Tick, minSimStep)
	s, err := sim.New(&simCfg, sc, traces)
	if err != nil {
		return nil, fmt.Errorf("simulate %s: %w", p.opts.scenarioPath, err)
	}
	p.log.Info("simulated cluster ready", "scenario", sc.Name, "start", sc.Start, "duration", sc.Duration, "sim_step", simCfg.Soldier.Tick)
	return live.New(s, &simCfg), nil
}

// run runs the Soldier until ctx ends. Each value on reload re-reads the
// config file.
func (p *process) run(ctx context.Context, reload <-chan os.Signal) (err error) {
	cfg, domain := p.cfg, p.opts.domain
	scfg, err := soldier.NewConfig(cfg, domain)
	if err != nil {
		return err
	}
	policy, err := soldier.NewPolicy(cfg, scfg)
	if err != nil {
		return err
	}
	var view interface {
		soldier.Observer
		soldier.Actuator
	}
	var cluster *live.Cluster // nil on a real cluster
	meta := map[string]string{"cluster_adapter": "simulation", "scenario": p.opts.scenarioPath}
	if p.opts.kubeconfig != "" {
		ad, err := p.newKube(domain)
		if err != nil {
			return err
		}
		kctx, stop := context.WithCancel(ctx)
		var kwg sync.WaitGroup
		kwg.Go(func() { ad.Run(kctx, p.log.Named("kube")) })
		defer func() { stop(); kwg.Wait() }()
		view = &kubeView{Adapter: ad, log: p.log.Named("kube")}
		meta = map[string]string{"cluster_adapter": "kubernetes", "actuation": string(cfg.Soldier.Actuation)}
	} else {
		if cluster, err = p.newCluster(); err != nil {
			return err
		}
		view = cluster.Domain(cfg.Domain(domain))
	}
	start := time.Now()

	// The store first: a second Soldier of the domain on the same directory
	// fails here, before it listens or connects.
	dbPath := filepath.Join(p.opts.dataDir, "soldier-"+domain+".db")
	st, err := store.Open(dbPath, store.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Stage("store closed", st.Close())) }()
	id, err := st.NewEpisodeID("soldier-"+domain+"-", start)
	if err != nil {
		return err
	}
	ep := recording.SoldierEpisode(id, cfg, domain, cfg.Soldier.Policy)
	ep.Started = start
	ep.Meta = meta
	if err := st.BeginEpisode(ep); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Stage("episode ended", st.EndEpisode(ep.ID, time.Now()))) }()
	app := st.NewAppender(64, time.Second)
	defer func() { err = errors.Join(err, p.Stage("steps flushed", app.Close())) }()
	p.log.Info("store open", "path", dbPath, "episode", ep.ID)

	reg := daemon.NewRegistry()
	metrics := daemon.NewMetrics(reg, "soldier")
	pr, err := daemon.ServeProbes(p.opts.listen, reg, p.ready, p.log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Stage("http server stopped", pr.Close())) }()

	url := p.opts.natsURL
	if url == "" {
		url = cfg.NATS.URL
	}
	if url == "" {
		url = defaultNATS
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	copts := bus.ConnectOptions{URL: url, Name: "soldier-" + domain, Cluster: cfg.Cluster.Name, Token: p.opts.natsToken,
		InboxPrefix: bus.InboxPrefix(cfg.Cluster.Name, bus.SoldierUser(domain)),
		KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }, Logger: p.log.Named("bus")}
	copts.SetAuth(cfg.NATS) // nats { token_file, nkey_seed_file, credentials, tls }; --nats-token wins
	conn, err := bus.Connect(cctx, copts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Stage("nats drained", conn.Drain())) }()
	p.Connected(conn)
	daemon.RegisterConn(reg, "soldier", conn)
	p.log.Info("nats connected", "url", url, "cluster", cfg.Cluster.Name)

	recErr := func(err error) { p.log.Warn("record step failed", "error", err) }
	sd := soldier.New(scfg, policy, view, view, conn,
		&recording.Soldier{Episode: ep.ID, Out: app, Ledger: st.AppendLedger, Err: recErr})
	if _, err := daemon.AttachSoldier(cctx, conn, sd, domain, time.Now, metrics, p.log); err != nil {
		return err
	}
	// Operator replica pins (regiment override), restored from the bus first.
	if _, err := daemon.AttachSoldierOverrides(cctx, conn, sd, domain, time.Now, p.log.Named("override")); err != nil {
		return err
	}
	cancel()

	defer daemon.ServeReloads(ctx, reload, func() { p.reload(sd) })()

	var tickStart time.Time
	clock := func() time.Time {
		tickStart = time.Now()
		return tickStart
	}
	ended := false
	onTick := func(res soldier.TickResult, err error) {
		metrics.SoldierTick(res, err, time.Since(tickStart))
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Warn("tick failed", "error", err)
		case err == nil:
			p.log.Debug("tick", "writes", res.Writes, "guards", res.Guards, "fallback", res.Fallback, "budget_cores", res.Report.BudgetCores)
		}
		if res.Switch.Reason != "" {
			p.log.Info("automatic fallback switched", "reason", res.Switch.Reason, "detail", res.Switch.Detail)
		}
		p.ticked.Store(true)
		if cluster == nil {
			return // a real cluster advances on its own
		}
		// The simulation advances after the Soldier acted, as the cluster
		// would between two ticks.
		done := false
		cluster.Sim(func(s *sim.Sim) { done = s.Done() })
		if done {
			if !ended {
				ended = true
				p.log.Info("scenario ended, the simulated cluster holds its last state")
			}
			return
		}
		cluster.Step()
	}
	p.log.Info("soldier running", "tick", cfg.Soldier.Tick, "mode", scfg.Soldier.Mode, "apps", len(scfg.Apps))
	pr.Live.Store(true)
	err = sd.Run(ctx, clock, onTick)
	pr.Live.Store(false)
	p.Stopping()
	p.log.Info("stopped actuating")
	return err
}

// reload re-reads the config file and applies it, or keeps the running config
// and logs why.
func (p *process) reload(sd *soldier.Soldier) {
	path := p.opts.configPath
	cfg, err := config.LoadFile(path)
	if err != nil {
		daemon.LogReloadRejected(p.log, path, err)
		return
	}
	if why := shapeChange(p.cfg, cfg); why != "" {
		p.log.Error("config reload rejected, keeping the running config", "path", path, "error", why+": restart to apply")
		return
	}
	if err := sd.Reload(cfg); err != nil {
		p.log.Error("config reload rejected, keeping the running config", "path", path, "error", err)
		return
	}
	if cfg.NATS != p.cfg.NATS || cfg.Store != p.cfg.Store {
		p.log.Warn("nats and store settings apply on restart", "path", path)
	}
	p.cfg = cfg
	s := cfg.Soldier
	p.log.Info("config reloaded", "path", path, "tick", s.Tick, "mode", s.Mode, "target_utilisation", s.TargetUtilisation,
		"overage_cap", s.OverageCap, "scale_down_cooldown", s.ScaleDownCooldown, "error_rate_veto", s.ErrorRateVeto,
		"max_writes_per_tick", s.MaxWritesPerTick)
}

// shapeChange says what in next differs from cur that the simulated cluster,
// built once from the whole config, cannot take without a restart; "" if
// nothing.
func shapeChange(cur, next *domains.Config) string {
	switch {
	case next.Cluster != cur.Cluster:
		return "the cluster block changed"
	case !slices.EqualFunc(next.Domains, cur.Domains, func(a, b domains.Domain) bool { return a.Name == b.Name }):
		return "the set of domains changed"
	case !slices.EqualFunc(next.Apps(), cur.Apps(), func(a, b domains.App) bool { return a.Name == b.Name }):
		return "the set of apps changed"
	}
	return ""
}
