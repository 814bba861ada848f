package baseline_test

import (
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// TestCalendarHPAHoldsTheEventsFloors: hpa-calendar holds every app of an
// announced event's domain at load x its replicas from the event's lead on
// (a cron scaler per app), and is the plain HPA for every other app and
// when nothing is announced.
func TestCalendarHPAHoldsTheEventsFloors(t *testing.T) {
	run := func(policy, announced string) (before, after []int32, apps []domains.App) {
		cfg, s := simtest.WorldFor(t, "../../../examples/small.hcl",
			simtest.AnnouncedSale(t, "../../../cmd/regiment/testdata/small-sample.hcl", announced), 2*time.Minute)
		p, err := baseline.New(policy, cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		before = append([]int32(nil), s.Targets()...)
		for !s.Done() {
			p.Decide(s.Now(), s.Telemetry(), s.Targets())
			s.Step()
		}
		return before, s.Targets(), cfg.Apps()
	}
	_, hpa, _ := run("hpa", "20m")
	before, cal, apps := run(baseline.HPACalendar, "20m")
	raised := 0
	for id, a := range apps {
		if a.Domain != 0 { // small.hcl's first domain is payment
			if cal[id] != hpa[id] {
				t.Fatalf("app %s outside the event's domain: %d replicas, the plain HPA's %d", a.Name, cal[id], hpa[id])
			}
			continue
		}
		if want := min(3*before[id], int32(a.MaxReplicas)); cal[id] < want {
			t.Fatalf("payment app %s: %d replicas two minutes into the sale's lead, want 3 x %d within max %d", a.Name, cal[id], before[id], a.MaxReplicas)
		}
		if cal[id] > hpa[id] {
			raised++
		}
	}
	if raised == 0 {
		t.Fatalf("no payment app above the plain HPA's replicas")
	}
	if _, none, _ := run(baseline.HPACalendar, ""); !slices.Equal(none, hpa) {
		t.Fatalf("with nothing announced hpa-calendar scaled %v, the plain HPA %v", none, hpa)
	}
}
