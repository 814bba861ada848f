package daemon

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/cli"
)

// Probes serves /metrics from a private registry, /healthz (200 while Live),
// /readyz (200 while ready() returns "", else 503 with its reason) and, with
// a store, /store: a consistent snapshot of it (StorePath).
type Probes struct {
	Live atomic.Bool // set while the daemon runs its loop
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	busy chan struct{} // holds one while a store snapshot is served
}

// HTTPOptions are what a daemon's HTTP server serves beside its probes.
type HTTPOptions struct {
	// Token, when not "", is the bearer token that /metrics and /store
	// require ("Authorization: Bearer <token>"); /healthz and /readyz stay
	// open for the kubelet. Empty: no authentication (keep the port on a
	// private network; the chart's NetworkPolicy limits who reaches it).
	Token string
	// Store, when not nil, is served at StorePath as a snapshot.
	Store *store.Store
}

// StorePath is where a daemon serves a snapshot of its store: GET answers
// a bbolt file ("application/octet-stream", with its Content-Length and
// the store's file name) that "regiment report --episodes" and "regiment
// episodes --db" read, as a file or straight from the URL. One snapshot is
// served at a time (another gets 503 with Retry-After), each within
// SnapshotTimeout.
const StorePath = "/store"

// SnapshotTimeout bounds the serving of one store snapshot, and so the read
// transaction it holds open (store.Store.Snapshot): a client too slow to
// take the file within it is cut off.
const SnapshotTimeout = 10 * time.Minute

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
type probeTimeouts struct{ readHeader, read, write, idle, snapshot time.Duration }

var defaultProbeTimeouts = probeTimeouts{ProbeReadHeaderTimeout, ProbeReadTimeout, ProbeWriteTimeout, ProbeIdleTimeout, SnapshotTimeout}

// ServeProbes listens on addr and serves in the background; not live until
// told.
func ServeProbes(addr string, reg *prometheus.Registry, ready func() string, o HTTPOptions, log hclog.Logger) (*Probes, error) {
	return serveProbes(addr, reg, ready, o, log, defaultProbeTimeouts)
}

func serveProbes(addr string, reg *prometheus.Registry, ready func() string, o HTTPOptions, log hclog.Logger, to probeTimeouts) (*Probes, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	p := &Probes{ln: ln, done: make(chan struct{}), busy: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", bearer(o.Token, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})))
	if o.Store != nil {
		mux.Handle("GET "+StorePath, bearer(o.Token, p.snapshot(o.Store, to.snapshot, log)))
	}
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

// Close stops serving, waiting up to 5s for requests in flight; a store
// snapshot still being served then is cut off, so that the store can close.
func (p *Probes) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		_ = p.srv.Close()
	}
	<-p.done
	return err
}

// bearer is h behind the bearer token; with no token, h.
func bearer(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="regiment"`)
			http.Error(w, "unauthorized: send the daemon's token (its --http-token-file) as Authorization: Bearer", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// snapshot serves st's snapshots, one at a time, each within timeout.
func (p *Probes) snapshot(st *store.Store, timeout time.Duration, log hclog.Logger) http.HandlerFunc {
	name := filepath.Base(st.Path())
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case p.busy <- struct{}{}:
			defer func() { <-p.busy }()
		default:
			w.Header().Set("Retry-After", "10")
			http.Error(w, "another store snapshot is being served; retry when it is done", http.StatusServiceUnavailable)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
		h.Set("Cache-Control", "no-store")
		if r.Method == http.MethodHead {
			return
		}
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout))
		t0 := time.Now()
		n, err := st.Snapshot(w, func(size int64) { h.Set("Content-Length", strconv.FormatInt(size, 10)) })
		switch {
		case err != nil && n == 0:
			h.Del("Content-Length")
			h.Del("Content-Disposition")
			log.Error("store snapshot failed", "error", err)
			http.Error(w, "store snapshot failed: "+err.Error(), http.StatusInternalServerError)
		case err != nil:
			log.Warn("store snapshot cut short", "bytes", n, "remote", r.RemoteAddr, "error", err)
		default:
			log.Info("store snapshot served", "bytes", n, "took", time.Since(t0).Round(time.Millisecond), "remote", r.RemoteAddr)
		}
	}
}

// ReadToken reads the bearer token of a daemon's HTTP port from the file at
// path (--http-token-file), whitespace trimmed; "" for no path.
func ReadToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	return cli.ReadTokenFile(path)
}

// Addr is the address the server listens on.
func (p *Probes) Addr() string { return p.ln.Addr().String() }
