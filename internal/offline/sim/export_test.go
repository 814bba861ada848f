package sim

import "math"

// SteadyQueues is s's steady-state queues this tick and their order by
// servers, for the erlangCs tests and benchmark.
func (s *Sim) SteadyQueues() ([]Queue, []int32) { return s.queues, s.byServers }

// ErlangCs is erlangCs, for the external tests.
var ErlangCs = erlangCs

// SameErlangC is whether got is want, Erlang C values, as erlangCs
// promises on this build: the same bits (or both NaN) where
// erlangBitExact, else within 1e-12 relative.
func SameErlangC(got, want float64) bool {
	switch {
	case math.Float64bits(got) == math.Float64bits(want), math.IsNaN(got) && math.IsNaN(want):
		return true
	case erlangBitExact:
		return false
	}
	return math.Abs(got-want) <= 1e-12*math.Abs(want)
}
