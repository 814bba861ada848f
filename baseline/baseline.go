package baseline

import (
	"fmt"
	"strings"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim"
)

// Names lists the reference policies New knows, in report order.
var Names = []string{"static"}

// New builds the named reference policy for simulation s of cfg.
func New(name string, cfg *domains.Config, s *sim.Sim) (sim.Policy, error) {
	switch name {
	case "static":
		return NewStatic(cfg.Apps(), cfg.Soldier.TargetUtilisation, s), nil
	}
	return nil, fmt.Errorf("unknown baseline policy %q (known: %s)", name, strings.Join(Names, ", "))
}
