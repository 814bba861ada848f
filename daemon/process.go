package daemon

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/domains/config"
)

// Lifecycle is what both daemon processes share: the logger, the NATS
// connection their readiness depends on, and whether they are shutting
// down. The zero value with Log set is ready for use; it is safe for
// concurrent use.
type Lifecycle struct {
	Log      hclog.Logger
	conn     atomic.Pointer[bus.Conn]
	stopping atomic.Bool
}

// Connected records the NATS connection /readyz follows.
func (l *Lifecycle) Connected(c *bus.Conn) { l.conn.Store(c) }

// Stopping marks the process as shutting down: /readyz fails from now on.
func (l *Lifecycle) Stopping() { l.stopping.Store(true) }

// Ready is /readyz's answer: "" once connected to NATS and until shutdown,
// else why not.
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
