package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/live"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// DefaultNATS is where a Soldier looks without a NATS URL in its options or
// its config: a commander's embedded server.
const DefaultNATS = "nats://127.0.0.1:4222"

// minSimStep is the least simulated time one tick advances the simulated
// cluster: a shorter soldier.tick runs the simulation faster than real time,
// with pod start-up and telemetry lag in simulated time.
const minSimStep = 10 * time.Second

// SoldierOptions are a Soldier process's settings besides its config: the
// soldier daemon's flags.
type SoldierOptions struct {
	ConfigPath string // the file Reload re-reads
	Domain     string // the domain the Soldier runs
	NATSURL    string // "": nats.url of the config, else DefaultNATS
	NATSToken  string // instead of the config's nats authentication
	// The cluster: Kubeconfig (a file, or "in-cluster") for a real one, else
	// a simulation of the whole config replaying ScenarioPath; a Cluster in
	// the process's Deps wins over both.
	Kubeconfig   string
	ScenarioPath string
	DataDir      string // soldier-<domain>.db
	Listen       string // address for /metrics, /healthz and /readyz; "": none
	// HTTPTokenFile holds the bearer token /metrics and /store require
	// (HTTPOptions.Token); "": none.
	HTTPTokenFile string
}

// ClusterAdapter is what a Soldier observes and actuates: a real cluster (package
// kube) or a simulated one (package live).
type ClusterAdapter interface {
	soldier.Observer
	soldier.Actuator
}

// SoldierProcess is one Soldier process: its config, cluster, store, connection,
// probes and the SoldierProcess core. New starts nothing; Run ticks until its
// context ends; Close shuts down in order: the tick loop has stopped (no
// more actuation), NATS drains, the probes stop, the steps flush, the
// episode ends, the store closes.
type SoldierProcess struct {
	restoreFailed prometheus.Gauge // regiment_soldier_state_restore_failed
	Lifecycle
	opts    SoldierOptions
	deps    Deps
	cfg     *domains.Config // in force; only Reload replaces it after start
	cfgMu   sync.Mutex      // guards cfg against Reload while Run reads it
	scfg    soldier.Config
	log     hclog.Logger
	reg     *prometheus.Registry
	metrics *Metrics
	view    ClusterAdapter
	sim     *live.Cluster // the simulated cluster the process steps itself; nil otherwise
	meta    map[string]string
	probes  *Probes
	conn    *bus.Conn
	st      *store.Store
	ep      store.Episode
	appsMu  sync.Mutex        // guards apps
	apps    map[string]string // the apps described in the episode's Meta (recording.AppsMeta)
	sd      *soldier.Soldier
	disc    *discovery       // the domain's apps found on the cluster (soldier_kube.go); nil: none
	keep    bool             // the decision state is kept in the store across restarts (persist.go)
	leader  prometheus.Gauge // regiment_soldier_leader: 1 while this Soldier may act
	acting  atomic.Bool      // this Soldier ticks: it holds the lease, or needs none
	saveErr bool             // the last save of the decision state failed
	ticked  atomic.Bool
	failing []string // "app (reason)" of the apps not written at the last tick
	// warnedAtMax tells when to log an app breaching with its
	// max_replicas ready (atMax).
	warnedAtMax soldier.Reminder
	// warnedLimited tells when to log an app whose sizing wants more than
	// its ceiling (limited).
	warnedLimited soldier.Reminder
	// learned is the service time last logged per learning app (learnedTimes).
	learned map[string]float64
	ended   bool // the scenario of sim ended
}

// NewSoldierProcess returns the Soldier process of o.Domain in cfg with o's
// settings and the dependencies in d; view, when not nil, is the cluster it
// observes and actuates, driven by the caller. It starts nothing.
func NewSoldierProcess(cfg *domains.Config, o SoldierOptions, d Deps, view ClusterAdapter, log hclog.Logger) *SoldierProcess {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	reg := NewRegistry()
	leader := prometheus.NewGauge(prometheus.GaugeOpts{Name: "regiment_soldier_leader",
		Help: "1 while this Soldier holds its domain's lease and acts (always, off Kubernetes); 0 while it waits."})
	reg.MustRegister(leader)
	return &SoldierProcess{restoreFailed: newRestoreFailed(reg), Lifecycle: Lifecycle{Log: log, rec: newRecordHealth(reg, "soldier", log.Named("record"))}, opts: o, deps: d, cfg: cfg, log: log, view: view,
		reg: reg, metrics: NewMetrics(reg, "soldier"), leader: leader}
}

