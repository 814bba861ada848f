package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// NewSim builds a fresh simulation of the world.
func (w World) NewSim() (*sim.Sim, error) { return w.NewSimOn(w.Config) }

// NewSimOn builds a fresh simulation of the world's scenario on cfg: the
// world's config, or the variant of it a policy runs in (baseline.World:
// hpa-priority's has PriorityClasses).
func (w World) NewSimOn(cfg *domains.Config) (*sim.Sim, error) {
	return sim.New(cfg, w.Scenario.Scenario, w.Traces)
}

// Override sets the scenario's seed and duration, each unless 0 (the
// --seed and --duration of `regiment sim` and `run`). A duration within
// the scenario's warm-up is refused: no tick would be accounted.
func (w World) Override(seed uint64, duration time.Duration) error {
	if seed != 0 {
		w.Seed = seed
	}
	if duration > 0 {
		w.Duration = duration
		if w.Warmup >= w.Duration {
			return fmt.Errorf("--duration %s is within the scenario's warm-up (%s): no tick would be accounted", w.Duration, w.Warmup)
		}
	}
	return nil
}

// Simulate runs p on s, a simulation of the world, to its end, calling
// step after every step with the simulated time elapsed. It stops early,
// returning ctx's error, when ctx ends.
func (w World) Simulate(ctx context.Context, s *sim.Sim, p sim.Policy, step func(elapsed time.Duration)) error {
	for !s.Done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
		step(s.Now().Sub(w.Start))
	}
	return nil
}
