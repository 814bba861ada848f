package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/regimentd/regiment/wire"
)

// createPushConsumer asks the server, as c's user, for a push consumer on
// stream delivering the messages of filter to deliver: the route of issue
// 34. With durable the consumer is durable; legacy uses the API subject
// without the filter ($JS.API.CONSUMER.DURABLE.CREATE for a durable,
// CONSUMER.CREATE.<stream> otherwise). It fails when the server refuses or
// does not answer (a denied publish is dropped, so the request times out).
func createPushConsumer(ctx context.Context, c *Conn, stream, name, filter, deliver string, durable, legacy bool) error {
	cfg := map[string]any{"name": name, "deliver_subject": deliver, "filter_subject": filter,
		"ack_policy": "none", "deliver_policy": "last", "inactive_threshold": int64(time.Minute)}
	if durable {
		cfg["durable_name"] = name
	}
	body, err := json.Marshal(map[string]any{"stream_name": stream, "config": cfg})
	if err != nil {
		return err
	}
	subject := "$JS.API.CONSUMER.CREATE." + stream + "." + name + "." + filter
	switch {
	case legacy && durable:
		subject = "$JS.API.CONSUMER.DURABLE.CREATE." + stream + "." + name
	case legacy:
		subject = "$JS.API.CONSUMER.CREATE." + stream
	}
	m, err := c.nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		return fmt.Errorf("create consumer on %s: %w", subject, err)
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("create consumer on %s: %s", subject, resp.Error.Description)
	}
	return nil
}

