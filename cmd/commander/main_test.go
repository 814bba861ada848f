package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/bus/bustest"
	"github.com/regimentd/regiment/internal/config"
)

func TestUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.hcl")
	if err := os.WriteFile(bad, []byte("cluster \"x\" {\n  capacity_cores = \"lots\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // regexp
		stderr string // regexp
	}{
		{"help explains the flags with an example", []string{"--help"}, 0, `(?s)Usage: commander.*Example:.*-nats-token`, `^$`},
		{"config is required", nil, 2, `^$`, `--config is required`},
		{"an unreadable kubeconfig is a runtime failure", []string{"--config", "../../examples/small.hcl", "--kubeconfig", filepath.Join(t.TempDir(), "nope"), "--data", t.TempDir()}, 1, `^$`, `kube: client config`},
		{"unknown flags are usage errors", []string{"--config", "x.hcl", "--tick", "1s"}, 2, `^$`, `flag provided but not defined: --tick\n`},
		{"a misspelt flag names the closest", []string{"--config", "x.hcl", "--kubeconfg", "k"}, 2, `^$`, `flag provided but not defined: --kubeconfg; did you mean --kubeconfig\?`},
		{"version prints the build and the wire contract", []string{"--version"}, 0, `^commander .*\(revision .*\)\nwire contract 1\.1 \(reads 1\.0-1\.1, writes 1\.0\)\n`, `^$`},
		{"arguments are usage errors", []string{"--config", "x.hcl", "extra"}, 2, `^$`, `unexpected argument "extra"`},
		{"log levels are checked", []string{"--config", "x.hcl", "--log-level", "loud"}, 2, `^$`, `unknown level "loud"`},
		{"a config with problems is a runtime failure", []string{"--config", bad}, 1, `^$`, `bad\.hcl:2,\d+`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr, nil)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			if !regexp.MustCompile(tt.stdout).MatchString(stdout.String()) {
				t.Errorf("stdout does not match %q:\n%s", tt.stdout, stdout.String())
			}
			if !regexp.MustCompile(tt.stderr).MatchString(stderr.String()) {
				t.Errorf("stderr does not match %q:\n%s", tt.stderr, stderr.String())
			}
		})
	}
}

// TestEmbeddedDevMode runs the Commander with no NATS URL anywhere: it
// starts its own server with JetStream under DIR/nats and publishes there; a
// reload request with a broken or hostile file keeps it running.
func TestEmbeddedDevMode(t *testing.T) {
	embeddedPort = bus.RandomPort
	t.Cleanup(func() { embeddedPort = 4222 })
	dir := t.TempDir()
	src, err := config.ReadPortable("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "dev.hcl")
	fast := strings.Replace(string(src), `tick   = "60s"`, `tick = "200ms"`, 1)
	if err := os.WriteFile(cfgPath, []byte(fast), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	reload := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--config", cfgPath, "--data", dir, "--listen", "127.0.0.1:0"}, &bytes.Buffer{}, &stderr, reload)
	}()
	url := waitLog(t, &stderr, `embedded nats started: url=(\S+)`)[1]

	cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
	defer ccancel()
	conn, err := bus.Connect(cctx, bus.ConnectOptions{URL: url, Cluster: "small"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, _ := conn.LastDirective(cctx, "payment"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no directive published on the embedded server:\n%s", stderr.String())
		}
		bustest.Report(t, conn, "small", "payment") // the Commander directs only domains it has heard from
		time.Sleep(20 * time.Millisecond)
	}

	if err := os.WriteFile(cfgPath, []byte(strings.Replace(fast, `tick = "200ms"`, `tick = "soon"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	reload <- syscall.SIGHUP
	waitLog(t, &stderr, `config reload rejected, keeping the running config:.*dev\.hcl:\d+,\d+`)
	// Hostile files are rejected the same way and the Commander runs on: the
	// deep one before the HCL parser would exhaust the stack (a fatal error
	// no recover catches), the others by their ranges.
	for _, h := range []struct{ src, problem string }{
		{"x = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n" + fast, `dev\.hcl:1,\d+-\d+: Nesting too deep`},
		{strings.Replace(fast, `max_replicas    = 60`, `max_replicas    = 3000000000`, 1), `Invalid max_replicas; max_replicas must be in \[1, 1000000\], got 3000000000`},
		{strings.Replace(fast, `tick = "200ms"`, `tick = "1ns"`, 1), `Invalid tick; tick must be in \[1ms, 24h0m0s\], got 1ns`},
	} {
		if err := os.WriteFile(cfgPath, []byte(h.src), 0o644); err != nil {
			t.Fatal(err)
		}
		reload <- syscall.SIGHUP
		waitLog(t, &stderr, `config reload rejected, keeping the running config:.*`+h.problem)
	}
	// A FIFO in the config's place, with nothing writing to it, is refused
	// at once; opening it used to block the reload, and shutdown after it.
	if err := os.Remove(cfgPath); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(cfgPath, 0o600); err != nil {
		t.Fatal(err)
	}
	reload <- syscall.SIGHUP
	waitLog(t, &stderr, `config reload rejected, keeping the running config:.*dev\.hcl: is a named pipe \(FIFO\), not a regular file`)
	// And it still decides: a directive issued after the hostile reloads.
	after := time.Now()
	waitFor(t, &stderr, "a directive after the hostile reloads", func() bool {
		d, ok, _ := conn.LastDirective(cctx, "payment")
		return ok && d.IssuedAt.After(after)
	})

	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d after cancel, want 0:\n%s", c, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	for _, stage := range []string{"tick loop stopped", "nats drained", "embedded nats stopped", "steps flushed", "episode ended", "store closed"} {
		if !strings.Contains(stderr.String(), stage) {
			t.Errorf("shutdown stage %q not logged", stage)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nats", "jetstream")); err != nil {
		t.Errorf("no JetStream store under DIR/nats: %v", err)
	}
}

func waitFor(t *testing.T, b *syncBuffer, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10s:\n%s", what, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitLog(t *testing.T, b *syncBuffer, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := rx.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("log does not match %q within 10s:\n%s", re, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
