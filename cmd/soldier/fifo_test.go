package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/config"
)

// TestReloadOntoAFIFOIsRefusedAndShutdownStillEnds: a config file replaced
// by a FIFO (nothing writing to it) and then SIGHUP is refused at once as
// not a regular file, the Soldier runs on with its config, and SIGTERM ends
// it within the shutdown time, exit 0. Opening the FIFO used to block the
// reload for good, and shutdown waited on it.
func TestReloadOntoAFIFOIsRefusedAndShutdownStillEnds(t *testing.T) {
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: filepath.Join(t.TempDir(), "nats")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	dir := t.TempDir()
	src, err := config.ReadPortable(smallConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "fast.hcl")
	writeFile(t, cfgPath, strings.Replace(string(src), `  tick = "10s"`, `  tick = "100ms"`, 1))
	scen, err := filepath.Abs(sampleScen)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	reload := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--config", cfgPath, "--domain", "fraud", "--scenario", scen, "--nats", srv.ClientURL(),
			"--data", dir, "--listen", "127.0.0.1:0"}, io.Discard, &stderr, reload)
	}()
	addr := waitLog(t, &stderr, `serving http:.* addr=(\S+)`)[1]

	if err := os.Remove(cfgPath); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfgPath, 0o600); err != nil {
		t.Fatal(err)
	}
	reload <- syscall.SIGHUP
	waitLog(t, &stderr, `config reload rejected, keeping the running config:.*fast\.hcl: is a named pipe \(FIFO\), not a regular file`)
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz after the refused reload: %d, want 200", resp.StatusCode)
	}

	start := time.Now()
	cancel() // SIGTERM
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d after SIGTERM, want 0:\n%s", c, stderr.String())
		}
		t.Logf("shut down in %v", time.Since(start))
	case <-time.After(15 * time.Second):
		t.Fatalf("no exit 15s after SIGTERM:\n%s", stderr.String())
	}
}