// ready is /readyz's answer: "" once connected to NATS and after the first
// tick, until shutdown.
func (p *SoldierProcess) ready() string {
	if why := p.Ready(); why != "" {
		return why
	}
	if !p.acting.Load() {
		return "waiting for the soldier lease: another soldier of the domain acts"
	}
	if !p.ticked.Load() {
		return "no tick yet"
	}
	return ""
}

// setActing notes whether this Soldier ticks, in /readyz and
// regiment_soldier_leader.
func (p *SoldierProcess) setActing(on bool) {
	p.acting.Store(on)
	v := 0.0
	if on {
		v = 1
	}
	p.leader.Set(v)
}

// Open builds the process: its policy, cluster, store, episode, probes, NATS
// connection and the Soldier, fed its directives and the operator's replica
// pins. On an error, Close releases what was opened.
func (p *SoldierProcess) Open(ctx context.Context) (err error) {
	if err := p.startDiscovery(ctx); err != nil { // before anything reads the domain's apps
		return err
	}
	cfg, domain := p.cfg, p.opts.Domain
	if p.scfg, err = soldier.NewConfig(cfg, domain); err != nil {
		return err
	}
	policy, err := soldier.NewPolicy(cfg, p.scfg)
	if err != nil {
		return err
	}
	if err := p.openCluster(ctx); err != nil {
		return err
	}
	steps, err := p.openStore()
	if err != nil {
		return err
	}
	if p.probes, err = p.Lifecycle.serveHTTP(p.opts.Listen, p.opts.HTTPTokenFile, p.st, p.deps.Store == nil, p.reg, p.ready); err != nil {
		return err
	}
	if err := p.dial(ctx); err != nil {
		return err
	}
	p.sd = soldier.New(p.scfg, policy, p.view, p.view, p.conn,
		&recording.Soldier{Episode: p.ep.ID, Out: p.rec.follow(steps, p.deps.Store == nil), Ledger: p.st.AppendLedger, Err: p.rec.fail})
	p.restoreState()
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if _, err := AttachSoldier(cctx, p.conn, p.sd, domain, p.deps.Clock, p.metrics, p.log); err != nil {
		return err
	}
	// Operator replica pins (regiment override), restored from the bus first.
	if _, err := AttachSoldierOverrides(cctx, p.conn, p.sd, domain, p.deps.Clock, p.log.Named("override")); err != nil {
		return err
	}
	p.discoveryLive() // workloads found from now on reload the Soldier's apps
	return nil
}

// openCluster builds the cluster the Soldier acts on, unless it was given:
// with a Kubeconfig the real one (its informers run until Close), else a
// simulation replaying the scenario.
func (p *SoldierProcess) openCluster(ctx context.Context) error {
	p.meta = map[string]string{"cluster_adapter": "simulation", "scenario": p.opts.ScenarioPath}
	switch {
	case p.view != nil:
		return nil
	case p.opts.Kubeconfig != "":
		ad, err := p.newKube(p.opts.Domain)
		if err != nil {
			return err
		}
		kctx, stop := context.WithCancel(ctx)
		var kwg sync.WaitGroup
		kwg.Go(func() { ad.Observer.Run(kctx) }) // the lease is held by Run (lead)
		kwg.Go(func() { ad.Events.Run(kctx) })
		p.onClose(func() error { stop(); kwg.Wait(); return nil })
		p.view = newKubeView(ad, p.log.Named("kube"), p.reg, p.opts.Domain)
		p.meta = map[string]string{"cluster_adapter": "kubernetes", "actuation": string(p.cfg.Soldier.Actuation)}
		return nil
	}
	c, err := p.newCluster()
	if err != nil {
		return err
	}
	p.sim, p.view = c, c.Domain(p.cfg.Domain(p.opts.Domain))
	return nil
}

// newCluster builds the simulated cluster: the whole config replaying the
// scenario, stepping max(soldier tick, minSimStep) per tick.
func (p *SoldierProcess) newCluster() (*live.Cluster, error) {
	sc, err := scenario.Read(p.cfg, p.opts.ScenarioPath)
	if err != nil {
		return nil, err
	}
	simCfg := *p.cfg
	simCfg.Soldier.Tick = max(simCfg.Soldier.Tick, minSimStep)
	s, err := sim.New(&simCfg, sc.Scenario, sc.Traces)
	if err != nil {
		return nil, fmt.Errorf("simulate %s: %w", p.opts.ScenarioPath, err)
	}
	p.log.Info("simulated cluster ready", "scenario", sc.Name, "start", sc.Start, "duration", sc.Duration, "sim_step", simCfg.Soldier.Tick)
	return live.New(s, &simCfg), nil
}

