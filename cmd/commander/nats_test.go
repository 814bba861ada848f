package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/bus/wire"
	"github.com/regimentd/regiment/domains/config"
)

// TestCommanderRunsWithItsRolePermissions runs the Commander daemon against a
// nats-server configured with bus.Permissions (as `regiment nats-config`
// renders it), authenticating with the nkey seed its config names: its
// directives reach a Soldier connected with that Soldier's credentials, it
// answers and stores an operator's share pin, and it never hits a permission
// violation.
func TestCommanderRunsWithItsRolePermissions(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	fast := strings.Replace(string(src), `commander { tick = "60s" }`, `commander { tick = "200ms" }`, 1)
	cfg, err := config.Parse([]byte(fast), "small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	roles, err := bus.Permissions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, r := range roles {
		kp, _ := nkeys.CreateUser()
		seed, _ := kp.Seed()
		keys[r.User], _ = kp.PublicKey()
		if err := os.WriteFile(filepath.Join(dir, r.User+".nk"), seed, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var conf bytes.Buffer
	if err := bus.WriteServerConfig(&conf, roles, bus.ServerConfig{StoreDir: filepath.Join(dir, "js"), Nkeys: keys}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nats.conf"), conf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	as := func(user string) *bus.Conn {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := bus.Connect(ctx, bus.ConnectOptions{URL: srv.ClientURL(), Cluster: "small", Name: user,
			NkeySeedFile: filepath.Join(dir, user+".nk"), InboxPrefix: bus.InboxPrefix("small", user)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	soldier := as(bus.SoldierUser("payment"))
	directives := make(chan wire.Directive, 16)
	if _, err := soldier.SubscribeDirectives("payment", func(d wire.Directive, err error) {
		if err == nil {
			select {
			case directives <- d:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}

	cfgPath := filepath.Join(dir, "small.hcl")
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(fast, `nats  { url = "" }`,
		"nats {\n  url            = \""+srv.ClientURL()+"\"\n  nkey_seed_file = \"commander.nk\"\n}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--config", cfgPath, "--data", dir, "--listen", "127.0.0.1:0"}, &bytes.Buffer{}, &stderr, nil)
	}()
	select {
	case d := <-directives:
		if d.Domain != "payment" || d.Cluster != "small" {
			t.Fatalf("directive %+v", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the soldier got no directive within 15s:\n%s", stderr.String())
	}

	operator := as(bus.OperatorUser)
	share := 0.3
	now := time.Now()
	pin := wire.Override{Version: wire.Version, Cluster: "small", Domain: "payment", Share: &share,
		IssuedAt: now, Until: now.Add(10 * time.Minute), By: "alice", Reason: "test"}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	a, err := operator.RequestOverride(rctx, pin)
	if err != nil || a.From != "commander" {
		t.Fatalf("share pin: ack %+v, %v\n%s", a, err, stderr.String())
	}
	if !a.Accepted {
		t.Fatalf("the commander refused the pin: %s", a.Reason)
	}
	pins, err := operator.Overrides(rctx, "payment")
	if err != nil || len(pins) != 1 {
		t.Fatalf("the operator lists %+v, %v; want the stored pin", pins, err)
	}

	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d after cancel, want 0:\n%s", c, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if log := stderr.String(); strings.Contains(log, "permission denied") {
		t.Fatalf("the commander hit its permissions:\n%s", log)
	}
	for name, c := range map[string]*bus.Conn{"soldier": soldier, "operator": operator} {
		if n := c.Denied(); n != 0 {
			t.Errorf("the %s was denied %d times", name, n)
		}
	}
}
