package soldier

import (
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

// IntakeBounds are the sanity bounds of the directives a real Commander of
// cfg sends (wire.IntakeBounds): terms from its clock, at most one sequence
// number a Commander tick (plus wire.SeqSlack), TTLs up to twice its
// directive_ttl, and cores that are the share of capacity_cores.
func IntakeBounds(cfg *domains.Config) wire.IntakeBounds {
	return wire.IntakeBounds{
		TermClock:     true,
		Tick:          cfg.Commander.Tick,
		MaxTTL:        2 * cfg.Commander.DirectiveTTL,
		CapacityCores: cfg.Cluster.CapacityCores,
	}
}

// setIntakeBounds replaces the intake's bounds (on Reload).
func (s *Soldier) setIntakeBounds(b wire.IntakeBounds) {
	s.mu.Lock()
	s.intake.Bounds = b
	s.mu.Unlock()
}
