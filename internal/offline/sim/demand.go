package sim

import "fmt"

// unitSeries is the one-point demand shape of an app whose rate is set by
// SetDemand: demand.rps returns the scale for every minute.
var unitSeries = []float32{1}

// SetDemand replaces each app's external request rate with rps[id], in 1/s,
// from the next Step on, until it is set again: the traces of the scenario no
// longer drive demand. Calls from callers are still added on top (call_ratio
// per caller), and event multipliers and the scenario's noise still apply; a
// replay of recorded demand uses a scenario without events and with Noise 0.
// It does not allocate. rps must hold one finite value >= 0 per app id.
func (s *Sim) SetDemand(rps []float64) error {
	if len(rps) != len(s.apps) {
		return fmt.Errorf("set demand: %d rates for %d apps", len(rps), len(s.apps))
	}
	for id, r := range rps {
		if !(r >= 0) || r > 1e300 {
			return fmt.Errorf("set demand: app %d rate %v is not a finite rate >= 0", id, r)
		}
	}
	for id, r := range rps {
		s.apps[id].demand = demand{series: unitSeries, scale: r}
	}
	return nil
}
