package eval_test

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/offline/eval"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// TestRegimentPlansTheScenariosAnnouncedEvents: the events a scenario
// announces reach Regiment's Commander as its calendar (eval.NewPolicy), and
// it asks the pool for the sale's nodes during its lead, before any demand
// has risen; unannounced, the same sale gets no nodes ahead.
func TestRegimentPlansTheScenariosAnnouncedEvents(t *testing.T) {
	plan := func(at string) float64 {
		cfg, s := simtest.WorldFor(t, "../../../examples/small.hcl", simtest.AnnouncedSale(t, "../../../cmd/regiment/testdata/small-sample.hcl", at), 25*time.Minute)
		p, err := eval.NewPolicy(eval.Regiment, cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		for !s.Done() {
			p.Decide(s.Now(), s.Telemetry(), s.Targets())
			s.Step()
		}
		return s.CapacityTarget()
	}
	// At 25 min the lead (30 min) of a sale announced at 40 min has been
	// open 15 min, past its ramp (10 min): payment's cores x 3.
	unannounced, announced := plan(""), plan("40m")
	if unannounced <= 0 || announced < 1.3*unannounced {
		t.Fatalf("capacity plan at 25 min: %.0f cores with the sale announced, %.0f without; want at least 1.3x", announced, unannounced)
	}
	// Announced for later than it comes, the lead has not opened yet.
	if late := plan("1h"); late != unannounced {
		t.Fatalf("a sale announced for 1h00 planned %.0f cores at 25 min, want %.0f as unannounced", late, unannounced)
	}
}
