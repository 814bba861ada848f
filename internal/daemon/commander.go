package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// DefaultEmbeddedPort is where a Commander without a NATS URL serves its
// embedded server: NATS's default port, where a Soldier without one looks.
const DefaultEmbeddedPort = 4222

// CommanderOptions are a Commander process's settings besides its config:
// the commander daemon's flags.
type CommanderOptions struct {
	ConfigPath string // the file Reload re-reads
	NATSURL    string // "": nats.url of the config, else an embedded server
	NATSToken  string // instead of the config's nats authentication
	Kubeconfig string // a file, or "in-cluster": publish only while leading; "": always
	DataDir    string // commander.db and, in dev mode, the embedded server's JetStream (nats/)
	Listen     string // address for /metrics, /healthz and /readyz; "": none
	// HTTPTokenFile holds the bearer token /metrics and /store require
	// (HTTPOptions.Token); "": none.
	HTTPTokenFile string
	// EmbeddedPort is the dev-mode server's port; 0: DefaultEmbeddedPort.
	EmbeddedPort int
}

// Deps are a process's dependencies that its caller may provide instead of
// the process opening its own: `regiment run` gives every process a
// connection to its embedded server, one store and the simulation's clock.
// A given Conn is drained at Close; a given Store and Steps are the caller's
// to flush and close.
type Deps struct {
	Conn      *bus.Conn
	Store     *store.Store
	Steps     *store.Appender // with Store: where steps go
	EpisodeID string          // with Store: the episode to begin
	// Clock is the time of a tick and of the episode's start; default
	// time.Now.
	Clock func() time.Time
	// Pool, for a Commander, is the node pool it asks for its capacity
	// plan (commander.Pool); nil: none, the plan is only published.
	Pool commander.Pool
}

// CommanderProcess is one Commander process: its config, store, connection,
// probes and the CommanderProcess core. New starts nothing; Run ticks until its
// context ends; Close shuts down in order: the tick loop has stopped, NATS
// drains (then the embedded server stops), the probes stop, the steps flush,
// the episode ends, the store closes.
type CommanderProcess struct {
	Lifecycle
	opts    CommanderOptions
	deps    Deps
	cfg     *domains.Config // in force; only Reload replaces it after start, under cfgMu
	cfgMu   sync.Mutex      // guards cfg against Reload while Run reads it
	log     hclog.Logger
	reg     *prometheus.Registry
	metrics *Metrics
	kube    kubernetes.Interface // with Kubeconfig: leader election
	probes  *Probes
	conn    *bus.Conn
	st      *store.Store
	ep      store.Episode
	steps   *store.Appender
	cmd     *commander.Commander
	term    uint64 // at start
	seq0    uint64
	// onReport, if set before Open, sees every report accepted.
	onReport func(wire.DomainReport)
}

// NewCommanderProcess returns the Commander process of cfg with o's settings and the
// dependencies in d; it starts nothing.
func NewCommanderProcess(cfg *domains.Config, o CommanderOptions, d Deps, log hclog.Logger) *CommanderProcess {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if o.EmbeddedPort == 0 {
		o.EmbeddedPort = DefaultEmbeddedPort
	}
	reg := NewRegistry()
	return &CommanderProcess{Lifecycle: Lifecycle{Log: log, rec: newRecordHealth(reg, "commander", log.Named("record"))}, opts: o, deps: d, cfg: cfg, log: log, reg: reg, metrics: NewMetrics(reg, "commander")}
}

