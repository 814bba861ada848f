package scenario

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/offline/sim"
)

// TestCheckReportsEveryProblemAndLoadsAGoodWorld: validate's load names a
// missing config and still checks the scenario; a good world loads.
func TestCheckReportsEveryProblemAndLoadsAGoodWorld(t *testing.T) {
	var problems []string
	note := func(err error) { problems = append(problems, err.Error()) }
	if _, _, _, ok := Check("nope.hcl", "", note); ok || len(problems) != 1 {
		t.Fatalf("a missing config: ok %v, problems %q", ok, problems)
	}
	problems = nil
	if _, _, _, ok := Check("nope.hcl", "nope-scenario.hcl", note); ok || len(problems) != 2 {
		t.Fatalf("a missing config and scenario: ok %v, problems %q", ok, problems)
	}
	problems = nil
	cfg, sc, _, ok := Check(smallConfig, smallSample, note)
	if !ok || cfg == nil || sc == nil || len(problems) != 0 {
		t.Fatalf("the small world: ok %v, problems %q", ok, problems)
	}
}

// TestWorldOverrideAndSimulate: the seed and duration overrides apply, a
// duration within the warm-up is refused, and Simulate steps to the end
// or stops with ctx.
func TestWorldOverrideAndSimulate(t *testing.T) {
	w, err := LoadWorld(smallConfig, smallSample)
	if err != nil {
		t.Fatal(err)
	}
	if w.Warmup == 0 {
		w.Warmup = time.Minute
	}
	if err := w.Override(0, w.Warmup); err == nil || !strings.Contains(err.Error(), "within the scenario's warm-up") {
		t.Fatalf("a duration within the warm-up: %v", err)
	}
	if err := w.Override(7, w.Warmup+10*time.Minute); err != nil || w.Seed != 7 {
		t.Fatalf("Override: %v, seed %d", err, w.Seed)
	}
	s, err := w.NewSim()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Simulate(ctx, s, nopPolicy{}, func(time.Duration) {}); err == nil {
		t.Fatal("Simulate ran on past a cancelled context")
	}
	steps := 0
	var last time.Duration
	if err := w.Simulate(context.Background(), s, nopPolicy{}, func(d time.Duration) { steps++; last = d }); err != nil || !s.Done() || steps == 0 || last < w.Duration {
		t.Fatalf("Simulate: %v, done %v, %d steps, last %s of %s", err, s.Done(), steps, last, w.Duration)
	}
}

// nopPolicy leaves the targets as they are.
type nopPolicy struct{}

func (nopPolicy) Decide(time.Time, *sim.Telemetry, []int32) {}
