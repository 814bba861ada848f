package sim

// Accounted reports whether the tick the simulation has just stepped counts
// in the metrics: it is after the initial state and the scenario's warm-up
// (Scenario.Warmup). Accounting outside Metrics (eval's per-tick meters)
// skips the ticks it does not count, so that no metric counts a warm-up
// artefact.
func (s *Sim) Accounted() bool { return s.metric.counted(s.step) }