// Open builds the process: its policy, store, probes, NATS connection (or
// embedded server), episode and the Commander, attached to the reports and
// to the operator's share pins. On an error, Close releases what was opened.
func (p *CommanderProcess) Open(ctx context.Context) error {
	cfg := p.cfg
	policy, err := commander.NewPolicy(cfg)
	if err != nil {
		return err
	}
	if p.opts.Kubeconfig != "" {
		if p.kube, err = kube.Client(p.opts.Kubeconfig, cfg.Kubernetes); err != nil {
			return err
		}
	}
	// The term comes from the process's clock: a Soldier refuses one past
	// its own clock (regiment run's Soldiers judge by the simulated one).
	start := p.deps.Clock()
	term := commander.FirstTerm(start)
	// The store first: a second Commander on the same directory fails here,
	// before it listens or connects.
	if err := p.openStore(start); err != nil {
		return err
	}
	if p.probes, err = p.Lifecycle.serveHTTP(p.opts.Listen, p.opts.HTTPTokenFile, p.st, p.deps.Store == nil, p.reg, p.Ready); err != nil {
		return err
	}
	if err := p.dial(ctx); err != nil {
		return err
	}
	// Only the Commander's credential may create the buckets; Soldiers bind.
	if err := p.ensureBuckets(ctx); err != nil {
		return err
	}
	if p.term, p.seq0, err = p.resume(ctx, start, term); err != nil {
		return err
	}
	steps, err := p.beginEpisode(start, p.term)
	if err != nil {
		return err
	}
	p.cmd = commander.New(cfg, policy, cfg.Commander.Policy, p.conn,
		&recording.Commander{Episode: p.ep.ID, Domains: cfg.DomainNames(), Out: p.rec.follow(steps, p.deps.Store == nil), Ledger: p.st.AppendLedger, Err: p.rec.fail}, p.term, p.seq0)
	if p.deps.Pool != nil {
		p.cmd.SetPool(p.deps.Pool)
	}
	if _, err := AttachCommander(p.conn, p.cmd, p.metrics, p.log.Named("reports"), p.onReport); err != nil {
		return err
	}
	// Operator share pins (regiment override), restored from the bus first.
	if _, err := AttachCommanderOverrides(ctx, p.conn, p.cmd, p.deps.Clock, p.log.Named("override")); err != nil {
		return err
	}
	return nil
}

// openStore opens DataDir/commander.db, unless a store was given, and
// closes it last.
func (p *CommanderProcess) openStore(start time.Time) error {
	if p.deps.Store != nil {
		p.st = p.deps.Store
		return nil
	}
	dbPath := filepath.Join(p.opts.DataDir, "commander.db")
	st, err := store.Open(dbPath, store.Options{})
	if err != nil {
		return err
	}
	p.onClose(func() error { return p.Stage("store closed", st.Close()) })
	p.st = st
	// The episode begins once the term is known, from the bus, and ends
	// just before the store closes.
	p.onClose(func() error {
		if p.steps == nil {
			return nil
		}
		err := p.Stage("steps flushed", p.steps.Close())
		return errors.Join(err, p.Stage("episode ended", st.EndEpisode(p.ep.ID, time.Now())))
	})
	id, err := st.NewEpisodeID("commander-"+p.cfg.Cluster.Name+"-", start)
	if err != nil {
		return err
	}
	p.deps.EpisodeID = id
	p.log.Info("store open", "path", dbPath)
	return nil
}

// dial connects to the bus: the given connection, the URL of the options or
// the config, else an embedded server under DataDir/nats.
func (p *CommanderProcess) dial(ctx context.Context) error {
	if p.deps.Conn != nil {
		p.conn = p.adopt(p.deps.Conn)
		return nil
	}
	cfg := p.cfg
	url := p.opts.NATSURL
	if url == "" {
		url = cfg.NATS.URL
	}
	embedded := url == ""
	if embedded {
		dir := filepath.Join(p.opts.DataDir, "nats")
		srv, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: p.opts.EmbeddedPort, StoreDir: dir,
			Token: p.opts.NATSToken, Logger: p.log.Named("nats")})
		if err != nil {
			return err
		}
		p.onClose(func() error { srv.Shutdown(); p.log.Info("embedded nats stopped"); return nil })
		url = srv.ClientURL()
		p.log.Info("embedded nats started", "url", url, "store_dir", dir)
	}
	copts := bus.ConnectOptions{URL: url, Name: "commander", Cluster: cfg.Cluster.Name, Token: p.opts.NATSToken,
		InboxPrefix: bus.InboxPrefix(cfg.Cluster.Name, bus.CommanderUser),
		KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }, Logger: p.log.Named("bus")}
	if !embedded {
		copts.SetAuth(cfg.NATS) // nats { token_file, nkey_seed_file, credentials, tls }; the embedded server has none
		copts.Replicas = cfg.NATS.Replicas
	} else if cfg.NATS.Replicas > 1 {
		p.log.Warn("embedded nats is a single server; buckets get one replica", "replicas", cfg.NATS.Replicas)
	}
	if err := CommanderSigning(&copts, cfg.NATS, p.log); err != nil {
		return err
	}
	OverrideVerification(&copts, cfg.NATS, p.log)
	var err error
	p.conn, err = p.connect(ctx, copts, p.reg, "commander")
	return err
}

// ensureBuckets creates the directive and override buckets or brings their
// configuration up to date (bus.Conn.EnsureBuckets).
func (p *CommanderProcess) ensureBuckets(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	return p.conn.EnsureBuckets(cctx)
}

