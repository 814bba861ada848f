package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/bus/bustest"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// rawAs connects to sec as user with a plain nats.go connection: what an
// attacker holding that user's seed has.
func rawAs(t *testing.T, sec *bustest.Secured, user string) *nats.Conn {
	t.Helper()
	opt, err := nats.NkeyOptionFromSeed(sec.Seed(user))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(sec.URL, opt, nats.CustomInboxPrefix(bus.InboxPrefix(sec.Cluster, user)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// TestForgedPinsThroughAConsumerAreNotTakenOrStored replays issue 34 against
// the daemons' override handling on a server secured as `regiment
// nats-config` renders it: soldier-payment writes its own pin key
// "payment.fraud" holding a pin for fraud, and a push consumer (created with
// the operator's credential; a Soldier's may create none) delivers it on
// fraud's override subject. Neither fraud's Soldier nor the Commander takes
// the pin or stores it, so a restart does not restore it either; a real pin
// sent afterwards is taken, which shows the forged one was handled first.
func TestForgedPinsThroughAConsumerAreNotTakenOrStored(t *testing.T) {
	cfg := overrideConfig()
	sec := bustest.StartSecured(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := hclog.NewNullLogger()
	now := time.Now().UTC()
	clock := func() time.Time { return now }

	cconn := sec.Connect(t, bus.CommanderUser, func(o *bus.ConnectOptions) { o.KnownDomain = func(d string) bool { return cfg.Domain(d) >= 0 } })
	if err := cconn.EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	}
	cmd := commander.New(cfg, &commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", nopPublisher{}, nil, 1, 0)
	if _, err := AttachCommanderOverrides(ctx, cconn, cmd, clock, log); err != nil {
		t.Fatal(err)
	}
	fconn := sec.Connect(t, bus.SoldierUser("fraud"), func(o *bus.ConnectOptions) { o.KnownDomain = func(d string) bool { return cfg.Domain(d) >= 0 } })
	scfg, err := soldier.NewConfig(cfg, "fraud")
	if err != nil {
		t.Fatal(err)
	}
	sd := soldier.New(scfg, &soldier.SqrtStaffing{}, nopObserver{}, nopObserver{}, nil, nil)
	if _, err := AttachSoldierOverrides(ctx, fconn, sd, "fraud", clock, log); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*bus.Conn{cconn, fconn} {
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}

	payment := rawAs(t, sec, bus.SoldierUser("payment"))
	pjs, err := jetstream.New(payment)
	if err != nil {
		t.Fatal(err)
	}
	attacker := rawAs(t, sec, bus.OperatorUser)
	// A watcher on fraud's override subject (the Commander's credential may
	// subscribe to it) sees the delivery; the server hands it to the
	// daemons' connections in the same pass.
	watcher := rawAs(t, sec, bus.CommanderUser)
	overrideFraud, _ := bus.OverrideSubject(cfg.Cluster.Name, "fraud")
	watch, err := watcher.SubscribeSync(overrideFraud)
	if err != nil {
		t.Fatal(err)
	}
	if err := watcher.Flush(); err != nil {
		t.Fatal(err)
	}
	ob, _ := bus.OverrideBucket(cfg.Cluster.Name)
	zero, share := 0, 0.0
	forged := []wire.Override{
		{Version: wire.Version, Cluster: "prod", Domain: "fraud", App: "fraud/web-0", Replicas: &zero, IssuedAt: now, Until: now.Add(2 * time.Hour), By: "mallory"},
		{Version: wire.Version, Cluster: "prod", Domain: "fraud", Share: &share, IssuedAt: now, Until: now.Add(2 * time.Hour), By: "mallory"},
	}
	for i, o := range forged {
		b, err := o.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pjs.Publish(ctx, "$KV."+ob+".payment.fraud", b); err != nil {
			t.Fatalf("payment's soldier cannot write its own key: %v", err)
		}
		name := []string{"forged-replicas", "forged-share"}[i]
		body, _ := json.Marshal(map[string]any{"stream_name": "KV_" + ob, "config": map[string]any{
			"name": name, "durable_name": name, "deliver_subject": overrideFraud, "filter_subject": "$KV." + ob + ".payment.fraud",
			"ack_policy": "none", "deliver_policy": "last"}})
		if _, err := attacker.RequestWithContext(ctx, "$JS.API.CONSUMER.CREATE.KV_"+ob+"."+name+".$KV."+ob+".payment.fraud", body); err != nil {
			t.Fatal(err)
		}
		if _, err := watch.NextMsg(5 * time.Second); err != nil {
			t.Fatalf("the forged %s was not delivered: %v", o.Target(), err)
		}
	}
	// A real pin of each kind after the forged ones, on other targets: once
	// answered, the forged ones before them on the same subscriptions were
	// handled.
	operator := sec.Connect(t, bus.OperatorUser)
	n, half := 3, 0.5
	for _, o := range []wire.Override{
		{Version: wire.Version, Cluster: "prod", Domain: "fraud", App: "fraud/web-1", Replicas: &n, IssuedAt: now, Until: now.Add(time.Hour), By: "alice"},
		{Version: wire.Version, Cluster: "prod", Domain: "payment", Share: &half, IssuedAt: now, Until: now.Add(time.Hour), By: "alice"},
	} {
		if a, err := operator.RequestOverride(ctx, o); err != nil || !a.Accepted {
			t.Fatalf("the real pin of %s: %+v, %v", o.Target(), a, err)
		}
	}
	for _, o := range append(sd.Overrides(), cmd.Overrides()...) {
		if o.By == "mallory" {
			t.Errorf("a daemon took the forged pin of %s", o.Target())
		}
	}
	// The attacker's own key holds fraud's pin: listed, it is refused as
	// not matching its key.
	stored, err := cconn.Overrides(ctx, "")
	if err == nil || !strings.Contains(err.Error(), "override payment.fraud: entry does not match its key") {
		t.Errorf("listing the pins: %v; want payment.fraud refused", err)
	}
	if len(stored) != 2 {
		t.Errorf("stored pins %+v; want the two real ones", stored)
	}
	for _, o := range stored {
		if o.By == "mallory" {
			t.Errorf("the forged pin of %s was stored: a restart would restore it", o.Target())
		}
	}
}
