package sim

import (
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim/trace"
)

// Scenario is a loaded scenario with its traces (trace.Load), shared
// read-only by every run of it: evaluation and training run many
// simulations (New) of one.
type Scenario struct {
	*domains.Scenario
	Traces map[string][]trace.Series
}
