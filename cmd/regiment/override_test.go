package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/live"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/wire"
)

const overrideConfig = "../../examples/small.hcl"

func TestOverrideUsage(t *testing.T) {
	tests := []struct {
		rule   string
		args   []string
		code   int
		stdout string // regexp
		stderr string // regexp
	}{
		{"help teaches with examples", []string{"--help"}, 0, `(?s)Usage: regiment override.*Examples:.*override replicas --config prod.hcl --app payment/checkout-0.*-for`, `^$`},
		{"no subcommand is a usage error", nil, 2, `^$`, `Usage: regiment override`},
		{"an unknown subcommand is named", []string{"pin", "--config", overrideConfig}, 2, `^$`, `unknown subcommand "pin"`},
		{"config is required", []string{"share", "--domain", "payment"}, 2, `^$`, `--config is required`},
		{"an unknown app gets a did-you-mean", []string{"replicas", "--config", overrideConfig, "--app", "payment/chekout-0", "--replicas", "3", "--for", "1m", "--reason", "r"}, 2, `^$`,
			`--app: "payment/chekout-0" is not an app of payment; did you mean "payment/checkout-0"\?`},
		{"an unknown domain gets a did-you-mean", []string{"share", "--config", overrideConfig, "--domain", "paymnet", "--share", "0.3", "--for", "1m", "--reason", "r"}, 2, `^$`,
			`"paymnet" is not a domain of cluster \w+; did you mean "payment"\? \(domains: payment, fraud`},
		{"an app without its domain needs --domain", []string{"replicas", "--config", overrideConfig, "--app", "checkout-0", "--replicas", "3", "--for", "1m", "--reason", "r"}, 2, `^$`, `give it as domain/app`},
		{"an app with --domain may be short", []string{"replicas", "--config", overrideConfig, "--domain", "payment", "--app", "checkout-9", "--replicas", "3", "--for", "1m", "--reason", "r"}, 2, `^$`, `"payment/checkout-9" is not an app of payment`},
		{"a pin longer than 24h is refused", []string{"share", "--config", overrideConfig, "--domain", "payment", "--share", "0.3", "--for", "25h", "--reason", "r"}, 2, `^$`, `--for 25h0m0s is longer than the 24h0m0s`},
		{"a pin needs a duration", []string{"share", "--config", overrideConfig, "--domain", "payment", "--share", "0.3", "--reason", "r"}, 2, `^$`, `--for is required`},
		{"a pin needs a reason", []string{"replicas", "--config", overrideConfig, "--app", "payment/checkout-0", "--replicas", "3", "--for", "1m"}, 2, `^$`, `--reason is required`},
		{"a share out of range is refused", []string{"share", "--config", overrideConfig, "--domain", "payment", "--share", "1.5", "--for", "1m", "--reason", "r"}, 2, `^$`, `--share is required, a fraction of the pool in \[0,1\] \(got 1.5\)`},
		{"a share pin takes no app", []string{"share", "--config", overrideConfig, "--app", "payment/checkout-0", "--share", "0.3", "--for", "1m", "--reason", "r"}, 2, `^$`, `use --domain, not --app`},
		{"a long operator name names its flag", []string{"cancel", "--config", overrideConfig, "--domain", "payment", "--by", strings.Repeat("x", 65)}, 2, `^$`, `--by: by is 65 bytes, limit 64`},
		{"an app of a discovering domain is left to its Soldier, which alone knows it",
			[]string{"replicas", "--config", "../../examples/staging-discover.hcl", "--app", "payment/cart", "--replicas", "3", "--for", "1m", "--reason", "r", "--nats", "nats://127.0.0.1:1", "--timeout", "500ms"}, 1, `^$`, `127\.0\.0\.1:1`},
		{"nobody listening is a clear failure", []string{"cancel", "--config", overrideConfig, "--domain", "payment", "--nats", "nats://127.0.0.1:1", "--timeout", "500ms"}, 1, `^$`, `127\.0\.0\.1:1`},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runOverride(context.Background(), tt.args, &stdout, &stderr)
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

// overrideRig is a Soldier of domain payment on a simulated cluster,
// connected to an embedded nats-server and serving overrides as the soldier
// daemon does, with a real store for its ledger.
type overrideRig struct {
	url     string
	cfg     *domains.Config
	cluster *live.Cluster
	view    *live.Domain
	sd      *soldier.Soldier
	st      *store.Store
}

func newOverrideRig(t *testing.T) *overrideRig {
	t.Helper()
	e, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	cfg, err := config.LoadFile(overrideConfig)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := config.LoadScenarioFile("testdata/small-sample.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(cfg, sc, traces)
	if err != nil {
		t.Fatal(err)
	}
	cluster := live.New(s, cfg)
	view := cluster.Domain(cfg.Domain("payment"))

	st, err := store.Open(filepath.Join(t.TempDir(), "soldier-payment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ep := recording.SoldierEpisode("override-test", cfg, "payment", "proportional")
	ep.Started = time.Now()
	if err := st.BeginEpisode(ep); err != nil {
		t.Fatal(err)
	}
	app := st.NewAppender(64, time.Second)
	t.Cleanup(func() { app.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, bus.ConnectOptions{URL: e.ClientURL(), Name: "soldier-payment", Cluster: cfg.Cluster.Name,
		KnownDomain: func(d string) bool { return cfg.Domain(d) >= 0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	scfg, err := soldier.NewConfig(cfg, "payment")
	if err != nil {
		t.Fatal(err)
	}
	sd := soldier.New(scfg, &soldier.SqrtStaffing{}, view, view, conn,
		&recording.Soldier{Episode: ep.ID, Out: app, Ledger: st.AppendLedger, Err: func(err error) { t.Error(err) }})
	if _, err := daemon.AttachSoldierOverrides(ctx, conn, sd, "payment", time.Now, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	if err := conn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return &overrideRig{url: e.ClientURL(), cfg: cfg, cluster: cluster, view: view, sd: sd, st: st}
}

// tick runs one Soldier tick at now and steps the simulation.
func (r *overrideRig) tick(t *testing.T, now time.Time) {
	t.Helper()
	if _, err := r.sd.Tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	r.cluster.Step()
}

// target is the replica target in force of the domain's app i.
func (r *overrideRig) target(t *testing.T, i int) int32 {
	t.Helper()
	obs := soldier.Observation{Apps: make([]soldier.AppObservation, 6)}
	if err := r.view.Observe(context.Background(), &obs); err != nil {
		t.Fatal(err)
	}
	return obs.Apps[i].Replicas
}

func (r *overrideRig) override(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(args[:1:1], append([]string{"--config", overrideConfig, "--nats", r.url, "--by", "alice"}, args[1:]...)...)
	code := runOverride(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func (r *overrideRig) ledger(t *testing.T) []string {
	t.Helper()
	var got []string
	err := r.st.Ledger(time.Time{}, time.Time{}, "payment", func(e store.LedgerEntry) error {
		if e.Kind == recording.LedgerOverride {
			got = append(got, e.Detail)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestOverrideReplicasEndToEnd sends a replica pin through the CLI's code
// path over a real NATS server to a Soldier on a simulated cluster: the
// Soldier answers, its executor applies the pin above the policy, the pin is
// listed from the bus, it stops applying once it lapses, and each step is in
// the ledger.
func TestOverrideReplicasEndToEnd(t *testing.T) {
	r := newOverrideRig(t)
	start := time.Now()
	r.tick(t, start)
	policy := r.target(t, 0)
	pin := policy + 17 // within checkout's [2, 60]
	if pin > 60 {
		t.Fatalf("the policy already wants %d replicas of checkout-0", policy)
	}

	code, out, errOut := r.override(t, "replicas", "--app", "payment/checkout-0", "--replicas", strconv.Itoa(int(pin)), "--for", "15m", "--reason", "incident 123")
	if code != 0 || !strings.Contains(out, "applied by soldier payment from its next tick: payment/checkout-0 pinned at "+strconv.Itoa(int(pin))+" replicas") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = r.override(t, "list")
	if code != 0 || !regexp.MustCompile(`payment/checkout-0\s+`+strconv.Itoa(int(pin))+` replicas\s+\S+\s+1[45]m\S*\s+alice\s+incident 123`).MatchString(out) {
		t.Fatalf("list: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for k := 1; k <= 3; k++ {
		r.tick(t, start.Add(time.Duration(k)*10*time.Second))
		if got := r.target(t, 0); got != pin {
			t.Fatalf("tick %d with the pin: checkout-0 at %d, want the pin %d (policy %d)", k, got, pin, policy)
		}
	}
	// Lapsed: the policy's target returns (the cooldown after the pin's
	// scale-up is long past).
	r.tick(t, start.Add(15*time.Minute+time.Second))
	if got := r.target(t, 0); got == pin {
		t.Fatalf("after the pin lapsed checkout-0 is still at the pin %d", pin)
	}
	want := []string{"accepted payment/checkout-0 by alice", "applied payment/checkout-0 by alice", "expired payment/checkout-0 by alice"}
	got := r.ledger(t)
	if len(got) != len(want) {
		t.Fatalf("ledger:\n%s\nwant %d override entries", strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("ledger entry %d %q, want %q...", i, got[i], want[i])
		}
	}
}

func TestOverrideRefusalsAndCancel(t *testing.T) {
	r := newOverrideRig(t)
	now := time.Now()
	r.tick(t, now)
	// A share pin is the Commander's: the Soldier stays silent, nobody else
	// answers, and the CLI says who is missing.
	code, _, errOut := r.override(t, "share", "--domain", "payment", "--share", "0.3", "--for", "5m", "--reason", "r", "--timeout", "300ms")
	if code != 1 || !strings.Contains(errOut, "no answer from the Commander within 300ms") {
		t.Fatalf("share pin without a Commander: exit %d, stderr %s", code, errOut)
	}
	code, _, errOut = r.override(t, "cancel", "--app", "payment/ledger-1")
	if code != 1 || !strings.Contains(errOut, "refused by soldier payment: payment/ledger-1 has no pin to cancel") {
		t.Fatalf("cancel without a pin: exit %d, stderr %s", code, errOut)
	}
	code, out, errOut := r.override(t, "replicas", "--app", "payment/ledger-1", "--replicas", "99", "--for", "5m", "--reason", "r")
	if code != 0 || !strings.Contains(out, "(asked 99, held to [2,40])") {
		t.Fatalf("pin above max: exit %d, stdout %s stderr %s", code, out, errOut)
	}
	r.tick(t, now.Add(10*time.Second))
	if got := r.target(t, 5); got != 40 {
		t.Fatalf("ledger-1 at %d, want max_replicas 40", got)
	}
	code, out, errOut = r.override(t, "cancel", "--domain", "payment", "--app", "ledger-1", "--reason", "resolved")
	if code != 0 || !strings.Contains(out, "pin of payment/ledger-1 at 99 replicas lifted by alice: resolved") {
		t.Fatalf("cancel: exit %d, stdout %s stderr %s", code, out, errOut)
	}
	if len(r.sd.Overrides()) != 0 {
		t.Fatalf("pins after the cancel: %+v", r.sd.Overrides())
	}
	code, out, _ = r.override(t, "list", "--domain", "payment")
	if code != 0 || !strings.Contains(out, "no pins in force") {
		t.Fatalf("list after the cancel: exit %d\n%s", code, out)
	}
}

// directives keeps the last directive per domain.
type directives struct {
	last map[string]wire.Directive
}

func (d *directives) PublishDirective(_ context.Context, dir wire.Directive) error {
	d.last[dir.Domain] = dir
	return nil
}
func (d *directives) PublishAllocation(context.Context, wire.Allocation) error { return nil }

// TestOverrideShareEndToEnd sends a share pin through the CLI's code path to
// a Commander serving overrides as the commander daemon does: it answers, and
// its next directive for the domain carries the pinned share.
func TestOverrideShareEndToEnd(t *testing.T) {
	r := newOverrideRig(t) // the NATS server and config; its Soldier stays silent on share pins
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, bus.ConnectOptions{URL: r.url, Name: "commander", Cluster: r.cfg.Cluster.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pub := &directives{last: map[string]wire.Directive{}}
	cmd := commander.New(r.cfg, &commander.Forecast{ReserveMin: r.cfg.Commander.ReserveMin}, "forecast", pub, nil, 1, 0)
	if _, err := daemon.AttachCommanderOverrides(ctx, conn, cmd, time.Now, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	if err := conn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := cmd.Tick(ctx, now); err != nil {
		t.Fatal(err)
	}
	before := pub.last["data"].Share
	pin := 0.42
	if math.Abs(before-pin) < 0.1 {
		t.Fatalf("data already holds share %g", before)
	}
	code, out, errOut := r.override(t, "share", "--domain", "data", "--share", "0.42", "--for", "30m", "--reason", "backfill")
	if code != 0 || !strings.Contains(out, "applied by commander from its next tick: data pinned at share 0.42 until") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if _, err := cmd.Tick(ctx, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := pub.last["data"].Share; got != pin {
		t.Fatalf("data's directive share %g after the pin, want %g (before %g)", got, pin, before)
	}
	sum := 0.0
	for _, d := range pub.last {
		sum += d.Share
	}
	if sum > 1+1e-9 {
		t.Fatalf("shares sum to %g with the pin", sum)
	}
	code, out, _ = r.override(t, "list")
	if code != 0 || !regexp.MustCompile(`data\s+share 0.42\s+`).MatchString(out) {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
}

// TestOverrideTextIsCleanedBeforeItIsStoredOrPrinted pins with a --by and a
// --reason carrying a newline and terminal escapes: the pin kept in NATS,
// the ledger and `override list` hold them as spaces, one line per pin.
func TestOverrideTextIsCleanedBeforeItIsStoredOrPrinted(t *testing.T) {
	r := newOverrideRig(t)
	r.tick(t, time.Now())
	code, out, errOut := r.override(t, "replicas", "--app", "payment/checkout-0", "--replicas", "5", "--for", "15m",
		"--by", "mallory\n2026-01-01 accepted by root", "--reason", "x\x1b[2J\x1b]0;owned\x07 y")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	code, out, errOut = r.override(t, "list")
	if code != 0 {
		t.Fatalf("list: exit %d\nstderr: %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07") || len(strings.Split(strings.TrimSpace(out), "\n")) != 2 {
		t.Fatalf("list printed raw operator text:\n%q", out)
	}
	if !strings.Contains(out, "mallory 2026-01-01 accepted by root") {
		t.Fatalf("list:\n%s", out)
	}
	for _, e := range r.ledger(t) {
		if strings.ContainsAny(e, "\n\x1b\x07") {
			t.Fatalf("ledger holds raw operator text: %q", e)
		}
	}
}
