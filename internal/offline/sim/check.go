package sim

import (
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// CheckTraffic returns the error New would return for sc's traffic over
// traces (a trace with no series, all zero, not covering the scenario's
// start, ...), without building the rest of a simulation. regiment validate
// runs it so that it refuses what regiment sim refuses.
func CheckTraffic(cfg *domains.Config, sc *domains.Scenario, traces map[string][]trace.Series) error {
	_, err := buildDemand(cfg, cfg.Apps(), sc, traces)
	return err
}
