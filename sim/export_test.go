package sim

// SteadyQueues is s's steady-state queues this tick and their order by
// servers, for the erlangCs tests and benchmark.
func (s *Sim) SteadyQueues() ([]Queue, []int32) { return s.queues, s.byServers }

// ErlangCs is erlangCs, for the external tests.
var ErlangCs = erlangCs