// openStore opens DataDir/soldier-<domain>.db, unless a store was given, and
// begins the episode; at Close the steps flush, the episode ends and the
// store closes. It returns where the steps go.
func (p *SoldierProcess) openStore() (*store.Appender, error) {
	domain, start := p.opts.Domain, p.deps.Clock()
	st, id := p.deps.Store, p.deps.EpisodeID
	var dbPath string
	if st == nil {
		// The store first: a second Soldier of the domain on the same
		// directory fails here, before it listens or connects.
		dbPath = filepath.Join(p.opts.DataDir, "soldier-"+domain+".db")
		var err error
		if st, err = store.Open(dbPath, store.Options{}); err != nil {
			return nil, err
		}
		p.onClose(func() error { return p.Stage("store closed", st.Close()) })
		if id, err = st.NewEpisodeID("soldier-"+domain+"-", start); err != nil {
			return nil, err
		}
	}
	p.st, p.keep = st, p.deps.Store == nil // a store of its own: a shared one is a simulation's (regiment run)
	p.ep = recording.SoldierEpisode(id, p.cfg, domain, p.cfg.Soldier.Policy)
	p.ep.Started = start
	if p.deps.Store == nil {
		p.ep.Meta = maps.Clone(p.meta)
		p.appsMu.Lock()
		p.apps = p.appsMeta(p.cfg)
		maps.Copy(p.ep.Meta, p.apps)
		p.appsMu.Unlock()
	}
	if err := st.BeginEpisode(p.ep); err != nil {
		return nil, err
	}
	if p.deps.Store != nil {
		return p.deps.Steps, nil
	}
	p.onClose(func() error { return p.Stage("episode ended", st.EndEpisode(p.ep.ID, time.Now())) })
	steps := st.NewAppender(64, time.Second)
	p.onClose(func() error { return p.Stage("steps flushed", steps.Close()) })
	p.log.Info("store open", "path", dbPath, "episode", p.ep.ID)
	return steps, nil
}

// dial connects to the bus: the given connection, else the URL of the
// options, the config or DefaultNATS.
func (p *SoldierProcess) dial(ctx context.Context) error {
	if p.deps.Conn != nil {
		p.conn = p.adopt(p.deps.Conn)
		return nil
	}
	cfg, domain := p.cfg, p.opts.Domain
	url := p.opts.NATSURL
	if url == "" {
		url = cfg.NATS.URL
	}
	if url == "" {
		url = DefaultNATS
	}
	copts := bus.ConnectOptions{URL: url, Name: "soldier-" + domain, Cluster: cfg.Cluster.Name, Token: p.opts.NATSToken,
		InboxPrefix: bus.InboxPrefix(cfg.Cluster.Name, bus.SoldierUser(domain)),
		KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }, Logger: p.log.Named("bus")}
	copts.SetAuth(cfg.NATS) // nats { token_file, nkey_seed_file, credentials, tls }; --nats-token wins
	SoldierVerification(&copts, cfg.NATS, p.log)
	OverrideVerification(&copts, cfg.NATS, p.log)
	var err error
	p.conn, err = p.connect(ctx, copts, p.reg, "soldier")
	return err
}

// Run ticks every Soldier tick until ctx ends; a simulated cluster of its own
// steps after each tick. It returns once the Soldier has stopped actuating;
// Close shuts down.
func (p *SoldierProcess) Run(ctx context.Context) error {
	var clock tickClock
	onTick := func(res soldier.TickResult, err error) {
		p.observe(ctx, res, err, clock.since())
		p.saveState(clock.start)
		p.step()
	}
	p.log.Info("soldier running", "tick", p.config().Soldier.Tick, "mode", modeOf(p.config(), p.opts.Domain), "apps", len(p.scfg.Apps))
	p.probes.SetLive(true)
	var err error
	if kv, ok := p.view.(*kubeView); ok && p.opts.Kubeconfig != "" {
		err = p.lead(ctx, kv, clock.now, onTick) // soldier_kube.go
	} else {
		p.setActing(true) // no lock off Kubernetes: one process per domain by deployment
		err = p.sd.Run(ctx, clock.now, onTick)
	}
	p.setActing(false)
	p.probes.SetLive(false)
	p.Stopping()
	p.log.Info("stopped actuating")
	return err
}

