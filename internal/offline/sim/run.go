package sim

import "time"

// Policy sets replica targets from telemetry once per tick. targets is indexed
// by app id and holds the previous targets on entry.
type Policy interface {
	Decide(now time.Time, t *Telemetry, targets []int32)
}

// Run steps the simulation to the end of its scenario, asking p for targets
// before every step, and returns the run's metrics.
func (s *Sim) Run(p Policy) Metrics {
	for !s.Done() {
		p.Decide(s.Now(), s.Telemetry(), s.targets)
		s.Step()
	}
	return s.Metrics()
}

// PeakRPS is each app's highest arrival rate over the scenario, without noise:
// trace demand at every minute times event multipliers, plus the calls of its
// callers at that minute. Calls count at the minute of the requests that
// cause them, without call_lag: a lag moves a caller's calls, not their peak,
// but a callee with several sources may peak lower than this in Step. It
// leaves the simulation's state untouched.
func (s *Sim) PeakRPS() []float64 {
	peak := make([]float64, len(s.apps))
	saved := make([]float64, len(s.apps))
	for i := range s.apps {
		saved[i] = s.apps[i].lambda
	}
	minutes := int(s.sc.Duration / time.Minute)
	for m := 0; m <= minutes; m++ {
		s.events(time.Duration(m) * time.Minute)
		s.arrivals(noHistory, m, 0, false)
		for i := range s.apps {
			peak[i] = max(peak[i], s.apps[i].lambda)
		}
	}
	s.events(time.Duration(s.step) * s.tick)
	for i := range s.apps {
		s.apps[i].lambda = saved[i]
	}
	return peak
}

// Capacity is the request rate app id serves at full utilisation per replica,
// 1/s: concurrency / service time (without events).
func (s *Sim) Capacity(id int) float64 {
	return s.apps[id].mu * float64(s.apps[id].conc)
}
