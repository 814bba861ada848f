package daemon

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// lockedBuffer is a log sink safe for the subscription's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestPoisonDirectivesDoNotWedgeTheSoldier: on a real server without
// authentication or signatures (the quick start, where anyone may publish a
// directive), well-formed directives no real Commander sends (issue 16: a
// term of 2^63, a seq jump of 1000, a 24 h TTL, 0.5 cores for a 30% share)
// are refused, counted and logged at Warn with their reason, and the Soldier
// keeps following the real Commander. A poison within the bounds, which
// only signatures can refuse, holds the Soldier back only until it expires:
// the real Commander's next directive after that is taken, without a restart.
func TestPoisonDirectivesDoNotWedgeTheSoldier(t *testing.T) {
	e, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	cfg := overrideConfig() // Commander tick 60s, directive TTL 3m, 100 cores
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	var logs lockedBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})
	scfg, err := soldier.NewConfig(cfg, "payment")
	if err != nil {
		t.Fatal(err)
	}
	sd := soldier.New(scfg, &soldier.SqrtStaffing{}, nopObserver{}, nopObserver{}, nil, nil)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, "soldier")
	sconn := connectTest(t, e.ClientURL(), "soldier", cfg)
	if _, err := AttachSoldier(ctx, sconn, sd, "payment", clock, m, log); err != nil {
		t.Fatal(err)
	}
	if err := sconn.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	count := func(reason string) float64 {
		return gathered(t, reg)["regiment_soldier_rejected_messages_total{reason="+reason+"}"]
	}
	real := connectTest(t, e.ClientURL(), "commander", cfg)
	attacker := connectTest(t, e.ClientURL(), "attacker", cfg)

	term := commander.FirstTerm(clock())
	var seq uint64
	// follow publishes the real Commander's next directive and waits until
	// the Soldier holds it.
	follow := func(what string) {
		t.Helper()
		advance(cfg.Commander.Tick)
		seq++
		d := signTestDirective("payment", term, seq, clock(), 30)
		if err := real.PublishDirective(ctx, d); err != nil {
			t.Fatal(err)
		}
		eventually(t, what, func() bool { got, _ := sd.Directive(); return got.Term == term && got.Seq == seq })
	}
	follow("the commander's first directive")

	poison := func(mod func(*wire.Directive)) wire.Directive {
		d := signTestDirective("payment", term, seq+1, clock(), 30)
		mod(&d)
		return d
	}
	for _, tt := range []struct {
		rule   string
		mod    func(*wire.Directive)
		reason string
	}{
		{"a term no clock gives is refused", func(d *wire.Directive) { d.Term = 1 << 63 }, wire.RejectTermAhead},
		{"a seq jump of 1000 is refused", func(d *wire.Directive) { d.Seq += 1000 }, wire.RejectSeqJump},
		{"a 24h TTL is refused", func(d *wire.Directive) { d.TTL = wire.Duration(24 * time.Hour) }, wire.RejectTTL},
		{"cores past the share are refused", func(d *wire.Directive) { d.Cores = d.Share*cfg.Cluster.CapacityCores + 10 }, wire.RejectBudget},
	} {
		t.Run(tt.rule, func(t *testing.T) {
			before := count(tt.reason)
			if err := attacker.PublishDirective(ctx, poison(tt.mod)); err != nil {
				t.Fatal(err)
			}
			eventually(t, tt.reason+" counted", func() bool { return count(tt.reason) == before+1 })
			if !strings.Contains(logs.String(), "[WARN]  directive rejected: reason="+tt.reason) {
				t.Fatalf("no Warn with reason %s:\n%s", tt.reason, logs.String())
			}
			follow("the commander's next directive")
		})
	}

	t.Run("a poison within the bounds holds only until it expires", func(t *testing.T) {
		d := poison(func(d *wire.Directive) { d.Term = term + uint64(30*time.Second) })
		if err := attacker.PublishDirective(ctx, d); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the poison taken", func() bool { got, _ := sd.Directive(); return got.Term == d.Term })
		replayed := count(wire.RejectReplayed)
		advance(cfg.Commander.Tick)
		seq++
		if err := real.PublishDirective(ctx, signTestDirective("payment", term, seq, clock(), 30)); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the commander's directive held back", func() bool { return count(wire.RejectReplayed) == replayed+1 })
		// The poison's TTL (3m) runs out; the commander's next is taken.
		advance(time.Duration(d.TTL))
		follow("the commander's directive after the poison expired")
	})
}
