package baseline

import (
	"time"

	"github.com/regimentd/regiment/domains"
)

// Tuned HPA constants: see TuneHPA.
const (
	tunedTarget     = 0.7
	tunedDownWindow = 300 * time.Second
)

// TunedHPASettings are the default HPA settings with the target utilisation
// and scale-down stabilisation window TuneHPA chose.
func TunedHPASettings(cfg *domains.Config) HPASettings {
	set := DefaultHPASettings(cfg)
	set.Target = tunedTarget
	set.Behaviour.ScaleDown.StabilizationWindow = tunedDownWindow
	return set
}
