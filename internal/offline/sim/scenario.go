package sim

import (
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// Scenario is a loaded scenario with its traces (trace.Load), shared
// read-only by every run of it: evaluation and training run many
// simulations (New) of one.
type Scenario struct {
	*domains.Scenario
	Traces map[string][]trace.Series
}
