package bus

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/regimentd/regiment/wire"
)

func sharePin(domain string, share float64) wire.Override {
	return wire.Override{Version: wire.Version, Cluster: testCluster, Domain: domain, Share: &share,
		IssuedAt: t0, Until: t0.Add(30 * time.Minute), By: "alice", Reason: "incident 123"}
}

func replicaPin(domain, app string, n int) wire.Override {
	return wire.Override{Version: wire.Version, Cluster: testCluster, Domain: domain, App: domain + "/" + app, Replicas: &n,
		IssuedAt: t0, Until: t0.Add(15 * time.Minute), By: "bob"}
}

// answer is a ServeOverrides handler for one role: it answers what is its own
// (share overrides for the Commander, replica overrides for a Soldier).
func answer(from string, accept bool, seen *atomic.Int32) func(wire.Override, error) (wire.OverrideAck, bool) {
	return func(o wire.Override, err error) (wire.OverrideAck, bool) {
		if err != nil || o.ForCommander() != (from == "commander") {
			return wire.OverrideAck{}, false
		}
		seen.Add(1)
		return wire.OverrideAck{Version: wire.Version, Cluster: o.Cluster, Domain: o.Domain, App: o.App, From: from,
			Accepted: accept, At: t0, Reason: "pinned " + o.Target()}, true
	}
}

func TestRequestOverrideIsAnsweredByItsOwner(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	commander := connect(t, e.ClientURL(), "commander")
	soldier := connect(t, e.ClientURL(), "soldier-payment")
	operator := connect(t, e.ClientURL(), "operator")
	var cseen, sseen atomic.Int32
	if _, err := commander.ServeOverrides("", answer("commander", true, &cseen)); err != nil {
		t.Fatal(err)
	}
	if _, err := soldier.ServeOverrides("payment", answer("soldier", false, &sseen)); err != nil {
		t.Fatal(err)
	}
	flush(t, commander)
	flush(t, soldier)

	tests := []struct {
		rule     string
		o        wire.Override
		from     string
		accepted bool
	}{
		{"share pin is answered by the commander", sharePin("payment", 0.3), "commander", true},
		{"replica pin is answered by the domain's soldier", replicaPin("payment", "checkout-0", 20), "soldier", false},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			a, err := operator.RequestOverride(ctx, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if a.From != tt.from || a.Accepted != tt.accepted || a.Domain != tt.o.Domain || a.App != tt.o.App {
				t.Fatalf("ack %+v, want from %s accepted %v", a, tt.from, tt.accepted)
			}
		})
	}
	if cseen.Load() != 1 || sseen.Load() != 1 {
		t.Fatalf("commander answered %d, soldier %d; want 1 each", cseen.Load(), sseen.Load())
	}
}

