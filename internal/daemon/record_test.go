package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
)

// openTestSoldier opens the payment Soldier of examples/small.hcl on dir,
// serving its probes on a random port, with its log in logs (locked: the
// Appender's timed flush logs from its own goroutine).
func openTestSoldier(t *testing.T, dir string, logs *lockedBuffer) (*SoldierProcess, error) {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	cfgPath := "../../examples/small.hcl"
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	log := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info})
	p := NewSoldierProcess(cfg, SoldierOptions{ConfigPath: cfgPath, Domain: "payment", NATSURL: srv.ClientURL(),
		ScenarioPath: "../../cmd/regiment/testdata/small-sample.hcl", DataDir: dir, Listen: "127.0.0.1:0"}, Deps{}, nil, log)
	err = p.Open(context.Background())
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, nil
}

func get(t *testing.T, p *SoldierProcess, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + p.probes.ln.Addr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLostStepsAreCountedAndMakeTheSoldierDegraded makes the store's writes
// fail for real (its bbolt file is closed under the running Soldier, as a
// full disk or a lost volume would): every lost step is counted, the
// failure is logged once for the streak, and /readyz answers 503
// "degraded" after RecordFailuresDegraded failed writes.
func TestLostStepsAreCountedAndMakeTheSoldierDegraded(t *testing.T) {
	var logs lockedBuffer
	p, err := openTestSoldier(t, t.TempDir(), &logs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Tick(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, p, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before any failure: %d %s", code, body)
	}
	if err := p.st.Close(); err != nil { // the injected failure: writes now fail in bbolt
		t.Fatal(err)
	}
	counter := func() float64 {
		mfs, err := p.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "regiment_soldier_record_failures_total" {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("no regiment_soldier_record_failures_total")
		return 0
	}
	// Each tick's step is written by the Appender's timed flush (1 s) and
	// its failure reported at the next tick.
	deadline := time.Now().Add(5 * time.Second)
	for p.ready() == "" && time.Now().Before(deadline) {
		if err := p.Tick(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		p.step()
		time.Sleep(300 * time.Millisecond) // let the timed flush run: real time is what it waits on
	}
	why := p.ready()
	if !strings.Contains(why, "degraded") {
		t.Fatalf("readyz reason %q, want degraded; log:\n%s", why, logs.String())
	}
	code, body := get(t, p, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "degraded") {
		t.Fatalf("/readyz = %d %q, want 503 degraded", code, body)
	}
	if n := counter(); n < RecordFailuresDegraded {
		t.Fatalf("record failures = %v, want at least %d", n, RecordFailuresDegraded)
	}
	if _, metrics := get(t, p, "/metrics"); !strings.Contains(metrics, "regiment_soldier_record_failures_total") {
		t.Fatal("/metrics does not export regiment_soldier_record_failures_total")
	}
	if n := strings.Count(logs.String(), "record failed: steps are being lost"); n != 1 {
		t.Fatalf("the failure streak was warned %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "readyz reports degraded"); n != 1 {
		t.Fatalf("degraded was logged %d times, want once:\n%s", n, logs.String())
	}
}

// flaky is a recording.Appender whose Appends fail while fail is set: the
// streak logic, apart from how a store fails.
type flaky struct{ fail bool }

func (f *flaky) Append(store.Step) error {
	if f.fail {
		return &store.WriteError{Steps: 2, Err: errors.New("no space left on device")}
	}
	return nil
}

func TestReadyzRecoversAfterOneSuccessfulWrite(t *testing.T) {
	var logs bytes.Buffer
	h := newRecordHealth(prometheus.NewRegistry(), "soldier", hclog.New(&hclog.LoggerOptions{Output: &logs}))
	f := &flaky{fail: true}
	out := h.follow(f, false)
	for i := range RecordFailuresDegraded {
		if h.degraded() != "" {
			t.Fatalf("degraded after %d failures, want after %d", i, RecordFailuresDegraded)
		}
		if err := out.Append(store.Step{}); err != nil {
			h.fail(err) // what the recorder does with it
		}
	}
	if h.degraded() == "" {
		t.Fatalf("not degraded after %d failures", RecordFailuresDegraded)
	}
	if got := testutil.ToFloat64(h.failed); got != 2*RecordFailuresDegraded {
		t.Fatalf("counted %v lost steps, want every step of every failed batch (%d)", got, 2*RecordFailuresDegraded)
	}
	f.fail = false
	_ = out.Append(store.Step{})
	if why := h.degraded(); why != "" {
		t.Fatalf("still degraded after a successful write: %s", why)
	}
	if !strings.Contains(logs.String(), "record succeeded again") {
		t.Fatalf("recovery not logged:\n%s", logs.String())
	}
	if got := lostBy(errors.Join(&store.WriteError{Steps: 3}, &store.WriteError{Steps: 4})); got != 7 {
		t.Fatalf("lostBy(joined) = %d, want 7", got)
	}
}

// TestUnreadableStateIsLoggedAndExported stores a decision state that does
// not decode (bytes overwritten inside a value: bbolt does not checksum
// values, so the file passes its check): the Soldier starts fresh and says
// so, in its log at Warn and in regiment_soldier_state_restore_failed.
func TestUnreadableStateIsLoggedAndExported(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "soldier-payment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutState(stateKey("payment"), []byte("{\x1b[31m not a snapshot")); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	p, err := openTestSoldier(t, dir, &logs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "[WARN]  decision state not restored: starting fresh") {
		t.Fatalf("no warning that the state was not restored:\n%s", logs.String())
	}
	if got := testutil.ToFloat64(p.restoreFailed); got != 1 {
		t.Fatalf("regiment_soldier_state_restore_failed = %v, want 1", got)
	}
}

// TestSoldierRefusesADamagedStore starts a Soldier on a store cut to half
// its size: Open fails with an error naming the file and the damage, and
// nothing panics.
func TestSoldierRefusesADamagedStore(t *testing.T) {
	dir := t.TempDir()
	var logs lockedBuffer
	p, err := openTestSoldier(t, dir, &logs)
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		if err := p.Tick(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
		p.step()
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "soldier-payment.db")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw[:len(raw)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = openTestSoldier(t, dir, &logs)
	if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want ErrDamaged naming %s", err, path)
	}
}

// TestProbeServerClosesIdleConnections opens a connection, makes one
// request and then stays idle, and a second connection that sends nothing:
// the server closes both after its idle and header timeouts (shortened here).
func TestProbeServerClosesIdleConnections(t *testing.T) {
	to := probeTimeouts{readHeader: 200 * time.Millisecond, read: 4 * time.Second, write: 4 * time.Second, idle: 300 * time.Millisecond}
	p, err := serveProbes("127.0.0.1:0", prometheus.NewRegistry(), func() string { return "" }, HTTPOptions{}, hclog.NewNullLogger(), to)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if to.idle >= ProbeIdleTimeout || defaultProbeTimeouts.idle == 0 || defaultProbeTimeouts.read == 0 || defaultProbeTimeouts.write == 0 {
		t.Fatal("the production timeouts are not all set")
	}
	addr := p.ln.Addr().String()
	closedWithin := func(c net.Conn, limit time.Duration) time.Duration {
		start := time.Now()
		_ = c.SetReadDeadline(start.Add(limit))
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					t.Fatalf("the connection was still open after %s", limit)
				}
				return time.Since(start)
			}
		}
	}
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if _, err := io.WriteString(idle, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if d := closedWithin(idle, 2*time.Second); d < to.idle/2 {
		t.Fatalf("closed after %s, before the idle timeout %s", d, to.idle)
	}
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	closedWithin(silent, 2*time.Second)
}

func TestBothDaemonsExportTheirRecordFailures(t *testing.T) {
	cfg, err := config.LoadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for name, reg := range map[string]*prometheus.Registry{
		"regiment_commander_record_failures_total": NewCommanderProcess(cfg, CommanderOptions{}, Deps{}, hclog.NewNullLogger()).reg,
		"regiment_soldier_record_failures_total":   NewSoldierProcess(cfg, SoldierOptions{Domain: "payment"}, Deps{}, nil, hclog.NewNullLogger()).reg,
	} {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, mf := range mfs {
			found = found || mf.GetName() == name
		}
		if !found {
			t.Errorf("%s is not exported before the first failure", name)
		}
	}
}
