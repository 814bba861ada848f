package sim

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Overload is an app whose demand in a scenario outgrows what its
// max_replicas serve: at some ticks its arrivals exceed MaxUtilisation of
// its ceiling's capacity, so its queue grows and it breaches whatever
// scales it. A scenario's overloads are known before it runs (Overloads);
// Metrics.CeilingBound is what a run then breached at the ceiling, which
// also counts the ticks a lower utilisation already breaches the SLO.
type Overload struct {
	App          string        `json:"app"`           // "domain/app"
	MaxReplicas  int           `json:"max_replicas"`  // its set's ceiling
	PeakReplicas int           `json:"peak_replicas"` // replicas its peak arrivals need at MaxUtilisation
	PeakAt       time.Duration `json:"peak_at"`       // the peak's offset from the scenario's start
	Minutes      float64       `json:"minutes"`       // minutes its arrivals outgrow the ceiling
}

// Overloads replays the demand of the rest of the scenario (Future: the
// trace, events and the very noise Step will draw; event service-time
// factors included) and returns the apps it overloads, most minutes first;
// [] when none. It leaves the simulation as it was. Cost: one Future tick
// per remaining tick.
func (s *Sim) Overloads() []Overload {
	type acc struct {
		ticks, peakTick int
		peak            float64 // replicas needed
	}
	accs := make([]acc, len(s.apps))
	f := s.Future()
	for range s.steps - s.step {
		tick, lambda, slow := f.Next()
		for i := range s.apps {
			a := &s.apps[i]
			// Replicas needed at MaxUtilisation: arrivals over one replica's
			// servers at the tick's service rate.
			need := lambda[i] * slow[i] / (a.mu * float64(a.conc) * MaxUtilisation)
			if need > accs[i].peak {
				accs[i].peak, accs[i].peakTick = need, tick
			}
			if a.maxReplicas > 0 && need > float64(a.maxReplicas) {
				accs[i].ticks++
			}
		}
	}
	apps := s.cfg.Apps()
	out := []Overload{}
	for i, c := range accs {
		if c.ticks == 0 {
			continue
		}
		out = append(out, Overload{App: apps[i].Name, MaxReplicas: int(s.apps[i].maxReplicas),
			PeakReplicas: int(math.Ceil(c.peak)), PeakAt: time.Duration(c.peakTick) * s.tick, Minutes: float64(c.ticks) * s.dt / 60})
	}
	slices.SortStableFunc(out, func(a, b Overload) int { return cmp.Compare(b.Minutes, a.Minutes) })
	return out
}