func TestRequestOverrideWithoutResponder(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	operator := connect(t, e.ClientURL(), "operator")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := operator.RequestOverride(ctx, replicaPin("fraud", "scoring", 3))
	if !errors.Is(err, ErrNoResponder) {
		t.Fatalf("err = %v, want ErrNoResponder", err)
	}

	// A subscriber that never answers (the Commander, for a replica pin)
	// leaves the request to time out at ctx's deadline.
	commander := connect(t, e.ClientURL(), "commander")
	var seen atomic.Int32
	if _, err := commander.ServeOverrides("", answer("commander", true, &seen)); err != nil {
		t.Fatal(err)
	}
	flush(t, commander)
	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := operator.RequestOverride(short, replicaPin("fraud", "scoring", 3)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
}

func TestRequestOverrideRefusesInvalid(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	operator := connect(t, e.ClientURL(), "operator", func(o *ConnectOptions) {
		o.KnownDomain = func(d string) bool { return d == "payment" }
	})
	ctx := context.Background()
	long := sharePin("payment", 0.3)
	long.Until = long.IssuedAt.Add(25 * time.Hour)
	other := sharePin("payment", 0.3)
	other.Cluster = "staging"
	for name, o := range map[string]wire.Override{"pin over 24h": long, "unknown domain": sharePin("ledger", 0.1), "other cluster": other} {
		if _, err := operator.RequestOverride(ctx, o); !errors.Is(err, wire.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestStoredOverridesSurviveReconnection(t *testing.T) {
	dir := t.TempDir()
	e := startServer(t, dir, RandomPort)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := connect(t, e.ClientURL(), "soldier-payment")
	if got, err := c.Overrides(ctx, ""); err != nil || len(got) != 0 {
		t.Fatalf("before any pin: %v, %v; want none", got, err)
	}
	pins := []wire.Override{sharePin("payment", 0.3), replicaPin("payment", "checkout-0", 20), replicaPin("payment", "checkout-1", 4), replicaPin("fraud", "scoring", 9)}
	for _, o := range pins {
		if err := c.StoreOverride(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// A newer pin of the same target replaces the old; a cancel deletes.
	newer := replicaPin("payment", "checkout-0", 25)
	newer.IssuedAt = t0.Add(time.Minute)
	if err := c.StoreOverride(ctx, newer); err != nil {
		t.Fatal(err)
	}
	cancelPin := wire.Override{Version: wire.Version, Cluster: testCluster, Domain: "payment", App: "payment/checkout-1", Cancel: true, IssuedAt: t0.Add(2 * time.Minute), By: "bob"}
	if err := c.StoreOverride(ctx, cancelPin); err != nil {
		t.Fatal(err)
	}

	restarted := connect(t, e.ClientURL(), "soldier-payment-restarted")
	got, err := restarted.Overrides(ctx, "payment")
	if err != nil {
		t.Fatal(err)
	}
	if want := []wire.Override{pins[0], newer}; !reflect.DeepEqual(got, want) {
		t.Fatalf("payment pins:\n%+v\nwant\n%+v", got, want)
	}
	all, err := restarted.Overrides(ctx, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("all pins: %+v, %v; want 3", all, err)
	}
	if _, err := restarted.Overrides(ctx, "pay.ment"); err == nil {
		t.Fatal("no error for an invalid domain token")
	}
}

func TestOverrideAnswersGoOnlyToInboxes(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	commander := connect(t, e.ClientURL(), "commander")
	var seen atomic.Int32
	if _, err := commander.ServeOverrides("", answer("commander", true, &seen)); err != nil {
		t.Fatal(err)
	}
	flush(t, commander)

	// A raw client aims a share pin's answer at a directive subject.
	raw, err := nats.Connect(e.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	dirSubj, _ := DirectiveSubject(testCluster, "payment")
	forged, err := raw.SubscribeSync(dirSubj)
	if err != nil {
		t.Fatal(err)
	}
	ovSubj, _ := OverrideSubject(testCluster, "payment")
	b, err := sharePin("payment", 0.3).Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.PublishMsg(&nats.Msg{Subject: ovSubj, Reply: dirSubj, Data: b}); err != nil {
		t.Fatal(err)
	}
	// Flushed, the forged message has reached the server (and the
	// Commander's subscription) before the proper request is sent from
	// another connection: the server orders only what it has received.
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}
	// A proper request afterwards is served after the forged one (one
	// subscription delivers in order), so once it is answered the forged
	// one has been handled: refused (ErrMisrouted), its reply not being an
	// inbox, so the handler does not count it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	operator := connect(t, e.ClientURL(), "operator")
	if _, err := operator.RequestOverride(ctx, sharePin("payment", 0.3)); err != nil {
		t.Fatal(err)
	}
	if seen.Load() != 1 {
		t.Fatalf("commander handled %d overrides, want 1", seen.Load())
	}
	if err := raw.Flush(); err != nil {
		t.Fatal(err)
	}
	if m, err := forged.NextMsg(100 * time.Millisecond); err == nil {
		t.Fatalf("an answer reached the directive subject: %s", m.Data)
	}
}
