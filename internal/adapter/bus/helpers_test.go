package bus

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/wire"
)

const testCluster = "prod"

// testLog is an hclog logger writing to the test log until the test ends;
// later lines (from client goroutines winding down) are dropped.
func testLog(t testing.TB, name string, level hclog.Level) hclog.Logger {
	w := &testWriter{w: t.Output()}
	t.Cleanup(w.stop)
	return hclog.New(&hclog.LoggerOptions{Name: name, Output: w, Level: level})
}

type testWriter struct {
	mu   sync.Mutex
	w    io.Writer
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return len(p), nil
	}
	return w.w.Write(p)
}

func (w *testWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// startServer starts an embedded server on port (RandomPort for any) with
// JetStream in dir, shut down when the test ends.
func startServer(t testing.TB, dir string, port int) *Embedded {
	t.Helper()
	e, err := StartEmbedded(EmbeddedOptions{Port: port, StoreDir: dir, Logger: testLog(t, "nats-server", hclog.Warn)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	return e
}

// connect connects to url for testCluster with fast reconnects, closed when
// the test ends.
func connect(t testing.TB, url, name string, mod ...func(*ConnectOptions)) *Conn {
	t.Helper()
	opts := ConnectOptions{
		URL:              url,
		Name:             name,
		Cluster:          testCluster,
		Logger:           testLog(t, name, hclog.Info),
		ReconnectWait:    10 * time.Millisecond,
		MaxReconnectWait: 100 * time.Millisecond,
		ReconnectJitter:  10 * time.Millisecond,
	}
	for _, m := range mod {
		m(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// flush makes sure the server has seen c's subscriptions.
func flush(t testing.TB, c *Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

// receive waits for one value on ch.
func receive[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

type result[T any] struct {
	v   T
	err error
}

// collect returns a handler that sends what it gets on the returned channel.
func collect[T any]() (func(T, error), chan result[T]) {
	ch := make(chan result[T], 64)
	return func(v T, err error) { ch <- result[T]{v, err} }, ch
}

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

func directive(domain string, term, seq uint64) wire.Directive {
	return wire.Directive{
		Version:  wire.Version,
		Cluster:  testCluster,
		Domain:   domain,
		Term:     term,
		Seq:      seq,
		IssuedAt: t0,
		TTL:      wire.Duration(3 * time.Minute),
		Share:    0.25,
		Cores:    3000,
		Urgency:  0.5,
		Headroom: 0.1,
		Policy:   "test",
		Reason:   "test directive",
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
