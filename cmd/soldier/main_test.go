package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
)

const (
	smallConfig = "../../examples/small.hcl"
	sampleScen  = "../regiment/testdata/small-sample.hcl"
)

func TestUsage(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // regexp
		stderr string // regexp
	}{
		{"help explains the flags with an example", []string{"-h"}, 0, `(?s)Usage: soldier.*Example:.*-scenario`, `^$`},
		{"config is required", []string{"--domain", "payment"}, 2, `^$`, `--config is required`},
		{"domain is required", []string{"--config", smallConfig}, 2, `^$`, `--domain is required`},
		{"an unreadable kubeconfig is a runtime failure", []string{"--config", smallConfig, "--domain", "payment", "--kubeconfig", "nope.kubeconfig",
			"--data", t.TempDir(), "--listen", "127.0.0.1:0"}, 1, `^$`, `soldier failed: .*kube: client config \\"nope.kubeconfig\\"`},
		{"scenario and kubeconfig exclude each other", []string{"--config", smallConfig, "--domain", "payment", "--kubeconfig", "k",
			"--scenario", sampleScen}, 2, `^$`, `exclude each other`},
		{"a scenario is needed without kubeconfig", []string{"--config", smallConfig, "--domain", "payment"}, 2, `^$`, `--scenario is required`},
		{"an unknown domain is a usage error", []string{"--config", smallConfig, "--domain", "billing", "--scenario", sampleScen}, 2, `^$`,
			`"billing" is not a domain .*\(domains: payment, fraud, merchant, data, platform\)`},
		{"a misspelt domain names the closest", []string{"--config", smallConfig, "--domain", "paymnt", "--scenario", sampleScen}, 2, `^$`,
			`--domain: "paymnt" is not a domain of .*small.hcl; did you mean payment\?`},
		{"a misspelt flag names the closest", []string{"--config", smallConfig, "--domian", "payment"}, 2, `^$`,
			`flag provided but not defined: --domian; did you mean --domain\?`},
		{"version prints the build and the wire contract", []string{"--version"}, 0, `^soldier .*\(revision .*\)\nwire contract 1\.1 \(reads 1\.0-1\.1, writes 1\.0\)\n`, `^$`},
		{"an unknown log format is a usage error", []string{"--config", smallConfig, "--domain", "payment", "--scenario", sampleScen, "--log-format", "xml"}, 2, `^$`,
			`--log-format: unknown format "xml" \(text, json\)`},
		{"no NATS server is a runtime failure", []string{"--config", smallConfig, "--domain", "payment", "--scenario", sampleScen,
			"--nats", "nats://127.0.0.1:1", "--data", t.TempDir(), "--listen", "127.0.0.1:0"}, 1, `^$`, `soldier failed: .*127\.0\.0\.1:1`},
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

// TestRunReloadAndShutdown runs a Soldier in-process against an embedded
// nats-server: it becomes ready after its first tick, keeps its config on a
// broken or hostile reload, applies a good one, and shuts down in order.
func TestRunReloadAndShutdown(t *testing.T) {
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
	fast := strings.Replace(string(src), `  tick = "10s"`, `  tick = "100ms"`, 1)
	writeFile(t, cfgPath, fast)
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready within 10s:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	writeFile(t, cfgPath, strings.Replace(fast, `actuation = "replicas"`, `actuation = "sideways"`, 1))
	reload <- syscall.SIGHUP
	waitLog(t, &stderr, `config reload rejected, keeping the running config:.*problem=.*fast\.hcl:\d+,\d+`)
	// Hostile files are rejected the same way and the Soldier runs on: the
	// deep one before the HCL parser would exhaust the stack (a fatal error
	// no recover catches), the others by their ranges.
	for _, h := range []struct{ src, problem string }{
		{"x = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n" + fast, `fast\.hcl:1,\d+-\d+: Nesting too deep`},
		{strings.Replace(fast, `max_replicas    = 60`, `max_replicas    = 3000000000`, 1), `Invalid max_replicas; max_replicas must be in \[1, 1000000\], got 3000000000`},
		{strings.Replace(fast, `tick = "100ms"`, `tick = "1ns"`, 1), `Invalid tick; tick must be in \[1ms, 24h0m0s\], got 1ns`},
	} {
		writeFile(t, cfgPath, h.src)
		reload <- syscall.SIGHUP
		waitLog(t, &stderr, `config reload rejected, keeping the running config:.*problem=.*`+h.problem)
	}
	writeFile(t, cfgPath, strings.Replace(fast, `scale_down_cooldown = "5m"`, "scale_down_cooldown = \"5m\"\n  mode = \"shadow\"", 1))
	reload <- syscall.SIGHUP
	waitLog(t, &stderr, `config reloaded:.*mode=shadow`)

	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d after cancel, want 0:\n%s", c, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	log := stderr.String()
	last := -1
	for _, stage := range []string{"stopped actuating", "nats drained", "steps flushed", "episode ended", "store closed"} {
		i := strings.Index(log, stage)
		if i < last {
			t.Errorf("shutdown stage %q missing or out of order", stage)
		}
		last = i
	}
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
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

// TestDamagedStoreExitsOneWithoutPanic starts the Soldier on a store that
// is a real one cut to half its size, one that is empty and one of garbage:
// exit 1 with an error naming the file as damaged, not a crash.
func TestDamagedStoreExitsOneWithoutPanic(t *testing.T) {
	// A real store of a Soldier run, to damage.
	good := t.TempDir()
	st, err := store.Open(filepath.Join(good, "soldier-payment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ep := store.Episode{ID: "e", Level: "soldier", Domain: "payment", Started: time.Unix(1e9, 0)}
	if err := st.BeginEpisode(ep); err != nil {
		t.Fatal(err)
	}
	a := st.NewAppender(50, 0)
	for i := range 500 {
		if err := a.Append(store.Step{Episode: "e", Seq: uint64(i), At: time.Unix(1e9+int64(i), 0), Action: map[string]float64{"replicas/checkout-0": 4}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(good, "soldier-payment.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"truncated to half", raw[:len(raw)/2]},
		{"zero-length", nil},
		{"garbage", bytes.Repeat([]byte("regiment"), 8192)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "soldier-payment.db")
			writeFile(t, path, string(tc.data))
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"--config", smallConfig, "--domain", "payment", "--scenario", sampleScen,
				"--data", dir, "--listen", "127.0.0.1:0", "--nats", "nats://127.0.0.1:1"}, &stdout, &stderr, nil)
			if code != 1 || !strings.Contains(stderr.String(), "store file is damaged") || !strings.Contains(stderr.String(), path) {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
			}
		})
	}
}

// TestJSONLogsParse: with --log-format json every line the Soldier logs is
// one JSON object with hclog's keys and the domain's.
func TestJSONLogsParse(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--config", smallConfig, "--domain", "payment", "--scenario", sampleScen,
		"--nats", "nats://127.0.0.1:1", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--log-format", "json"}, &stdout, &stderr, nil)
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (no NATS server); stderr:\n%s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	var failed bool
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		for _, k := range []string{"@timestamp", "@level", "@module", "@message"} {
			if _, ok := m[k]; !ok {
				t.Errorf("line %q lacks %s", line, k)
			}
		}
		if m["@message"] == "soldier failed" {
			failed = true
			if m["@level"] != "error" || m["@module"] != "soldier" || m["domain"] != "payment" || !strings.Contains(fmt.Sprint(m["error"]), "127.0.0.1:1") {
				t.Errorf("the failure line %v", m)
			}
		}
	}
	if !failed {
		t.Fatalf("no \"soldier failed\" line in:\n%s", stderr.String())
	}
}
