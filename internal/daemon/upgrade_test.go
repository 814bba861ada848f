package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
	"github.com/regimentd/regiment/wire/wiretest"
)

// sign10 signs d as a 1.0 Commander does (wiretest.Sign10) with kp.
func sign10(t *testing.T, kp nkeys.KeyPair, d wiretest.Directive10) wiretest.Directive10 {
	t.Helper()
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	d, err = wiretest.Sign10(d, pub, kp.Sign)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRollingUpgradeBothWays runs the two directions of a rolling upgrade
// over a real NATS server, with a Soldier of this build that requires
// signed directives: a 1.0 Commander's signed directive (previous minor, no
// minor field) is taken and acted on, and the report this Soldier then
// publishes passes the 1.0 decoder with the directive it follows. A
// directive of a minor two releases ahead is refused and counted as a
// version, and the Soldier keeps the 1.0 one.
func TestRollingUpgradeBothWays(t *testing.T) {
	e, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	cfg := overrideConfig()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	clock := func() time.Time { return now }
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()

	sconn, err := bus.Connect(ctx, bus.ConnectOptions{URL: e.ClientURL(), Name: "soldier-payment", Cluster: "prod", DirectiveKeys: []string{pub}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sconn.Close)
	scfg, err := soldier.NewConfig(cfg, "payment")
	if err != nil {
		t.Fatal(err)
	}
	sd := soldier.New(scfg, &soldier.SqrtStaffing{}, nopObserver{}, nopObserver{}, sconn, nil)
	reg := prometheus.NewRegistry()
	if _, err := AttachSoldier(ctx, sconn, sd, "payment", clock, NewMetrics(reg, "soldier"), hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	if err := sconn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	raw, err := nats.Connect(e.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	dsubj, _ := bus.DirectiveSubject("prod", "payment")
	rsubj, _ := bus.ReportSubject("prod", "payment")
	reports, err := raw.SubscribeSync(rsubj)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}

	// A 1.0 Commander's directive, as that release encodes and signs it.
	old := sign10(t, kp, wiretest.Directive10{Version: 1, Cluster: "prod", Domain: "payment", Term: 7, Seq: 1, IssuedAt: now,
		TTL: wiretest.Duration10(3 * time.Minute), Share: 0.2, Cores: 20, Urgency: 0.5, Headroom: 0.1, Policy: "forecast", Reason: "release 1.0"})
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"minor"`)) {
		t.Fatal("the 1.0 directive has a minor field")
	}
	if err := raw.Publish(dsubj, b); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the 1.0 directive taken", func() bool { got, ok := sd.Directive(); return ok && got.Term == 7 && got.Seq == 1 })
	if got, _ := sd.Directive(); got.Cores != 20 || got.Minor != 0 || got.Reason != "release 1.0" {
		t.Fatalf("the soldier follows %+v", got)
	}

	// A directive two minors ahead (a daemon that skipped a release):
	// refused as a version, signed or not.
	ahead := sign10(t, kp, wiretest.Directive10{Version: 1, Cluster: "prod", Domain: "payment", Term: 7, Seq: 2, IssuedAt: now,
		TTL: wiretest.Duration10(3 * time.Minute), Share: 0.3, Cores: 30, Policy: "forecast", Reason: "release 1.2"})
	b, err = json.Marshal(ahead)
	if err != nil {
		t.Fatal(err)
	}
	b = append([]byte(fmt.Sprintf(`{"minor":%d,`, wire.Minor+1)), b[1:]...)
	if err := raw.Publish(dsubj, b); err != nil {
		t.Fatal(err)
	}
	key := "regiment_soldier_rejected_messages_total{reason=" + wire.RejectVersion + "}"
	eventually(t, "the directive of minor 2 counted as a version", func() bool { return gathered(t, reg)[key] == 1 })
	if got, _ := sd.Directive(); got.Seq != 1 {
		t.Fatalf("the soldier follows seq %d, want the 1.0 directive's 1", got.Seq)
	}

	// This Soldier's report, read by a 1.0 Commander's decoder.
	if _, err := sd.Tick(ctx, now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	msg, err := reports.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r wiretest.Report10
	if err := wiretest.Decode10(msg.Data, &r); err != nil {
		t.Fatalf("a 1.0 Commander refuses this Soldier's report: %v\n%s", err, msg.Data)
	}
	if r.Domain != "payment" || r.DirectiveTerm != 7 || r.DirectiveSeq != 1 || r.BudgetCores != 20 {
		t.Fatalf("a 1.0 Commander reads %+v: want payment following term 7 seq 1 with 20 cores", r)
	}
}
