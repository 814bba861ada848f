package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
)

// Lifecycle is what both daemon processes share: the logger, the NATS
// connection their readiness depends on, whether they are shutting down,
// and what to close at shutdown. The zero value with Log set is ready for
// use; it is safe for concurrent use.
type Lifecycle struct {
	Log      hclog.Logger
	conn     atomic.Pointer[bus.Conn]
	stopping atomic.Bool
	rec      *recordHealth // the store's writes; nil: not followed

	closeMu  sync.Mutex
	closers  []func() error // run last added first
	closed   bool
	closeErr error
}

// onClose adds f to what Close runs. Close runs them last added first: a
// process opens its store before it connects, so the connection drains
// before the store closes.
func (l *Lifecycle) onClose(f func() error) {
	l.closeMu.Lock()
	l.closers = append(l.closers, f)
	l.closeMu.Unlock()
}

// Close marks the process as stopping and runs its shutdown stages, last
// opened first; it returns their errors joined. It is idempotent: later calls
// return the first call's result.
func (l *Lifecycle) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return l.closeErr
	}
	l.closed = true
	l.Stopping()
	for i := len(l.closers) - 1; i >= 0; i-- {
		l.closeErr = errors.Join(l.closeErr, l.closers[i]())
	}
	l.closers = nil
	return l.closeErr
}

// connect connects with copts within 10 s, follows the connection for
// /readyz, exports its permission denials on reg (if not nil) and drains it
// at Close.
func (l *Lifecycle) connect(ctx context.Context, copts bus.ConnectOptions, reg prometheus.Registerer, component string) (*bus.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := bus.Connect(cctx, copts)
	if err != nil {
		return nil, err
	}
	l.adopt(conn)
	if reg != nil {
		RegisterConn(reg, component, conn)
	}
	l.Log.Info("nats connected", "url", copts.URL, "cluster", copts.Cluster)
	return conn, nil
}

// connectTimeout bounds connecting and the first reads from the bus.
const connectTimeout = 10 * time.Second

// serveHTTP serves /metrics, /healthz, /readyz and, for a process that
// owns st (not a store shared by `regiment run`'s processes), its
// snapshots, on listen, behind the token of tokenFile if any; it stops
// serving at Close. With listen "" (a process inside `regiment run`) it
// serves nothing and returns nil.
func (l *Lifecycle) serveHTTP(listen, tokenFile string, st *store.Store, own bool, reg *prometheus.Registry, ready func() string) (*Probes, error) {
	if listen == "" {
		return nil, nil
	}
	o, err := httpOptions(tokenFile, st, own)
	if err != nil {
		return nil, err
	}
	pr, err := ServeProbes(listen, reg, ready, o, l.Log)
	if err != nil {
		return nil, err
	}
	l.onClose(func() error { return l.Stage("http server stopped", pr.Close()) })
	return pr, nil
}

// reloadFile re-reads the config file at path and hands it to apply, or
// keeps the running config cur and logs why: each diagnostic of a file with
// problems, or apply's refusal. It returns the config applied, or nil.
func reloadFile(log hclog.Logger, path string, cur *domains.Config, apply func(*domains.Config) error) *domains.Config {
	cfg, err := config.LoadFile(path)
	if err != nil {
		LogReloadRejected(log, path, err)
		return nil
	}
	if err := apply(cfg); err != nil {
		log.Error("config reload rejected, keeping the running config", "path", path, "error", err)
		return nil
	}
	if !cfg.NATS.Equal(cur.NATS) || cfg.Store != cur.Store {
		log.Warn("nats and store settings apply on restart", "path", path)
	}
	return cfg
}

// Connected records the NATS connection /readyz follows.
func (l *Lifecycle) Connected(c *bus.Conn) { l.conn.Store(c) }

// Stopping marks the process as shutting down: /readyz fails from now on.
func (l *Lifecycle) Stopping() { l.stopping.Store(true) }