// Tick runs one Soldier tick at now, for a caller that drives the clock and
// the cluster (`regiment run`).
func (p *SoldierProcess) Tick(ctx context.Context, now time.Time) error {
	if !p.acting.Load() {
		p.setActing(true) // the caller runs the only Soldier of the domain
	}
	t0 := time.Now()
	res, err := p.sd.Tick(ctx, now)
	p.observe(ctx, res, err, time.Since(t0))
	p.saveState(now)
	return err
}

// observe counts and logs one tick; on Kubernetes it holds the lease's
// reassertion while the mode writes nothing, and gives the apps back once
// when the mode turns off.
func (p *SoldierProcess) observe(ctx context.Context, res soldier.TickResult, err error, took time.Duration) {
	p.metrics.SoldierTick(res, err, took)
	if kv, ok := p.view.(*kubeView); ok && err == nil {
		mode := domains.Mode(res.Report.Mode)
		kv.Hold(!mode.Writes())
		kv.restoreWhenOff(ctx, mode)
	}
	if res.Report.Domain != "" { // the tick observed: its Failing is this tick's
		p.failures(res.Failing)
		p.atMax(res)
		p.limited(res)
		p.learnedTimes(res.Learned)
	}
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
}

// failures reports the apps the tick could not write: the per-app gauge,
// a warning when the set of failing apps changes (Debug otherwise), and on
// Kubernetes an Event on each one's workload (kube.Events).
func (p *SoldierProcess) failures(failing []soldier.Failing) {
	apps := p.sd.Apps()
	p.metrics.AppFailures(p.opts.Domain, apps, failing)
	if kv, ok := p.view.(*kubeView); ok && kv.Events != nil {
		kv.Events.Report(p.deps.Clock(), failing)
	}
	names := make([]string, 0, len(failing))
	for _, f := range failing {
		if f.App < len(apps) {
			names = append(names, apps[f.App].Name+" ("+f.Reason+")")
		}
	}
	if !slices.Equal(names, p.failing) {
		if len(names) > 0 {
			p.log.Warn("apps not written", "apps", strings.Join(names, ", "))
		} else {
			p.log.Info("every app written again")
		}
		p.failing = names
	}
}

// atMax reports the apps breaching with their max_replicas ready: the
// per-app gauge, on Kubernetes a Warning Event on each one's workload
// (kube.Events.ReportAtMax), and a Warn log line per app when it starts and
// again every kube.DefaultEventRepeat while it goes on, not every tick.
func (p *SoldierProcess) atMax(res soldier.TickResult) {
	apps := p.sd.Apps()
	p.metrics.AppsAtMax(p.opts.Domain, apps, res.BreachingAtMax)
	now := res.Report.SentAt // the tick's time, simulated or not
	if kv, ok := p.view.(*kubeView); ok && kv.Events != nil {
		kv.Events.ReportAtMax(now, res.BreachingAtMax, res.SLOSeconds)
	}
	at := res.BreachingAtMax
	for _, i := range dueApps(&p.warnedAtMax, now, apps, len(at), func(i int) int { return at[i].App }) {
		a := at[i]
		p.log.Warn("app breaches its SLO with max_replicas ready: raise its max_replicas, no autoscaler serves it",
			"app", apps[a.App].Name, "max_replicas", a.Max, "p99_seconds", sig3(a.P99), "slo_seconds", res.SLOSeconds, "error_rate", sig3(a.ErrorRate))
	}
}

// limited reports the apps whose sizing wants more replicas than their
// ceiling: the per-app gauge of the replicas wanted, on Kubernetes a
// Warning Event on each one's workload (kube.Events.ReportLimited), and an
// Info log line per app when it starts and again every
// kube.DefaultEventRepeat while it goes on. It comes before the breach it
// may lead to (atMax).
func (p *SoldierProcess) limited(res soldier.TickResult) {
	apps := p.sd.Apps()
	p.metrics.AppsLimited(p.opts.Domain, apps, res.LimitedByMax)
	if kv, ok := p.view.(*kubeView); ok && kv.Events != nil {
		kv.Events.ReportLimited(res.Report.SentAt, res.LimitedByMax)
	}
	lim := res.LimitedByMax
	for _, i := range dueApps(&p.warnedLimited, res.Report.SentAt, apps, len(lim), func(i int) int { return lim[i].App }) {
		l := lim[i]
		p.log.Info("app's sizing wants more replicas than its max_replicas: raise it before the app breaches",
			"app", apps[l.App].Name, "wants", l.Wanted, "max_replicas", l.Max)
	}
}