// resume returns the term and the first sequence number of a Commander
// starting at start with term: sequence numbers continue from the last
// directive held in the KV, so they grow across restarts as well as terms
// do. The term exceeds the last one held even when this host's clock is
// behind the previous Commander's, or Soldiers would reject its directives
// as replayed; a held term past any clock is ignored (commander.ResumeTerm).
func (p *CommanderProcess) resume(ctx context.Context, start time.Time, term uint64) (uint64, uint64, error) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var seq0 uint64
	for _, d := range p.cfg.Domains {
		last, ok, err := p.conn.LastDirective(cctx, d.Name)
		if err != nil {
			return 0, 0, fmt.Errorf("read the last directive for %s: %w", d.Name, err)
		}
		if ok {
			next, usable := commander.ResumeTerm(start, term, last.Term)
			if !usable {
				p.log.Warn("ignoring the last directive held by the bus: its term is past any clock", "domain", d.Name, "term", last.Term, "seq", last.Seq)
				continue
			}
			seq0, term = max(seq0, last.Seq), next
		}
	}
	return term, seq0, nil
}

// beginEpisode begins the process's episode and returns where its steps go.
func (p *CommanderProcess) beginEpisode(start time.Time, term uint64) (*store.Appender, error) {
	p.ep = recording.CommanderEpisode(p.deps.EpisodeID, p.cfg, p.cfg.Commander.Policy)
	p.ep.Started = start
	p.ep.Meta = map[string]string{"term": strconv.FormatUint(term, 10)}
	if err := p.st.BeginEpisode(p.ep); err != nil {
		return nil, err
	}
	if p.deps.Store != nil {
		return p.deps.Steps, nil
	}
	p.steps = p.st.NewAppender(64, time.Second)
	p.log.Info("episode begun", "episode", p.ep.ID, "term", term)
	return p.steps, nil
}

// Run ticks every Commander tick until ctx ends, only while leading with a
// Kubeconfig. It returns once the tick loop has stopped; Close shuts down.
func (p *CommanderProcess) Run(ctx context.Context) error {
	var clock tickClock
	onTick := func(d commander.Decision, err error) {
		p.metrics.CommanderTick(d, err, clock.since())
		switch {
		case err != nil && ctx.Err() == nil:
			p.log.Warn("tick failed", "error", err)
		case err == nil:
			p.log.Debug("tick", "seq", d.Seq, "reserve", d.Reserve, "guards", d.Guards, "reason", d.Reason)
		}
	}
	cfg := p.config()
	p.log.Info("commander running", "tick", cfg.Commander.Tick, "term", p.term, "seq", p.seq0, "domains", len(cfg.Domains))
	p.probes.SetLive(true)
	var err error
	if p.kube != nil {
		err = p.lead(ctx, p.kube, p.cmd, p.conn, clock.now, onTick)
	} else {
		err = p.cmd.Run(ctx, clock.now, onTick)
	}
	p.probes.SetLive(false)
	p.Stopping()
	p.log.Info("tick loop stopped", "seq", p.cmd.Seq())
	return err
}

// Tick runs one Commander tick at now, for a caller that drives the clock
// (`regiment run`).
func (p *CommanderProcess) Tick(ctx context.Context, now time.Time) (commander.Decision, error) {
	t0 := time.Now()
	d, err := p.cmd.Tick(ctx, now)
	p.metrics.CommanderTick(d, err, time.Since(t0))
	return d, err
}

// Reload re-reads the config file and applies it from the next tick, or
// keeps the running config and logs why.
func (p *CommanderProcess) Reload() {
	cfg := reloadFile(p.log, p.opts.ConfigPath, p.cfg, p.cmd.Reload)
	if cfg == nil {
		return
	}
	p.cfgMu.Lock()
	p.cfg = cfg
	p.cfgMu.Unlock()
	c := cfg.Commander
	p.log.Info("config reloaded", "path", p.opts.ConfigPath, "tick", c.Tick, "directive_ttl", c.DirectiveTTL, "dead_zone", c.DeadZone,
		"max_share_change", c.MaxShareChange, "reserve_min", c.ReserveMin)
}

// config is the config in force, for code that runs while Reload may
// replace it.
func (p *CommanderProcess) config() *domains.Config {
	p.cfgMu.Lock()
	defer p.cfgMu.Unlock()
	return p.cfg
}

// Rejected is how many messages the process rejected.
func (p *CommanderProcess) Rejected() int { return int(counterValue(p.metrics.Rejected)) }