// TestStoredMessagesDeliveredByAForeignConsumerAreRefused replays the attack
// of issue 34 on a server loaded with the config `regiment nats-config`
// renders: soldier-payment writes its own pin key "payment.fraud" (or
// "payment.x") holding a message for fraud, then a push consumer on the
// override stream, filtered to that key, delivers it on a subject that the
// Commander, fraud's Soldier or an observer subscribes to. The consumer is
// created with payment's own credential (refused by the server: Soldiers
// create no consumers) and with the operator's (which may list pins, so
// may create consumers): either way, no receiver takes the message. Each
// variant is durable and ephemeral, and through the filtered and the legacy
// API subjects.
func TestStoredMessagesDeliveredByAForeignConsumerAreRefused(t *testing.T) {
	s := startSecured(t, ServerTLS{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	commander := s.as(t, CommanderUser)
	if err := commander.EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	}
	payment := s.as(t, SoldierUser("payment"))
	fraud := s.as(t, SoldierUser("fraud"))
	observer := s.as(t, OperatorUser)
	operator := s.as(t, OperatorUser)
	ob, _ := OverrideBucket(testCluster)
	stream := "KV_" + ob

	// What each receiver hands its handler, as the daemon's handlers see it.
	type seen struct {
		what string
		err  error
	}
	got := make(chan seen, 64)
	sink := func(what string) func(err error) { return func(err error) { got <- seen{what, err} } }
	fraudOverride := sink("fraud's soldier: override")
	commanderOverride := sink("commander: override")
	commanderReport := sink("commander: report")
	fraudDirective := sink("fraud's soldier: directive")
	observerAllocation := sink("observer: allocation")
	subs := []func() (*Subscription, error){
		func() (*Subscription, error) {
			return fraud.ServeOverrides("fraud", func(_ wire.Override, err error) (wire.OverrideAck, bool) {
				fraudOverride(err)
				return wire.OverrideAck{}, false
			})
		},
		func() (*Subscription, error) {
			return commander.ServeOverrides("", func(_ wire.Override, err error) (wire.OverrideAck, bool) {
				commanderOverride(err)
				return wire.OverrideAck{}, false
			})
		},
		func() (*Subscription, error) {
			return commander.SubscribeReports(func(_ wire.DomainReport, err error) { commanderReport(err) })
		},
		func() (*Subscription, error) {
			return fraud.SubscribeDirectives("fraud", func(_ wire.Directive, err error) { fraudDirective(err) })
		},
		func() (*Subscription, error) {
			return observer.SubscribeAllocation(func(_ wire.Allocation, err error) { observerAllocation(err) })
		},
	}
	for _, sub := range subs {
		if _, err := sub(); err != nil {
			t.Fatal(err)
		}
	}
	// The server starts a push consumer's deliveries only while someone
	// subscribes to its delivery subject by name; the Commander's
	// subscription to every domain's reports is a wildcard, so an observer
	// watching fraud's reports (which the operator's credential may) gives
	// the interest.
	reportSubject, _ := ReportSubject(testCluster, "fraud")
	if _, err := observer.nc.Subscribe(reportSubject, func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Conn{fraud, commander, observer} {
		flush(t, c)
	}

	encode := func(v interface{ Encode() ([]byte, error) }) []byte {
		b, err := v.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	report := wire.DomainReport{Version: wire.Version, Cluster: testCluster, Domain: "fraud", SentAt: time.Now(),
		RPS: 1e6, DemandCores: 1e4, CoresUsed: 1e4, Mode: wire.ModeActive}
	alloc := wire.Allocation{Version: wire.Version, Cluster: testCluster, IssuedAt: t0,
		Shares: map[string]float64{"payment": 1}}
	directiveSubject, _ := DirectiveSubject(testCluster, "fraud")
	overrideSubject, _ := OverrideSubject(testCluster, "fraud")
	allocationSubject, _ := AllocationSubject(testCluster)

	targets := []struct {
		name    string
		key     string // payment's own pin key holding the payload
		payload []byte
		deliver string
		want    []string // the receivers that get the delivery
	}{
		{"fraud's replica pin to fraud's soldier", "payment.fraud", encode(replicaPin("fraud", "scoring-0", 0)), overrideSubject,
			[]string{"fraud's soldier: override", "commander: override"}},
		{"fraud's share pin to the commander", "payment.fraud", encode(sharePin("fraud", 0)), overrideSubject,
			[]string{"fraud's soldier: override", "commander: override"}},
		{"fraud's report to the commander", "payment.fraud", encode(report), reportSubject,
			[]string{"commander: report"}},
		{"fraud's directive to fraud's soldier", "payment.fraud", encode(directive("fraud", 99, 1)), directiveSubject,
			[]string{"fraud's soldier: directive"}},
		{"an allocation to an observer", "payment.x", encode(alloc), allocationSubject,
			[]string{"observer: allocation"}},
	}
	n := 0
	for _, tg := range targets {
		for _, attacker := range []struct {
			user string
			conn *Conn
		}{{SoldierUser("payment"), payment}, {OperatorUser, operator}} {
			for _, kind := range []struct {
				name            string
				durable, legacy bool
			}{{"ephemeral", false, false}, {"durable", true, false}, {"ephemeral, legacy API", false, true}, {"durable, legacy API", true, true}} {
				t.Run(fmt.Sprintf("%s, consumer by %s, %s", tg.name, attacker.user, kind.name), func(t *testing.T) {
					// payment may write its own pin keys with any content.
					if _, err := payment.js.Publish(ctx, "$KV."+ob+"."+tg.key, tg.payload); err != nil {
						t.Fatalf("payment cannot write its own key %s: %v", tg.key, err)
					}
					n++
					name := fmt.Sprintf("forged%d", n)
					// A watcher of the delivery subject on the attacker's side
					// would need a permission; the check below uses the
					// receivers' handlers, after the server answered.
					cctx, c := context.WithTimeout(ctx, time.Second)
					err := createPushConsumer(cctx, attacker.conn, stream, name, "$KV."+ob+"."+tg.key, tg.deliver, kind.durable, kind.legacy)
					c()
					if err == nil {
						// One consumer at a time: a later write to the key
						// must not reach this one's receivers.
						t.Cleanup(func() {
							if err := commander.js.DeleteConsumer(ctx, stream, name); err != nil {
								t.Errorf("delete consumer %s: %v", name, err)
							}
						})
					}
					if attacker.user == SoldierUser("payment") && err == nil {
						t.Errorf("payment's soldier created a consumer on the override stream (%s)", kind.name)
					}
					if err != nil {
						// Nothing was delivered; make sure of it after a round trip.
						for _, c := range []*Conn{fraud, commander, observer} {
							flush(t, c)
						}
						select {
						case g := <-got:
							t.Fatalf("%s handed a message (err %v) though no consumer was created", g.what, g.err)
						default:
						}
						return
					}
					for range tg.want {
						g := receive(t, got, "the forged delivery")
						if g.err == nil {
							t.Errorf("%s accepted %s delivered by %s's consumer %s", g.what, tg.name, attacker.user, name)
						} else if !errors.Is(g.err, ErrMisrouted) {
							t.Errorf("%s refused it for another reason: %v", g.what, g.err)
						}
					}
				})
			}
		}
	}
}

// TestMessagesWithAJetStreamReplyAreRefused: a message on the right subject
// but carrying a JetStream reply subject (an ack subject, as a consumer's
// deliveries do), a $KV subject or another message subject as its reply,
// rather than a request's inbox, is not taken. The server is unsecured: a
// secured one already drops a publish whose reply its sender may not
// subscribe to, and a client may not set a "$JS.ACK." reply at all: the
// consumer replay above covers that one.
func TestMessagesWithAJetStreamReplyAreRefused(t *testing.T) {
	e := startServer(t, t.TempDir(), RandomPort)
	commander := connect(t, e.ClientURL(), "commander")
	payment := connect(t, e.ClientURL(), "payment")
	fn, got := collect[wire.DomainReport]()
	if _, err := commander.SubscribeReports(fn); err != nil {
		t.Fatal(err)
	}
	flush(t, commander)
	subject, _ := ReportSubject(testCluster, "payment")
	r := wire.DomainReport{Version: wire.Version, Cluster: testCluster, Domain: "payment", SentAt: time.Now(),
		RPS: 1, DemandCores: 1, CoresUsed: 1, Mode: wire.ModeActive}
	b, _ := r.Encode()
	for _, reply := range []string{"regiment.prod.directive.fraud", "$KV.regiment_prod_overrides.payment"} {
		if err := payment.nc.PublishMsg(&nats.Msg{Subject: subject, Reply: reply, Data: b}); err != nil {
			t.Fatal(err)
		}
		flush(t, payment)
		if g := receive(t, got, "the report with reply "+reply); !errors.Is(g.err, ErrMisrouted) {
			t.Errorf("a report with reply %q: got %+v, %v; want ErrMisrouted", reply, g.v, g.err)
		}
	}
	// The same report without a reply is taken.
	if err := payment.PublishReport(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if g := receive(t, got, "the plain report"); g.err != nil {
		t.Fatalf("a plain report was refused: %v", g.err)
	}
}

// TestOverridesNeedTheOperatorsSignature: with OverrideKeys, the Commander
// and a Soldier take a live override only when the operator's key signed it
// (an unsigned one, one signed by another key, and one altered after
// signing are refused), and Overrides refuses stored pins that are
// unsigned (written before overrides were signed) with the reason, while
// returning the signed ones.
func TestOverridesNeedTheOperatorsSignature(t *testing.T) {
	s := startSecured(t, ServerTLS{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newSigner := func() *Signer {
		sg, err := EphemeralSigner()
		if err != nil {
			t.Fatal(err)
		}
		return sg
	}
	operatorKey, otherKey := newSigner(), newSigner()
	trust := func(o *ConnectOptions) { o.OverrideKeys = []string{operatorKey.PublicKey()} }
	commander := s.as(t, CommanderUser, trust)
	fraud := s.as(t, SoldierUser("fraud"), trust)
	if err := commander.EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	}
	cfn, cgot := collect[wire.Override]()
	if _, err := commander.SubscribeOverrides("", cfn); err != nil {
		t.Fatal(err)
	}
	ffn, fgot := collect[wire.Override]()
	if _, err := fraud.SubscribeOverrides("fraud", ffn); err != nil {
		t.Fatal(err)
	}
	flush(t, commander)
	flush(t, fraud)

	signed := func(sg *Signer, o wire.Override) wire.Override {
		o, err := sg.SignOverride(o)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	altered := signed(operatorKey, replicaPin("fraud", "scoring-0", 3))
	*altered.Replicas = 0
	operator := s.as(t, OperatorUser)
	for _, tc := range []struct {
		name    string
		o       wire.Override
		got     chan result[wire.Override]
		wantErr error
	}{
		{"unsigned share pin", sharePin("fraud", 0), cgot, wire.ErrUnsigned},
		{"share pin signed by another key", signed(otherKey, sharePin("fraud", 0)), cgot, wire.ErrBadSignature},
		{"replica pin altered after signing", altered, fgot, wire.ErrBadSignature},
		{"share pin signed by the operator", signed(operatorKey, sharePin("fraud", 0.5)), cgot, nil},
		{"replica pin signed by the operator", signed(operatorKey, replicaPin("fraud", "scoring-0", 2)), fgot, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := operator.PublishOverride(ctx, tc.o); err != nil {
				t.Fatal(err)
			}
			flush(t, operator)
			// Both receivers see every override of fraud; the one that
			// owns it is checked.
			for _, ch := range []chan result[wire.Override]{cgot, fgot} {
				r := receive(t, ch, tc.name)
				if ch != tc.got {
					continue
				}
				if !errors.Is(r.err, tc.wantErr) || (tc.wantErr == nil) != (r.err == nil) {
					t.Fatalf("got %+v, %v; want error %v", r.v, r.err, tc.wantErr)
				}
			}
		})
	}

	t.Run("the operator's connection signs what it sends", func(t *testing.T) {
		signing := s.as(t, OperatorUser, func(o *ConnectOptions) { o.OverrideSigner = operatorKey })
		if err := signing.PublishOverride(ctx, sharePin("fraud", 0.25)); err != nil {
			t.Fatal(err)
		}
		flush(t, signing)
		if r := receive(t, cgot, "the signed pin"); r.err != nil || r.v.Signer != operatorKey.PublicKey() {
			t.Fatalf("got %+v, %v; want it taken, signed by %s", r.v, r.err, operatorKey.PublicKey())
		}
		receive(t, fgot, "the signed pin at fraud's soldier")
	})

	t.Run("an unsigned request is answered with the refusal by its owner", func(t *testing.T) {
		serving := s.as(t, CommanderUser, trust)
		var seen atomic.Int32
		if _, err := serving.ServeOverrides("", answer("commander", true, &seen)); err != nil {
			t.Fatal(err)
		}
		flush(t, serving)
		rctx, c := context.WithTimeout(ctx, 5*time.Second)
		defer c()
		a, err := operator.RequestOverride(rctx, sharePin("fraud", 0))
		if err != nil || a.Accepted || a.From != "commander" || !strings.Contains(a.Reason, "unsigned") || seen.Load() != 0 {
			t.Fatalf("answer %+v, %v (handler saw %d); want a refusal naming the missing signature", a, err, seen.Load())
		}
		receive(t, cgot, "the unsigned request at the commander")
		receive(t, fgot, "the unsigned request at fraud's soldier")
	})

	t.Run("stored unsigned pins are refused with the reason", func(t *testing.T) {
		plain := s.as(t, CommanderUser) // stores as an older Commander did
		if err := plain.StoreOverride(ctx, replicaPin("fraud", "legacy-0", 1)); err != nil {
			t.Fatal(err)
		}
		if err := commander.StoreOverride(ctx, signed(operatorKey, replicaPin("fraud", "scoring-0", 2))); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*Conn{commander, fraud} {
			got, err := c.Overrides(ctx, "fraud")
			if len(got) != 1 || got[0].App != "fraud/scoring-0" {
				t.Errorf("stored pins read: %+v; want the signed one only", got)
			}
			if !errors.Is(err, wire.ErrUnsigned) || !strings.Contains(err.Error(), "fraud.legacy-0") || !strings.Contains(err.Error(), "re-issue") {
				t.Errorf("error %v; want the unsigned fraud.legacy-0 named, with the way out", err)
			}
		}
	})
}
