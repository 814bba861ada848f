package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/bus/bustest"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/wire"
)

// TestSoldierRunsWithItsRolePermissions runs the Soldier daemon against a
// nats-server configured with bus.Permissions (as `regiment nats-config`
// renders it), authenticating with the nkey seed its config names: it resumes
// from the last (signed) directive, refuses one made without the signing key
// its config trusts, publishes its reports and never hits a permission
// violation.
func TestSoldierRunsWithItsRolePermissions(t *testing.T) {
	dir := t.TempDir()
	src, err := config.ReadPortable(smallConfig)
	if err != nil {
		t.Fatal(err)
	}
	fast := strings.Replace(string(src), `  tick = "10s"`, `  tick = "100ms"`, 1)
	cfg, err := config.Parse([]byte(fast), "small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	srv := bustest.StartSecured(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The Commander signs with a key the soldier's config trusts.
	pub := srv.SigningKey(t, "directive.nk")
	signer, err := bus.LoadSigner(filepath.Join(srv.Dir, "directive.nk"))
	if err != nil {
		t.Fatal(err)
	}
	commander := srv.Connect(t, bus.CommanderUser, func(o *bus.ConnectOptions) { o.Signer = signer })
	unsigned := srv.Connect(t, bus.CommanderUser) // the same credential without the key
	reports := make(chan wire.DomainReport, 16)
	if _, err := commander.SubscribeReports(func(r wire.DomainReport, err error) {
		if err == nil {
			select {
			case reports <- r:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	d := wire.Directive{Version: wire.Version, Cluster: "small", Domain: "fraud", Term: 1, Seq: 7, IssuedAt: time.Now(),
		TTL: wire.Duration(5 * time.Minute), Share: 0.2, Cores: 128, Urgency: 0.5, Policy: "test", Reason: "before the soldier starts"}
	if err := commander.PublishDirective(ctx, d); err != nil {
		t.Fatal(err)
	}

	// The config names the seed relative to itself, as a Secret mount would.
	cfgPath := filepath.Join(srv.Dir, "small.hcl")
	writeFile(t, cfgPath, strings.Replace(fast, `nats  { url = "" }`,
		`nats {
  url            = "`+srv.URL+`"
  nkey_seed_file = "soldier-fraud.nk"
  directive_keys = ["`+pub+`"]
}`, 1))
	scen, err := filepath.Abs(sampleScen)
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	code := make(chan int, 1)
	rctx, stop := context.WithCancel(ctx)
	go func() {
		code <- run(rctx, []string{"--config", cfgPath, "--domain", "fraud", "--scenario", scen,
			"--data", dir, "--listen", "127.0.0.1:0", "--log-level", "debug"}, io.Discard, &stderr, nil)
	}()
	waitLog(t, &stderr, `resumed from the last directive:.*seq=7`)
	// A directive made with the Commander's NATS credential but not its
	// signing key is refused, counted and logged at Warn.
	forged := d
	forged.Seq, forged.IssuedAt = 8, time.Now()
	if err := unsigned.PublishDirective(ctx, forged); err != nil {
		t.Fatal(err)
	}
	waitLog(t, &stderr, `\[WARN\] .*directive rejected: .*reason=unsigned`)
	select {
	case r := <-reports:
		if r.Domain != "fraud" {
			t.Fatalf("report of %q", r.Domain)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no report from the soldier within 10s:\n%s", stderr.String())
	}
	stop()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d:\n%s", c, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if log := stderr.String(); strings.Contains(log, "permission denied") || strings.Contains(log, "Permissions Violation") {
		t.Fatalf("the soldier hit its permissions:\n%s", log)
	}
	if n := commander.Denied() + unsigned.Denied(); n != 0 {
		t.Fatalf("the commander was denied %d times", n)
	}
}
