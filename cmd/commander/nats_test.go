package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/bus/bustest"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/wire"
)

// TestCommanderRunsWithItsRolePermissions runs the Commander daemon against a
// nats-server configured with bus.Permissions (as `regiment nats-config`
// renders it), authenticating with the nkey seed its config names: its
// directives reach a Soldier connected with that Soldier's credentials, it
// answers and stores an operator's share pin, and it never hits a permission
// violation. It signs its directives with the key its config names, which
// the Soldier requires.
func TestCommanderRunsWithItsRolePermissions(t *testing.T) {
	dir := t.TempDir()
	src, err := config.ReadPortable("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	fast := strings.Replace(string(src), `tick   = "60s"`, `tick = "200ms"`, 1)
	cfg, err := config.Parse([]byte(fast), "small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	srv := bustest.StartSecured(t, cfg)
	// The soldier takes only directives signed with the key the config names.
	pub := srv.SigningKey(t, "directive.nk")
	soldier := srv.Connect(t, bus.SoldierUser("payment"), func(o *bus.ConnectOptions) { o.DirectiveKeys = []string{pub} })
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

	// The config names the seed relative to itself, as a Secret mount would.
	cfgPath := filepath.Join(srv.Dir, "small.hcl")
	if err := os.WriteFile(cfgPath, []byte(strings.Replace(fast, `nats  { url = "" }`,
		"nats {\n  url            = \""+srv.URL+"\"\n  nkey_seed_file = \"commander.nk\"\n  directive_signing_key_file = \"directive.nk\"\n}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"--config", cfgPath, "--data", dir, "--listen", "127.0.0.1:0"}, &bytes.Buffer{}, &stderr, nil)
	}()
	timeout, report := time.After(15*time.Second), time.NewTicker(100*time.Millisecond)
	defer report.Stop()
wait:
	for {
		select {
		case d := <-directives:
			if d.Domain != "payment" || d.Cluster != "small" || d.Signer != pub {
				t.Fatalf("directive %+v, want payment's signed by %s", d, pub)
			}
			break wait
		case <-report.C:
			bustest.Report(t, soldier, "small", "payment") // with the Soldier's own credentials
		case <-timeout:
			t.Fatalf("the soldier got no directive within 15s:\n%s", stderr.String())
		}
	}

	operator := srv.Connect(t, bus.OperatorUser)
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
