package daemon

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
)

func TestCloseRunsTheStagesLastOpenedFirstAndOnce(t *testing.T) {
	var l Lifecycle
	l.Log = hclog.NewNullLogger()
	var order []string
	for _, stage := range []string{"store", "episode", "nats"} {
		l.onClose(func() error { order = append(order, stage); return nil })
	}
	l.onClose(func() error { return errors.New("probes failed") })
	first := l.Close()
	if got := strings.Join(order, ","); got != "nats,episode,store" {
		t.Errorf("stages ran %s, want nats,episode,store", got)
	}
	if second := l.Close(); first == nil || second != first || len(order) != 3 {
		t.Errorf("second Close: %v (first %v), %d stages run; want the first result and no stage again", second, first, len(order))
	}
	if l.Ready() != "shutting down" {
		t.Errorf("readyz after Close: %q", l.Ready())
	}
}

func TestReloadKeepsTheRunningConfigOnABadFile(t *testing.T) {
	good := "../../examples/small.hcl"
	cur, err := config.LoadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "cluster.hcl")
	if err := os.WriteFile(bad, []byte("cluster \"x\" {\n  capacity_cores = \"many\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs})
	applied := 0
	apply := func(*domains.Config) error { applied++; return nil }
	if got := reloadFile(log, bad, cur, apply); got != nil || applied != 0 {
		t.Fatalf("a bad file was applied (%d times)", applied)
	}
	if !strings.Contains(logs.String(), "config reload rejected, keeping the running config") || !strings.Contains(logs.String(), "cluster.hcl:") {
		t.Errorf("no diagnostic with file:line logged:\n%s", logs.String())
	}
	refuse := func(*domains.Config) error { return errors.New("the set of apps changed: restart to apply") }
	if got := reloadFile(log, good, cur, refuse); got != nil {
		t.Fatal("a refused config was returned")
	}
	if got := reloadFile(log, good, cur, apply); got == nil || applied != 1 {
		t.Fatalf("a good file was not applied")
	}
}

// TestSoldierProcessClosesInOrder opens a Soldier process on a simulated
// cluster against an embedded server, closes it twice and reopens its store.
func TestSoldierProcessClosesInOrder(t *testing.T) {
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	cfgPath := "../../examples/small.hcl"
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var logs bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
	p := NewSoldierProcess(cfg, SoldierOptions{ConfigPath: cfgPath, Domain: "payment", NATSURL: srv.ClientURL(),
		ScenarioPath: "../../cmd/regiment/testdata/small-sample.hcl", DataDir: dir}, Deps{}, nil, log)
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Tick(context.Background(), p.deps.Clock()); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	last := -1
	for _, stage := range []string{"nats drained", "steps flushed", "episode ended", "store closed"} {
		i := strings.Index(logs.String(), stage)
		if i < last || strings.Count(logs.String(), stage) != 1 {
			t.Errorf("shutdown stage %q missing, repeated or out of order:\n%s", stage, logs.String())
		}
		last = i
	}
	st, err := store.Open(filepath.Join(dir, "soldier-payment.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if stats, err := st.Stats(); err != nil || stats.Steps != 1 || stats.Episodes != 1 {
		t.Fatalf("store holds %+v (%v), want one episode of one step", stats, err)
	}
}

// TestReloadLogsTheModeInForce: a reload that switches one domain to active
// while the soldier block says recommend logs the domain's mode, the one
// its Soldier now runs in, not the soldier block's.
func TestReloadLogsTheModeInForce(t *testing.T) {
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	src, err := os.ReadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	recommend := strings.Replace(string(src), `actuation = "replicas"`, `actuation = "replicas"
  mode = "recommend"`, 1)
	cfgPath := filepath.Join(t.TempDir(), "small.hcl")
	if err := os.WriteFile(cfgPath, []byte(recommend), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})
	p := NewSoldierProcess(cfg, SoldierOptions{ConfigPath: cfgPath, Domain: "payment", NATSURL: srv.ClientURL(),
		ScenarioPath: "../../cmd/regiment/testdata/small-sample.hcl", DataDir: t.TempDir()}, Deps{}, nil, log)
	if err := p.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	active := strings.Replace(recommend, `domain "payment" {`, `domain "payment" {
  mode = "active"`, 1)
	if err := os.WriteFile(cfgPath, []byte(active), 0o600); err != nil {
		t.Fatal(err)
	}
	p.Reload()
	line := ""
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "config reloaded") {
			line = l
		}
	}
	if !strings.Contains(line, "mode=active") {
		t.Errorf("payment switched to active under soldier mode recommend; the reload logs %q, want mode=active\n%s", line, logs.String())
	}
}
