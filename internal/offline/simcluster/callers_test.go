package simcluster_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// observed keeps, per tick, what a domain's Soldier observed of each app.
type observed struct{ ticks [][]soldier.NamedObservation }

func (o *observed) Record(r soldier.Record) { o.ticks = append(o.ticks, r.Apps) }

// TestCalleesSeeTheirCallersCallsAhead: in the tenth world fraud's only
// traffic is payment's calls, which reach it call_lag (20 s) after payment's
// requests. The fraud Soldier observes them in CallerRPS from payment's
// telemetry, as old as its own: at every tick, an app's CallerRPS is the RPS
// it observes two ticks (20 s) later, so it sizes for its arrivals 20 s
// sooner than from its own figures.
func TestCalleesSeeTheirCallersCallsAhead(t *testing.T) {
	cfg, s := simtest.WorldFor(t, "../../../examples/tenth.hcl", "../../../examples/scenarios/tenth-day.hcl", 20*time.Minute)
	fraud := &observed{}
	p, err := simcluster.NewPolicy(cfg, nil, func(domain string) soldier.Recorder {
		if domain == "fraud" {
			return fraud
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(p)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	lead := int(20 * time.Second / cfg.Soldier.Tick)
	called, checked := 0, 0
	for k := 5; k+lead < len(fraud.ticks); k++ { // from when the call ring has filled
		for i, o := range fraud.ticks[k] {
			later := fraud.ticks[k+lead][i]
			if o.CallerRPS == 0 {
				if later.RPS != 0 && strings.HasPrefix(o.App, "fraud/scoring") {
					t.Fatalf("tick %d: %s has no calls observed but %g rps 20 s later", k, o.App, later.RPS)
				}
				continue
			}
			called++
			if math.Abs(o.CallerRPS-later.RPS) > 1e-6*later.RPS {
				t.Fatalf("tick %d: %s observed %g rps of calls, and %g rps of its own 20 s later", k, o.App, o.CallerRPS, later.RPS)
			}
			checked++
		}
	}
	if called == 0 || checked == 0 {
		t.Fatal("no fraud app observed calls")
	}
}
