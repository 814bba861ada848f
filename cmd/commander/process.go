package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/daemon"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/kube"
	"github.com/regimentd/regiment/recording"
	"github.com/regimentd/regiment/store"
)

// embeddedPort is where the dev-mode NATS server listens: NATS's default
// port, where a Soldier without --nats looks. Tests change it.
var embeddedPort = 4222

// process is one Commander process: its config, connection, store and
// probes. Shutdown order: the tick loop stops, NATS drains (then the embedded
// server stops), the appender flushes, the episode ends, the store closes.
type process struct {
	daemon.Lifecycle
	opts options
	cfg  *domains.Config // in force; only the reload goroutine replaces it after start
	log  hclog.Logger
}

func newProcess(o options, cfg *domains.Config, log hclog.Logger) *process {
	return &process{Lifecycle: daemon.Lifecycle{Log: log}, opts: o, cfg: cfg, log: log}
}

// run runs the Commander until ctx ends. Each value on reload re-reads the
// config file.
func (p *process) run(ctx context.Context, reload <-chan os.Signal) (err error) {
	cfg := p.cfg
	policy, err := commander.NewPolicy(cfg)
	if err != nil {
		return err
	}
	var kc kubernetes.Interface // with --kubeconfig: leader election
	if p.opts.kubeconfig != "" {
		if kc, err = kube.Client(p.opts.kubeconfig); err != nil {
			return err
		}
	}
	start := time.Now()
	term := uint64(start.UnixNano())

	// The store first: a second Commander on the same directory fails here,
	// before it listens or connects.
	dbPath := filepath.Join(p.opts.dataDir, "commander.db")
	st, err := store.Open(dbPath, store.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Stage("store closed", st.Close())) }()
	// The episode begins once the term is known, from the bus, and ends
	// just before the store closes.
	id, err := st.NewEpisodeID("commander-"+cfg.Cluster.Name+"-", start)
	if err != nil {
		return err
	}
	ep := recording.CommanderEpisode(id, cfg, cfg.Commander.Policy)
	ep.Started = start
	var app *store.Appender
	defer func() {
		if app != nil {
			err = errors.Join(err, p.Stage("steps flushed", app.Close()))
			err = errors.Join(err, p.Stage("episode ended", st.EndEpisode(ep.ID, time.Now())))
		}
	}()
	p.log.Info("store open", "path", dbPath)

	reg := daemon.NewRegistry()
	metrics := daemon.NewMetrics(reg, "commander")
	pr, err := daemon.ServeProbes(p.opts.listen, reg, p.Ready, p.log)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Stage("http server stopped", pr.Close())) }()

	url := p.opts.natsURL
	if url == "" {
		url = cfg.NATS.URL
	}
	embedded := url == ""
	if embedded {
		srv, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: embeddedPort, StoreDir: filepath.Join(p.opts.dataDir, "nats"),
			Token: p.opts.natsToken, Logger: p.log.Named("nats")})
		if err != nil {
			return err
		}
		defer func() { srv.Shutdown(); p.log.Info("embedded nats stopped") }()
		url = srv.ClientURL()
		p.log.Info("embedded nats started", "url", url, "store_dir", filepath.Join(p.opts.dataDir, "nats"))
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	copts := bus.ConnectOptions{URL: url, Name: "commander", Cluster: cfg.Cluster.Name, Token: p.opts.natsToken,
		InboxPrefix: bus.InboxPrefix(cfg.Cluster.Name, bus.CommanderUser),
		KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }, Logger: p.log.Named("bus")}
	if !embedded {
		copts.SetAuth(cfg.NATS) // nats { token_file, nkey_seed_file, credentials, tls }; the embedded server has none
	}
	conn, err := bus.Connect(cctx, copts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, p.Stage("nats drained", conn.Drain())) }()
	p.Connected(conn)
	daemon.RegisterConn(reg, "commander", conn)
	p.log.Info("nats connected", "url", url, "cluster", cfg.Cluster.Name)

	// Sequence numbers continue from the last directive held in the KV, so
	// they grow across restarts as well as terms do. The term exceeds the
	// last one held even when this host's clock is behind the previous
	// Commander's, or Soldiers would reject its directives as replayed.
	var seq0 uint64
	for _, d := range cfg.Domains {
		last, ok, err := conn.LastDirective(cctx, d.Name)
		if err != nil {
			return fmt.Errorf("read the last directive for %s: %w", d.Name, err)
		}
		if ok {
			seq0 = max(seq0, last.Seq)
			term = max(term, last.Term+1)
		}
	}
	cancel()
	ep.Meta = map[string]string{"term": strconv.FormatUint(term, 10)}
	if err := st.BeginEpisode(ep); err != nil {
		return err
	}
	app = st.NewAppender(64, time.Second)
	p.log.Info("episode begun", "episode", ep.ID, "term", term)

	names := make([]string, len(cfg.Domains))
	for i, d := range cfg.Domains {
		names[i] = d.Name
	}
	recErr := func(err error) { p.log.Warn("record step failed", "error", err) }
	cmd := commander.New(cfg, policy, cfg.Commander.Policy, conn,
		&recording.Commander{Episode: ep.ID, Domains: names, Out: app, Ledger: st.AppendLedger, Err: recErr}, term, seq0)
	if _, err := daemon.AttachCommander(conn, cmd, metrics, p.log.Named("reports"), nil); err != nil {
		return err
	}
	// Operator share pins (regiment override), restored from the bus first.
	if _, err := daemon.AttachCommanderOverrides(ctx, conn, cmd, time.Now, p.log.Named("override")); err != nil {
		return err
	}

	defer daemon.ServeReloads(ctx, reload, func() { p.reload(cmd) })()

	var tickStart time.Time
	clock := func() time.Time {
		tickStart = time.Now()
		return tickStart
	}
	onTick := func(d commander.Decision, err error) {
		metrics.CommanderTick(d, err, time.Since(tickStart))
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Warn("tick failed", "error", err)
		case err == nil:
			p.log.Debug("tick", "seq", d.Seq, "reserve", d.Reserve, "guards", d.Guards, "reason", d.Reason)
		}
	}
	p.log.Info("commander running", "tick", cfg.Commander.Tick, "term", term, "seq", seq0, "domains", len(cfg.Domains))
	pr.Live.Store(true)
	if p.opts.kubeconfig != "" {
		err = p.lead(ctx, kc, cmd, conn, clock, onTick)
	} else {
		err = cmd.Run(ctx, clock, onTick)
	}
	pr.Live.Store(false)
	p.Stopping()
	p.log.Info("tick loop stopped", "seq", cmd.Seq())
	return err
}

// reload re-reads the config file and applies it, or keeps the running config
// and logs why.
func (p *process) reload(cmd *commander.Commander) {
	path := p.opts.configPath
	cfg, err := config.LoadFile(path)
	if err != nil {
		daemon.LogReloadRejected(p.log, path, err)
		return
	}
	if err := cmd.Reload(cfg); err != nil {
		p.log.Error("config reload rejected, keeping the running config", "path", path, "error", err)
		return
	}
	if cfg.NATS != p.cfg.NATS || cfg.Store != p.cfg.Store {
		p.log.Warn("nats and store settings apply on restart", "path", path)
	}
	p.cfg = cfg
	c := cfg.Commander
	p.log.Info("config reloaded", "path", path, "tick", c.Tick, "directive_ttl", c.DirectiveTTL, "dead_zone", c.DeadZone,
		"max_share_change", c.MaxShareChange, "reserve_min", c.ReserveMin)
}