// dueApps is which of n apps to log of at now, by r repeating every
// kube.DefaultEventRepeat: the i-th is apps[app(i)] (one outside apps is
// never due).
func dueApps(r *soldier.Reminder, now time.Time, apps []soldier.App, n int, app func(i int) int) []int {
	r.Every = kube.DefaultEventRepeat
	return r.Tell(now, n, func(i int) string {
		if a := app(i); a >= 0 && a < len(apps) {
			return apps[a].Name
		}
		return ""
	})
}

// sig3 is x to 3 significant digits, for a log line.
func sig3(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }

// step advances a simulated cluster of the process's own after the Soldier
// acted, as the cluster would between two ticks; a real cluster advances on
// its own.
func (p *SoldierProcess) step() {
	if p.sim == nil {
		return
	}
	done := false
	p.sim.Sim(func(s *sim.Sim) { done = s.Done() })
	if done {
		if !p.ended {
			p.ended = true
			p.log.Info("scenario ended, the simulated cluster holds its last state")
		}
		return
	}
	p.sim.Step()
}

// Directive is the last directive the Soldier accepted.
func (p *SoldierProcess) Directive() (seq uint64, ok bool) {
	d, ok := p.sd.Directive()
	return d.Seq, ok
}

// config is the config in force, for code that runs while Reload may
// replace it.
func (p *SoldierProcess) config() *domains.Config {
	p.cfgMu.Lock()
	defer p.cfgMu.Unlock()
	return p.cfg
}

// Rejected is how many messages the process rejected.
func (p *SoldierProcess) Rejected() int { return int(counterValue(p.metrics.Rejected)) }

// Reload re-reads the config file and applies it from the next tick, or
// keeps the running config and logs why.
func (p *SoldierProcess) Reload() {
	cfg := reloadFile(p.log, p.opts.ConfigPath, p.cfg, func(cfg *domains.Config) error {
		if p.disc != nil {
			return p.reloadDiscovered(cfg)
		}
		if why := shapeChange(p.cfg, cfg); why != "" {
			return errors.New(why + ": restart to apply")
		}
		return p.sd.Reload(cfg)
	})
	if cfg == nil {
		return
	}
	p.cfgMu.Lock()
	p.cfg = cfg
	p.cfgMu.Unlock()
	p.recordApps(cfg)
	s := cfg.Soldier
	// The mode in force is the domain's own, else the soldier block's.
	p.log.Info("config reloaded", "path", p.opts.ConfigPath, "tick", s.Tick, "mode", modeOf(cfg, p.opts.Domain), "target_utilisation", s.TargetUtilisation,
		"overage_cap", s.OverageCap, "scale_down_cooldown", s.ScaleDownCooldown, "error_rate_veto", s.ErrorRateVeto,
		"max_writes_per_tick", s.MaxWritesPerTick)
}

// modeOf is the mode domain's Soldier runs in under cfg: the domain's own,
// else the soldier block's (domains.Config.ModeOf).
func modeOf(cfg *domains.Config, domain string) domains.Mode {
	if di := cfg.Domain(domain); di >= 0 {
		return cfg.ModeOf(di)
	}
	return cfg.Soldier.Mode
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

// appsMeta describes cfg's apps of the domain for the episode's Meta.
func (p *SoldierProcess) appsMeta(cfg *domains.Config) map[string]string {
	_, onKube := p.view.(*kubeView)
	return recording.AppsMeta(cfg, p.opts.Domain, onKube)
}

// recordApps writes to the episode's Meta the apps of cfg that it does not
// describe yet, or not as they are now (a discovered app, a changed
// request), so that "regiment report" finds every app the Soldier decided
// for, with its workload. Only a store of its own: before the episode
// begins, and in a simulation's shared store, it does nothing.
func (p *SoldierProcess) recordApps(cfg *domains.Config) {
	if p.st == nil || p.deps.Store != nil || p.ep.ID == "" {
		return
	}
	p.appsMu.Lock()
	defer p.appsMu.Unlock()
	changed := map[string]string{}
	for k, v := range p.appsMeta(cfg) {
		if p.apps[k] != v {
			changed[k] = v
		}
	}
	if len(changed) == 0 {
		return
	}
	if err := p.st.SetEpisodeMeta(p.ep.ID, changed); err != nil {
		p.log.Warn("apps not described in the store: the report shows them without their workload", "error", err)
		return
	}
	maps.Copy(p.apps, changed)
}
