package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Probes serves /metrics from a private registry, /healthz (200 while Live)
// and /readyz (200 while ready() returns "", else 503 with its reason).
type Probes struct {
	Live atomic.Bool // set while the daemon runs its loop
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Timeouts of the probe server: a client gets ProbeReadTimeout to send its
// request (ProbeReadHeaderTimeout of it for the headers) and
// ProbeWriteTimeout to take the answer; a kept-alive connection idle for
// ProbeIdleTimeout is closed, so idle clients cannot hold connections (and
// file descriptors) without bound.
const (
	ProbeReadHeaderTimeout = 5 * time.Second
	ProbeReadTimeout       = 10 * time.Second
	ProbeWriteTimeout      = 30 * time.Second // a /metrics scrape of a big registry
	ProbeIdleTimeout       = 60 * time.Second
)

// probeTimeouts are the server's timeouts; tests shorten them.
type probeTimeouts struct{ readHeader, read, write, idle time.Duration }

var defaultProbeTimeouts = probeTimeouts{ProbeReadHeaderTimeout, ProbeReadTimeout, ProbeWriteTimeout, ProbeIdleTimeout}

// ServeProbes listens on addr and serves in the background; not live until
// told.
func ServeProbes(addr string, reg *prometheus.Registry, ready func() string, log hclog.Logger) (*Probes, error) {
	return serveProbes(addr, reg, ready, log, defaultProbeTimeouts)
}

func serveProbes(addr string, reg *prometheus.Registry, ready func() string, log hclog.Logger, to probeTimeouts) (*Probes, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	p := &Probes{ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if !p.Live.Load() {
			http.Error(w, "not running its loop", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := ready(); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: to.readHeader, ReadTimeout: to.read,
		WriteTimeout: to.write, IdleTimeout: to.idle}
	go func() {
		defer close(p.done)
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server failed", "error", err)
		}
	}()
	log.Info("serving http", "addr", ln.Addr().String())
	return p, nil
}

// SetLive sets what /healthz answers; on a nil Probes (none served) it does
// nothing.
func (p *Probes) SetLive(live bool) {
	if p != nil {
		p.Live.Store(live)
	}
}

// Close stops serving, waiting up to 5s for requests in flight.
func (p *Probes) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	<-p.done
	return err
}
