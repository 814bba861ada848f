package daemon

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stuckProcess is a Process whose Reload blocks until release is closed, as
// a read stuck in the kernel would.
type stuckProcess struct {
	reloading chan struct{} // closed when Reload has started
	release   chan struct{}
	closed    chan struct{}
}

func (p *stuckProcess) Open(context.Context) error { return nil }
func (p *stuckProcess) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
func (p *stuckProcess) Reload() {
	close(p.reloading)
	<-p.release
}
func (p *stuckProcess) Close() error { close(p.closed); return nil }

func TestShutdownDoesNotWaitOnAStuckReload(t *testing.T) {
	defer func(d time.Duration) { reloadWait = d }(reloadWait)
	reloadWait = 200 * time.Millisecond
	p := &stuckProcess{reloading: make(chan struct{}), release: make(chan struct{}), closed: make(chan struct{})}
	defer close(p.release)
	ctx, cancel := context.WithCancel(context.Background())
	reload := make(chan os.Signal, 1)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, p, reload) }()
	reload <- syscall.SIGHUP
	<-p.reloading
	start := time.Now()
	cancel() // SIGTERM
	select {
	case err := <-served:
		if err == nil || !strings.Contains(err.Error(), "a config reload still running after 200ms was abandoned") {
			t.Errorf("Serve returned %v, want the abandoned reload reported", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Serve took %v after the signal, want about reloadWait", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the signal while a reload was stuck")
	}
	select {
	case <-p.closed:
	default:
		t.Error("Serve returned without closing the process")
	}
}
