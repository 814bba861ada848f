package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/episodes"
)

// openTokenSoldier opens payment's Soldier of examples/small.hcl on a
// simulated cluster, its store in dir, serving HTTP on loopback behind the
// token in a file.
func openTokenSoldier(t *testing.T, dir, token string) *SoldierProcess {
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
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := NewSoldierProcess(cfg, SoldierOptions{ConfigPath: cfgPath, Domain: "payment", NATSURL: srv.ClientURL(),
		ScenarioPath: "../../cmd/regiment/testdata/small-sample.hcl", DataDir: dir, Listen: "127.0.0.1:0", HTTPTokenFile: tokenFile},
		Deps{}, nil, hclog.NewNullLogger())
	if err := p.Open(context.Background()); err != nil {
		_ = p.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// request GETs path of p's HTTP server with the bearer token (none: "").
func request(t *testing.T, p *SoldierProcess, path, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+p.probes.ln.Addr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestStoreSnapshotNeedsTheTokenOfMetrics: with --http-token-file, /store
// and /metrics answer 401 without the token or with another, and /healthz
// and /readyz (the kubelet's) stay open.
func TestStoreSnapshotNeedsTheTokenOfMetrics(t *testing.T) {
	p := openTokenSoldier(t, t.TempDir(), "s3cret")
	for _, path := range []string{StorePath, "/metrics"} {
		for _, tok := range []string{"", "wrong"} {
			resp := request(t, p, path, tok)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || !strings.Contains(string(body), "--http-token-file") {
				t.Errorf("%s with token %q: %s %q, want 401 with WWW-Authenticate, naming --http-token-file", path, tok, resp.Status, body)
			}
		}
		resp := request(t, p, path, "s3cret")
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s with the token: %s, want 200", path, resp.Status)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp := request(t, p, path, "")
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			t.Errorf("%s asks the kubelet for a token", path)
		}
	}
	if _, err := episodes.Download(context.Background(), "http://"+p.probes.ln.Addr().String()+"/", "", t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "--http-token-file") {
		t.Errorf("a download without the token: %v, want 401 naming --http-token-file", err)
	}
}

// slowReader reads a body at bytesPerSecond, as a client on a slow link
// would.
type slowReader struct {
	r              io.Reader
	bytesPerSecond float64
}

func (s slowReader) Read(b []byte) (int, error) {
	n, err := s.r.Read(b[:min(len(b), 32<<10)])
	time.Sleep(time.Duration(float64(n) / s.bytesPerSecond * float64(time.Second)))
	return n, err
}

// TestStoreSnapshotIsConsistentWhileTheSoldierWrites takes the snapshot of
// a running Soldier's store (5 MB, so that it outlasts the socket's
// buffers) through a slow client while the Soldier ticks: its writes go on
// meanwhile (the step count grows before the download ends), a second
// snapshot is refused with 503 and Retry-After while the first is served,
// the body is as long as its Content-Length, and the file opens as a valid
// store (bbolt's check) with the steps written before it began and the
// apps the episode describes.
func TestStoreSnapshotIsConsistentWhileTheSoldierWrites(t *testing.T) {
	p := openTokenSoldier(t, t.TempDir(), "s3cret")
	// 5 MB of steps in another episode of the store.
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := p.st.BeginEpisode(store.Episode{ID: "filler", Level: "soldier", Domain: "payment", Started: t0}); err != nil {
		t.Fatal(err)
	}
	fill := p.st.NewAppender(256, time.Hour)
	const fillerSteps = 1500
	for i := range fillerSteps {
		out := map[string]float64{}
		for k := range 120 {
			out[fmt.Sprintf("rps/payment/filler-%d", k)] = float64(i * k)
		}
		if err := fill.Append(store.Step{Episode: "filler", Seq: uint64(i), At: t0.Add(time.Duration(i) * time.Second), Outcome: out}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fill.Close(); err != nil {
		t.Fatal(err)
	}
	// The Soldier ticks and records until the end of the test.
	ctx, stop := context.WithCancel(context.Background())
	var ticks atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			if err := p.Tick(ctx, time.Now()); err != nil && ctx.Err() == nil {
				t.Errorf("tick: %v", err)
				return
			}
			p.step()
			ticks.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	})
	defer func() { stop(); wg.Wait() }()
	steps := func() int {
		n, err := p.st.StepCount(p.ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for steps() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}

	atLeast := steps() // in the snapshot, which begins after
	resp := request(t, p, StorePath, "s3cret")
	defer resp.Body.Close()
	before := steps() // once it began
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/octet-stream" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), `filename="soldier-payment.db"`) {
		t.Fatalf("snapshot: %s, %v", resp.Status, resp.Header)
	}
	size, err := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if err != nil || size < 5<<20 {
		t.Fatalf("Content-Length %q, want the store's size, over 5 MB", resp.Header.Get("Content-Length"))
	}
	busy := request(t, p, StorePath, "s3cret")
	busy.Body.Close()
	if busy.StatusCode != http.StatusServiceUnavailable || busy.Header.Get("Retry-After") == "" {
		t.Errorf("a second snapshot while the first is served: %s, want 503 with Retry-After", busy.Status)
	}
	path := filepath.Join(t.TempDir(), "soldier-payment.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	grewDuring := false
	body := slowReader{r: resp.Body, bytesPerSecond: 2 << 20} // ~2.5 s for 5 MB
	n, err := io.Copy(f, io.TeeReader(body, writerFunc(func(b []byte) {
		grewDuring = grewDuring || steps() > before
	})))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || n != size {
		t.Fatalf("read %d of %d bytes: %v", n, size, err)
	}
	if !grewDuring {
		t.Errorf("the Soldier's steps stayed at %d while the snapshot was served (%d ticks): its writes were held up", before, ticks.Load())
	}

	snap, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the snapshot is not a valid store: %v", err)
	}
	defer snap.Close()
	if got, err := snap.StepCount("filler"); err != nil || got != fillerSteps {
		t.Errorf("the snapshot has %d filler steps (%v), want %d", got, err, fillerSteps)
	}
	got, err := snap.StepCount(p.ep.ID)
	if err != nil || got < atLeast || got >= steps() {
		t.Errorf("the snapshot has %d of the Soldier's steps (%v); %d were written before it began and %d by now", got, err, atLeast, steps())
	}
	ep, err := snap.Episode(p.ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	apps := recording.AppsOf(ep.Meta)
	if m, ok := apps["payment/checkout-0"]; len(apps) != 6 || !ok || m.CPUPerReplica != 0.5 {
		t.Errorf("the episode describes apps %v, want payment's 6 with checkout-0 at 0.5 cores", apps)
	}
}

type writerFunc func([]byte)

func (w writerFunc) Write(b []byte) (int, error) { w(b); return len(b), nil }
