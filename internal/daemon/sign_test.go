package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// signTestDirective is a valid directive for domain at now: cores of
// overrideConfig's 100-core pool.
func signTestDirective(domain string, term, seq uint64, now time.Time, cores float64) wire.Directive {
	return wire.Directive{Version: wire.Version, Cluster: "prod", Domain: domain, Term: term, Seq: seq, IssuedAt: now,
		TTL: wire.Duration(3 * time.Minute), Share: cores / 100, Cores: cores, Urgency: 0.5, Headroom: 0.1, Policy: "forecast", Reason: "test"}
}

// eventually polls cond until it holds or 5 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline, not synchronising
	}
}

// TestForgedDirectivesAreRejectedAndCounted: on a real server without
// authentication (the quick start: anyone may publish a directive), a
// Soldier that requires signatures takes the Commander's directives, signed
// with either key of a rollover, and refuses well-formed directives that
// are unsigned, signed with another key, or altered after signing, counting
// each by reason; a directive of another domain counts as wrong_domain. A
// restarted Soldier refuses the forged directive left in the bucket too.
func TestForgedDirectivesAreRejectedAndCounted(t *testing.T) {
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
	oldKey, _ := bus.EphemeralSigner()
	newKey, _ := bus.EphemeralSigner()
	forgerKey, _ := bus.EphemeralSigner()
	keys := []string{oldKey.PublicKey(), newKey.PublicKey()}

	conn := func(name string, signer *bus.Signer, keys []string) *bus.Conn {
		c, err := bus.Connect(ctx, bus.ConnectOptions{URL: e.ClientURL(), Name: name, Cluster: "prod", Signer: signer, DirectiveKeys: keys})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	startSoldier := func(name string) (*soldier.Soldier, *Metrics, *prometheus.Registry) {
		scfg, err := soldier.NewConfig(cfg, "payment")
		if err != nil {
			t.Fatal(err)
		}
		sd := soldier.New(scfg, &soldier.SqrtStaffing{}, nopObserver{}, nopObserver{}, nil, nil)
		reg := prometheus.NewRegistry()
		m := NewMetrics(reg, "soldier")
		c := conn(name, nil, keys)
		if _, err := AttachSoldier(ctx, c, sd, "payment", clock, m, hclog.NewNullLogger()); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return sd, m, reg
	}
	sd, _, reg := startSoldier("soldier-1")
	count := func(reg *prometheus.Registry, reason string) float64 {
		return gathered(t, reg)["regiment_soldier_rejected_messages_total{reason="+reason+"}"]
	}

	oldCommander := conn("commander-old", oldKey, nil)
	newCommander := conn("commander-new", newKey, nil)
	forger := conn("forger", nil, nil)
	keyThief := conn("key-thief", forgerKey, nil)
	raw, err := nats.Connect(e.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	subject, _ := bus.DirectiveSubject("prod", "payment")

	// The Commander's directive, signed with the old key, then the new one.
	for i, c := range []*bus.Conn{oldCommander, newCommander} {
		d := signTestDirective("payment", 1, uint64(i+1), now, 20)
		if err := c.PublishDirective(ctx, d); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the commander's directive", func() bool { got, ok := sd.Directive(); return ok && got.Seq == d.Seq })
	}

	forged := signTestDirective("payment", 1<<62, 1, now, 0.5)
	steps := []struct {
		rule   string
		send   func() error
		reason string
	}{
		{"an unsigned directive is refused", func() error { return forger.PublishDirective(ctx, forged) }, wire.RejectUnsigned},
		{"a directive signed with another key is refused", func() error { return keyThief.PublishDirective(ctx, forged) }, wire.RejectBadSignature},
		{"a directive altered after signing is refused", func() error {
			d, err := newKey.Sign(signTestDirective("payment", 1, 3, now, 20))
			if err != nil {
				return err
			}
			d.Cores, d.Term = 0.5, 1<<62
			b, err := d.Encode()
			if err != nil {
				return err
			}
			return raw.Publish(subject, b)
		}, wire.RejectBadSignature},
		{"another domain's directive is wrong_domain", func() error {
			d, err := newKey.Sign(signTestDirective("fraud", 1, 4, now, 20))
			if err != nil {
				return err
			}
			b, err := d.Encode()
			if err != nil {
				return err
			}
			return raw.Publish(subject, b)
		}, wire.RejectWrongDomain},
	}
	for _, st := range steps {
		t.Run(st.rule, func(t *testing.T) {
			before := count(reg, st.reason)
			if err := st.send(); err != nil {
				t.Fatal(err)
			}
			eventually(t, st.reason+" counted", func() bool { return count(reg, st.reason) == before+1 })
			if got, _ := sd.Directive(); got.Term != 1 || got.Seq != 2 || got.Cores != 20 {
				t.Fatalf("the soldier now follows %+v", got)
			}
		})
	}

	// The forger's unsigned directive is also the bucket's last one: a
	// restarted Soldier refuses it and counts it.
	if err := forger.PublishDirective(ctx, forged); err != nil {
		t.Fatal(err)
	}
	sd2, _, reg2 := startSoldier("soldier-2")
	if n := count(reg2, wire.RejectUnsigned); n != 1 {
		t.Fatalf("the restarted soldier counted %v unsigned directives, want 1 (the bucket's)", n)
	}
	if _, ok := sd2.Directive(); ok {
		t.Fatal("the restarted soldier took the forged directive")
	}
	// And takes the Commander's next.
	d := signTestDirective("payment", 1, 5, now, 21)
	if err := newCommander.PublishDirective(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the restarted soldier's directive", func() bool { got, ok := sd2.Directive(); return ok && got.Seq == 5 })
}
