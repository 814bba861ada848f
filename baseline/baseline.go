package baseline

import (
	"fmt"
	"strings"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim"
)

// Names lists the reference policies New knows, in report order.
var Names = []string{"hpa", "hpa-legacy", "tuned-hpa", "proportional", "static", "oracle"}

// New builds the named reference policy for simulation s of cfg. Build it
// before stepping s: the static policy and the oracle read s's scenario.
func New(name string, cfg *domains.Config, s *sim.Sim) (sim.Policy, error) {
	switch name {
	case "hpa":
		return NewHPA(cfg, DefaultHPASettings(cfg)), nil
	case "hpa-legacy":
		return NewHPA(cfg, LegacyHPASettings(cfg)), nil
	case "tuned-hpa":
		return NewHPA(cfg, TunedHPASettings(cfg)), nil
	case "proportional":
		return NewProportional(cfg, cfg.Soldier.TargetUtilisation), nil
	case "static":
		return NewStatic(cfg.Apps(), cfg.Soldier.TargetUtilisation, s), nil
	case "oracle":
		return NewOracle(cfg, s), nil
	}
	return nil, fmt.Errorf("unknown baseline policy %q (known: %s)", name, strings.Join(Names, ", "))
}
