package soldier

import (
	"fmt"

	"github.com/regimentd/regiment/internal/core/domains"
)

// ProportionalPolicy is the built-in Soldier policy name (SqrtStaffing).
// Any other value of soldier.policy is the path of a checkpoint
// (config.Parse has made a relative path relative to the config file's
// directory).
const ProportionalPolicy = "proportional"

// NewPolicy resolves cfg.Soldier.Policy for the Soldier of scfg's domain:
// "proportional" is the SqrtStaffing heuristic; anything else is a
// checkpoint path loaded with LoadLearned. Every place that runs a Soldier
// (the simulated hierarchy, the soldier daemon, `regiment run`) resolves
// through it. Each call returns a new policy: policies keep scratch state
// and are not shared between Soldiers.
func NewPolicy(cfg *domains.Config, scfg Config) (Policy, error) {
	switch name := cfg.Soldier.Policy; name {
	case ProportionalPolicy, "":
		return &SqrtStaffing{}, nil
	default:
		p, err := LoadLearned(name, scfg)
		if err != nil {
			return nil, fmt.Errorf("soldier policy for %s: %w", scfg.Domain, err)
		}
		return p, nil
	}
}