// Ready is /readyz's answer: "" once connected to NATS and until shutdown,
// while the store takes writes (RecordFailuresDegraded), else why not.
func (l *Lifecycle) Ready() string {
	c := l.conn.Load()
	switch {
	case l.stopping.Load():
		return "shutting down"
	case c == nil:
		return "not connected to nats yet"
	case !c.Connected():
		return "nats disconnected, reconnecting"
	}
	if l.rec != nil {
		return l.rec.degraded()
	}
	return ""
}

// Stage logs a shutdown stage at Info, or its failure at Error, and returns
// err.
func (l *Lifecycle) Stage(msg string, err error) error {
	if err != nil {
		l.Log.Error(msg+" failed", "error", err)
		return err
	}
	l.Log.Info(msg)
	return nil
}

// ServeReloads calls apply for every value received on reload (SIGHUP)
// until ctx ends. The returned function waits for that goroutine to end.
func ServeReloads(ctx context.Context, reload <-chan os.Signal, apply func()) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-reload:
				apply()
			}
		}
	})
	return wg.Wait
}

// LogReloadRejected logs why the config file at path was not reloaded: each
// diagnostic of a config error on its own line, at Error.
func LogReloadRejected(log hclog.Logger, path string, err error) {
	var ds config.Diagnostics
	if !errors.As(err, &ds) {
		log.Error("config reload rejected, keeping the running config", "path", path, "error", err)
		return
	}
	for _, d := range ds {
		log.Error("config reload rejected, keeping the running config", "path", path, "problem", d.String())
	}
}

// NewRegistry is a Prometheus registry with the Go runtime and process
// collectors, for a daemon's /metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Process is a Commander or a Soldier process.
type Process interface {
	Open(ctx context.Context) error
	Run(ctx context.Context) error
	Reload()
	Close() error
}

// reloadWait is how long Serve waits at shutdown for a reload still running
// (ReloadWait; a variable for tests).
var reloadWait = ReloadWait

// ReloadWait bounds how long shutdown waits for a config reload still
// running: reading the file, decoding and applying it take milliseconds,
// and only a read stuck in the kernel (a hung network file system) takes
// longer. Past it the daemon closes without the reload, whose read cannot be
// cancelled, and Serve reports it.
const ReloadWait = 5 * time.Second

// Serve opens p, runs it until ctx ends, re-reading its config file at every
// value received on reload (SIGHUP), and closes it, whatever happened. A
// reload still running when Run returns is waited for at most ReloadWait:
// a signal always ends the process.
func Serve(ctx context.Context, p Process, reload <-chan os.Signal) error {
	if err := p.Open(ctx); err != nil {
		return errors.Join(err, p.Close())
	}
	rctx, cancel := context.WithCancel(ctx)
	wait := ServeReloads(rctx, reload, p.Reload)
	err := p.Run(ctx)
	cancel()
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(reloadWait):
		err = errors.Join(err, fmt.Errorf("shutdown: a config reload still running after %v was abandoned", reloadWait))
	}
	return errors.Join(err, p.Close())
}

// adopt takes a connection the caller made: it follows it for /readyz and
// drains it at Close.
func (l *Lifecycle) adopt(conn *bus.Conn) *bus.Conn {
	l.onClose(func() error { return l.Stage("nats drained", conn.Drain()) })
	l.Connected(conn)
	return conn
}

// tickClock is a tick loop's clock: time.Now, remembered so that since tells
// how long the tick has run.
type tickClock struct{ start time.Time }

func (c *tickClock) now() time.Time {
	c.start = time.Now()
	return c.start
}

func (c *tickClock) since() time.Duration { return time.Since(c.start) }

// httpOptions are a daemon's HTTPOptions: the token of tokenFile, and its
// own store (not a store shared with the other processes of `regiment run`,
// which serve no HTTP anyway).
func httpOptions(tokenFile string, st *store.Store, own bool) (HTTPOptions, error) {
	tok, err := ReadToken(tokenFile)
	if err != nil {
		return HTTPOptions{}, err
	}
	o := HTTPOptions{Token: tok}
	if own {
		o.Store = st
	}
	return o, nil
}
