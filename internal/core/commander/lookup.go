package commander

import (
	"fmt"

	"github.com/regimentd/regiment/internal/core/domains"
)

// ForecastPolicy is the built-in Commander policy name (Forecast). Any other
// value of commander.policy is the path of a checkpoint (config.Parse has
// made a relative path relative to the config file's directory).
const ForecastPolicy = "forecast"

// NewPolicy resolves cfg.Commander.Policy: "forecast" is the Forecast
// heuristic with the configured reserve_min and headroom; anything else is a checkpoint
// path loaded with LoadLearned. Every place that runs a Commander (the
// simulated hierarchy, the commander daemon, `regiment run`) resolves
// through it.
func NewPolicy(cfg *domains.Config) (Policy, error) {
	switch name := cfg.Commander.Policy; name {
	case ForecastPolicy, "":
		return &Forecast{ReserveMin: cfg.Commander.ReserveMin, Headroom: cfg.Commander.Headroom}, nil
	default:
		p, err := LoadLearned(name, cfg)
		if err != nil {
			return nil, fmt.Errorf("commander policy: %w", err)
		}
		return p, nil
	}
}
