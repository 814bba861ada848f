package daemon

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// TestSoldierProcessKeepsItsDecisionStateAcrossRestarts ticks a Soldier
// process on a simulated cluster, closes it and opens another on the same
// data directory: the second starts with the state the first saved at its
// last tick (every app's last scale-up and stabilisation window, the
// ladder, the automatic fallback), and says so.
func TestSoldierProcessKeepsItsDecisionStateAcrossRestarts(t *testing.T) {
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	cfgPath := "../../examples/small.hcl"
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	open := func(logs *bytes.Buffer) *SoldierProcess {
		log := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Info})
		p := NewSoldierProcess(cfg, SoldierOptions{ConfigPath: cfgPath, Domain: "payment", NATSURL: srv.ClientURL(),
			ScenarioPath: "../../cmd/regiment/testdata/small-sample.hcl", DataDir: dir}, Deps{}, nil, log)
		if err := p.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var first bytes.Buffer
	p := open(&first)
	var last time.Time
	for range 40 {
		last = time.Now()
		if err := p.Tick(context.Background(), last); err != nil {
			t.Fatal(err)
		}
		p.step()
	}
	saved := p.sd.Snapshot(last)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(first.String(), "decision state restored") {
		t.Fatalf("a first start restored a state:\n%s", first.String())
	}
	scaledUp := 0
	for _, a := range saved.Apps {
		if !a.LastScaleUp.IsZero() {
			scaledUp++
		}
		if len(a.Window) != 30 {
			t.Fatalf("a window of %d ticks saved after 40 ticks, want 30", len(a.Window))
		}
	}
	if scaledUp == 0 {
		t.Fatal("no app scaled up in 40 ticks: the test proves nothing about cooldowns")
	}

	var second bytes.Buffer
	q := open(&second)
	defer q.Close()
	if !strings.Contains(second.String(), "decision state restored") {
		t.Fatalf("the restarted Soldier did not restore its state:\n%s", second.String())
	}
	got, want := encodeWithoutTargets(t, q.sd.Snapshot(last)), encodeWithoutTargets(t, saved)
	if got != want {
		t.Fatalf("restored\n %s\nsaved\n %s", got, want)
	}
}

// encodeWithoutTargets is s encoded without what a writing Soldier reads
// from the cluster again (the targets in force).
func encodeWithoutTargets(t *testing.T, s soldier.Snapshot) string {
	t.Helper()
	for name, a := range s.Apps {
		a.Target = -1
		s.Apps[name] = a
	}
	b, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
