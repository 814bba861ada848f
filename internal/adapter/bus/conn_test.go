package bus

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/regimentd/regiment/wire"
)

func TestStartEmbeddedRequiresStoreDir(t *testing.T) {
	if _, err := StartEmbedded(EmbeddedOptions{}); err == nil {
		t.Fatal("started without a StoreDir")
	}
}

func TestEmbeddedShutdownIsIdempotent(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	if e.Port() <= 0 || !strings.HasPrefix(e.ClientURL(), "nats://127.0.0.1:") {
		t.Fatalf("port %d, url %q", e.Port(), e.ClientURL())
	}
	e.Shutdown()
	e.Shutdown()
}

func TestRoundTrip(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	ctx := context.Background()
	commander := connect(t, e.ClientURL(), "commander")
	soldier := connect(t, e.ClientURL(), "soldier-payment")

	t.Run("directive", func(t *testing.T) {
		fn, got := collect[wire.Directive]()
		sub, err := soldier.SubscribeDirectives("payment", fn)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		flush(t, soldier)
		other := directive("fraud", 1, 1)
		want := directive("payment", 1, 1)
		for _, d := range []wire.Directive{other, want} {
			if err := commander.PublishDirective(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		r := receive(t, got, "directive")
		if r.err != nil || !reflect.DeepEqual(r.v, want) {
			t.Fatalf("got %+v, %v; want %+v", r.v, r.err, want)
		}
	})

	t.Run("report from every domain", func(t *testing.T) {
		fn, got := collect[wire.DomainReport]()
		sub, err := commander.SubscribeReports(fn)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		flush(t, commander)
		for _, domain := range []string{"payment", "fraud"} {
			want := wire.DomainReport{
				Version: wire.Version, Cluster: testCluster, Domain: domain, Seq: 7, SentAt: t0,
				RPS: 1200, RPSP95: 1500, P99Seconds: 0.12, ErrorRate: 0.001, CPUUtilP75: 0.7,
				LivePods: 40, CoresUsed: 20, BudgetCores: 25, BudgetUtilisation: 0.8,
				DirectiveTerm: 1, DirectiveSeq: 3, Mode: wire.ModeShadow,
			}
			if err := soldier.PublishReport(ctx, want); err != nil {
				t.Fatal(err)
			}
			r := receive(t, got, "report")
			if r.err != nil || !reflect.DeepEqual(r.v, want) {
				t.Fatalf("got %+v, %v; want %+v", r.v, r.err, want)
			}
		}
	})

	t.Run("allocation", func(t *testing.T) {
		fn, got := collect[wire.Allocation]()
		sub, err := soldier.SubscribeAllocation(fn)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		flush(t, soldier)
		want := wire.Allocation{
			Version: wire.Version, Cluster: testCluster, Term: 1, Seq: 9, IssuedAt: t0,
			Shares: map[string]float64{"payment": 0.5, "fraud": 0.3}, Reserve: 0.2,
		}
		if err := commander.PublishAllocation(ctx, want); err != nil {
			t.Fatal(err)
		}
		r := receive(t, got, "allocation")
		if r.err != nil || !reflect.DeepEqual(r.v, want) {
			t.Fatalf("got %+v, %v; want %+v", r.v, r.err, want)
		}
	})

	t.Run("override for one domain and for all", func(t *testing.T) {
		fnOne, one := collect[wire.Override]()
		fnAll, all := collect[wire.Override]()
		subOne, err := soldier.SubscribeOverrides("fraud", fnOne)
		if err != nil {
			t.Fatal(err)
		}
		defer subOne.Unsubscribe()
		subAll, err := commander.SubscribeOverrides("", fnAll)
		if err != nil {
			t.Fatal(err)
		}
		defer subAll.Unsubscribe()
		flush(t, soldier)
		flush(t, commander)
		share, replicas := 0.4, 12
		pay := wire.Override{Version: wire.Version, Cluster: testCluster, Domain: "payment", Share: &share, IssuedAt: t0.Add(-time.Minute), Until: t0, By: "alice"}
		fraud := wire.Override{Version: wire.Version, Cluster: testCluster, Domain: "fraud", App: "fraud/scoring", Replicas: &replicas, IssuedAt: t0.Add(-time.Minute), Until: t0, By: "bob"}
		for _, o := range []wire.Override{pay, fraud} {
			if err := commander.PublishOverride(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		if r := receive(t, one, "fraud override"); r.err != nil || !reflect.DeepEqual(r.v, fraud) {
			t.Fatalf("fraud subscriber got %+v, %v", r.v, r.err)
		}
		for _, want := range []wire.Override{pay, fraud} {
			if r := receive(t, all, "override"); r.err != nil || !reflect.DeepEqual(r.v, want) {
				t.Fatalf("all-domain subscriber got %+v, %v; want %+v", r.v, r.err, want)
			}
		}
	})
}

// TestBadMessagesReachHandlerAsErrors publishes raw bytes, bypassing the
// publisher's validation, as a buggy or hostile peer would.
func TestBadMessagesReachHandlerAsErrors(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	soldier := connect(t, e.ClientURL(), "soldier-payment", func(o *ConnectOptions) {
		o.KnownDomain = func(d string) bool { return d == "payment" || d == "fraud" }
	})
	raw, err := nats.Connect(e.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()

	fn, got := collect[wire.Directive]()
	sub, err := soldier.SubscribeDirectives("payment", fn)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	flush(t, soldier)

	encode := func(mutate func(*wire.Directive)) []byte {
		d := directive("payment", 1, 1)
		mutate(&d)
		b, err := jsonMarshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		rule  string
		data  []byte
		want  error
		field string
	}{
		{"garbage is malformed", []byte("not json"), wire.ErrMalformed, ""},
		{"empty message is malformed", nil, wire.ErrMalformed, ""},
		{"oversized payload is too large", bytes.Repeat([]byte(" "), wire.MaxPayload+1), wire.ErrTooLarge, ""},
		{"unknown field is malformed", append(encode(func(*wire.Directive) {})[:10], []byte(`"x":1}`)...), wire.ErrMalformed, ""},
		{"share out of range is invalid", encode(func(d *wire.Directive) { d.Share = 1.3 }), wire.ErrInvalid, "share"},
		{"other version is invalid", encode(func(d *wire.Directive) { d.Version = 2 }), wire.ErrInvalid, "version"},
		{"other cluster is invalid", encode(func(d *wire.Directive) { d.Cluster = "staging" }), wire.ErrInvalid, "cluster"},
		{"other domain than the subject's is invalid", encode(func(d *wire.Directive) { d.Domain = "fraud" }), wire.ErrInvalid, "domain"},
	}
	subject, _ := DirectiveSubject(testCluster, "payment")
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if err := raw.Publish(subject, tt.data); err != nil {
				t.Fatal(err)
			}
			r := receive(t, got, "error")
			if !errors.Is(r.err, tt.want) {
				t.Fatalf("err = %v, want %v", r.err, tt.want)
			}
			if !reflect.DeepEqual(r.v, wire.Directive{}) {
				t.Errorf("got %+v with the error, want the zero directive", r.v)
			}
			var fe *wire.FieldError
			if tt.field != "" && (!errors.As(r.err, &fe) || fe.Field != tt.field) {
				t.Errorf("err = %v, want a field error on %q", r.err, tt.field)
			}
		})
	}
	t.Run("a good directive after bad ones is delivered", func(t *testing.T) {
		want := directive("payment", 1, 2)
		if err := raw.Publish(subject, encode(func(d *wire.Directive) { *d = want })); err != nil {
			t.Fatal(err)
		}
		if r := receive(t, got, "directive"); r.err != nil || !reflect.DeepEqual(r.v, want) {
			t.Fatalf("got %+v, %v", r.v, r.err)
		}
	})
}

func TestPublishRefusesInvalid(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	c := connect(t, e.ClientURL(), "commander", func(o *ConnectOptions) {
		o.KnownDomain = func(d string) bool { return d == "payment" }
	})
	ctx := context.Background()
	tests := []struct {
		rule    string
		publish func() error
	}{
		{"share out of range", func() error { d := directive("payment", 1, 1); d.Share = 1.3; return c.PublishDirective(ctx, d) }},
		{"other cluster", func() error {
			d := directive("payment", 1, 1)
			d.Cluster = "staging"
			return c.PublishDirective(ctx, d)
		}},
		{"unknown domain", func() error { return c.PublishDirective(ctx, directive("ledger", 1, 1)) }},
		{"report in unknown mode", func() error {
			return c.PublishReport(ctx, wire.DomainReport{Version: 1, Cluster: testCluster, Domain: "payment", SentAt: t0, Mode: "auto"})
		}},
		{"allocation not summing to 1", func() error {
			return c.PublishAllocation(ctx, wire.Allocation{Version: 1, Cluster: testCluster, IssuedAt: t0, Shares: map[string]float64{"payment": 0.5}})
		}},
		{"allocation with an unknown domain", func() error {
			return c.PublishAllocation(ctx, wire.Allocation{Version: 1, Cluster: testCluster, IssuedAt: t0, Shares: map[string]float64{"ledger": 1}})
		}},
		{"override with share and replicas", func() error {
			s, n := 0.1, 1
			return c.PublishOverride(ctx, wire.Override{Version: 1, Cluster: testCluster, Domain: "payment", App: "payment/a", Share: &s, Replicas: &n, Until: t0, By: "x"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if err := tt.publish(); !errors.Is(err, wire.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
	t.Run("canceled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := c.PublishDirective(ctx, directive("payment", 1, 1)); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// TestLastDirectiveOnNewConnection is a restarted Soldier: it connects after
// the Commander published and finds the latest directive at once.
func TestLastDirectiveOnNewConnection(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	ctx := context.Background()

	first := connect(t, e.ClientURL(), "soldier-before")
	if _, ok, err := first.LastDirective(ctx, "payment"); ok || err != nil {
		t.Fatalf("before any directive: ok %v, err %v; want false, nil", ok, err)
	}

	commander := connect(t, e.ClientURL(), "commander")
	for seq := uint64(1); seq <= 3; seq++ {
		if err := commander.PublishDirective(ctx, directive("payment", 4, seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := commander.PublishDirective(ctx, directive("fraud", 4, 3)); err != nil {
		t.Fatal(err)
	}

	restarted := connect(t, e.ClientURL(), "soldier-after")
	got, ok, err := restarted.LastDirective(ctx, "payment")
	if err != nil || !ok {
		t.Fatalf("ok %v, err %v; want the last directive", ok, err)
	}
	if want := directive("payment", 4, 3); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, ok, err := restarted.LastDirective(ctx, "merchant"); ok || err != nil {
		t.Fatalf("domain never directed: ok %v, err %v; want false, nil", ok, err)
	}
	// The connection that looked before the bucket existed finds it now.
	if got, ok, err := first.LastDirective(ctx, "fraud"); err != nil || !ok || got.Seq != 3 {
		t.Fatalf("got %+v, %v, %v", got, ok, err)
	}
	if _, _, err := restarted.LastDirective(ctx, "pay.ment"); err == nil {
		t.Fatal("no error for an invalid domain token")
	}
	// Fed through an Intake, the stored directive is a duplicate of a live one.
	var in wire.Intake
	now := t0.Add(time.Minute)
	if ok, reason := in.Accept(got, now); !ok {
		t.Fatalf("intake refused the stored directive: %s", reason)
	}
	if ok, reason := in.Accept(got, now); ok || reason != wire.RejectReplayed {
		t.Fatalf("intake accepted the same directive twice: %v %q", ok, reason)
	}
}

// TestReconnect restarts the server on the same port and store: the Conns
// reconnect, live delivery resumes, and the stored directive survived.
func TestReconnect(t *testing.T) {
	dir := t.TempDir()
	e1 := startServer(t, dir, RandomPort)
	port := e1.Port()
	ctx := context.Background()
	commander := connect(t, e1.ClientURL(), "commander")
	soldier := connect(t, e1.ClientURL(), "soldier-payment")

	fn, got := collect[wire.Directive]()
	sub, err := soldier.SubscribeDirectives("payment", fn)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	flush(t, soldier)
	if err := commander.PublishDirective(ctx, directive("payment", 1, 1)); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, got, "directive before restart"); r.err != nil || r.v.Seq != 1 {
		t.Fatalf("got %+v, %v", r.v, r.err)
	}

	e1.Shutdown()
	eventually(t, 5*time.Second, "both Conns to notice the disconnect", func() bool {
		return !commander.Connected() && !soldier.Connected()
	})
	// Disconnected, a directive is neither buffered (it would arrive stale)
	// nor stored: the error says so at once instead of after the JetStream
	// timeout.
	if err := commander.PublishDirective(ctx, directive("payment", 1, 100)); !errors.Is(err, nats.ErrConnectionReconnecting) {
		t.Fatalf("publish while disconnected: err = %v, want nats.ErrConnectionReconnecting", err)
	}
	// Nor is a report: buffered ones would reach the Commander stale after
	// the reconnect. It is dropped and counted.
	report := wire.DomainReport{Version: wire.Version, Cluster: testCluster, Domain: "payment", Seq: 1, SentAt: t0, Mode: wire.ModeActive}
	if err := soldier.PublishReport(ctx, report); err != nil || soldier.DroppedReports() != 1 {
		t.Fatalf("report while disconnected: err = %v, dropped %d; want nil and 1", err, soldier.DroppedReports())
	}
	rfn, reports := collect[wire.DomainReport]()
	if _, err := commander.SubscribeReports(rfn); err != nil {
		t.Fatal(err)
	}
	e2 := startServer(t, dir, port)
	eventually(t, 10*time.Second, "both Conns to reconnect", func() bool {
		return commander.Connected() && soldier.Connected()
	})

	// The soldier's subscription is restored asynchronously; publish until a
	// directive arrives.
	seq := uint64(1)
	deadline := time.Now().Add(10 * time.Second)
	for received := false; !received; {
		if time.Now().After(deadline) {
			t.Fatal("no directive received after reconnect")
		}
		seq++
		if err := commander.publishDirective(ctx, directive("payment", 1, seq), false); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-got:
			if r.err != nil {
				t.Fatal(r.err)
			}
			received = true
		case <-time.After(50 * time.Millisecond):
		}
	}

	// The report dropped while disconnected never arrives; the next does.
	flush(t, commander)
	report.Seq = 2
	if err := soldier.PublishReport(ctx, report); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, reports, "the report after reconnecting"); r.err != nil || r.v.Seq != 2 {
		t.Fatalf("the commander got report %+v, %v first; want seq 2 (seq 1 was dropped)", r.v, r.err)
	}

	// The directive stored before the restart is on disk in the new server.
	restarted := connect(t, e2.ClientURL(), "soldier-restarted")
	d, ok, err := restarted.LastDirective(ctx, "payment")
	if err != nil || !ok || d.Seq != 1 {
		t.Fatalf("last directive after server restart: %+v, %v, %v; want seq 1", d, ok, err)
	}
	// And the commander's cached bucket handle still works.
	if err := commander.PublishDirective(ctx, directive("payment", 1, seq+1)); err != nil {
		t.Fatal(err)
	}
	if d, _, err := restarted.LastDirective(ctx, "payment"); err != nil || d.Seq != seq+1 {
		t.Fatalf("last directive = seq %d, %v; want %d", d.Seq, err, seq+1)
	}
}

func TestTokenAuth(t *testing.T) {
	e, err := StartEmbedded(EmbeddedOptions{StoreDir: t.TempDir(), Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c, err := Connect(ctx, ConnectOptions{URL: e.ClientURL(), Cluster: testCluster}); err == nil {
		c.Close()
		t.Fatal("connected without the token")
	}
	c, err := Connect(ctx, ConnectOptions{URL: e.ClientURL(), Cluster: testCluster, Token: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestConnectRejectsBadOptions(t *testing.T) {
	ctx := context.Background()
	if _, err := Connect(ctx, ConnectOptions{Cluster: testCluster}); err == nil {
		t.Error("connected without a URL")
	}
	if _, err := Connect(ctx, ConnectOptions{URL: "nats://127.0.0.1:1", Cluster: "a.b"}); err == nil {
		t.Error("connected with a cluster that is not a token")
	}
	e := startServer(t, t.TempDir(), RandomPort)
	if c, err := Connect(ctx, ConnectOptions{URL: e.ClientURL(), Cluster: testCluster, Credentials: filepath.Join(t.TempDir(), "missing.creds")}); err == nil {
		c.Close()
		t.Error("connected with a missing credentials file")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Connect(canceled, ConnectOptions{URL: "nats://127.0.0.1:1", Cluster: testCluster}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestDrainDeliversInFlightThenCloses(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	ctx := context.Background()
	commander := connect(t, e.ClientURL(), "commander")
	soldier := connect(t, e.ClientURL(), "soldier-payment")

	release := make(chan struct{})
	var handled []uint64
	_, err := soldier.SubscribeDirectives("payment", func(d wire.Directive, err error) {
		<-release
		handled = append(handled, d.Seq)
	})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, soldier)
	for seq := uint64(1); seq <= 3; seq++ {
		if err := commander.publishDirective(ctx, directive("payment", 1, seq), false); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, commander)
	done := make(chan error, 1)
	eventually(t, 5*time.Second, "the messages to reach the soldier", func() bool {
		return soldier.nc.Stats().InMsgs == 3
	})
	go func() { done <- soldier.Drain() }()
	close(release)
	if err := receive(t, done, "drain"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(handled, []uint64{1, 2, 3}) {
		t.Fatalf("handled %v before drain returned, want [1 2 3]", handled)
	}
	if soldier.Connected() {
		t.Error("connected after drain")
	}
	if err := soldier.PublishReport(ctx, wire.DomainReport{Version: 1, Cluster: testCluster, Domain: "payment", SentAt: t0, Mode: wire.ModeActive}); err == nil {
		t.Error("published after drain")
	}
	if err := soldier.Drain(); err != nil {
		t.Errorf("second drain: %v", err)
	}
	soldier.Close()
	soldier.Close()
}

func TestBackoff(t *testing.T) {
	delay := backoff(100*time.Millisecond, time.Second, 0)
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := delay(i + 1); got != w*time.Millisecond {
			t.Errorf("attempt %d: %s, want %s", i+1, got, w*time.Millisecond)
		}
	}
	if got := delay(1 << 20); got != time.Second {
		t.Errorf("attempt 2^20: %s, want the cap", got)
	}
	jittered := backoff(100*time.Millisecond, time.Second, 50*time.Millisecond)
	for n := 1; n < 100; n++ {
		base := delay(n)
		if got := jittered(n); got < base || got >= base+50*time.Millisecond {
			t.Fatalf("attempt %d: %s, want in [%s, %s)", n, got, base, base+50*time.Millisecond)
		}
	}
}
