package soldier

// stabilisationTicks is the scale-down stabilisation window in Soldier
// ticks (5 minutes at the 10 s tick), as the HPA's: an app shrinks only to
// the largest size proposed for it over the window.
const stabilisationTicks = 30

// Hold is the hysteresis of one app: n is its proposed size this tick, most
// the largest proposed over the stabilisation window (n included), cur the
// target in force. A scale-up within tol of cur, or a scale-down whose
// window maximum is within tol of cur, keeps cur; a scale-down goes to the
// window's maximum, so that a dip shorter than the window does not shrink
// the app. cur <= 0 (unknown) takes n.
func Hold(n, most, cur int32, tol float64) int32 {
	switch {
	case cur <= 0:
		return n
	case n > cur && float64(n) <= float64(cur)*(1+tol):
		return cur
	case n < cur && float64(most) >= float64(cur)*(1-tol):
		return cur
	case n < cur:
		return most
	}
	return n
}

// Stabiliser holds the small and the short-lived changes of whatever decides
// a domain's targets (the policy, the baseline, the ladder), so that one
// write does the work of several: the HPA's tolerance and scale-down
// stabilisation, applied to the Soldier's proposals before the executor. It
// keeps, per app, the proposals of the last stabilisationTicks ticks; it
// does not allocate after the first tick.
type Stabiliser struct {
	recent []int32 // per app, a ring of proposals: [app*stabilisationTicks+k]
	ticks  int     // Apply calls since recent was sized
}

// Apply records proposed (one per app) and replaces each proposal by its
// Hold against the target in force (obs.Apps[i].Replicas) with tolerance
// tol. It returns how many proposals it changed.
func (s *Stabiliser) Apply(proposed []int32, obs *Observation, tol float64) (held int) {
	if len(s.recent) != len(proposed)*stabilisationTicks {
		s.recent, s.ticks = make([]int32, len(proposed)*stabilisationTicks), 0
	}
	k, filled := s.ticks%stabilisationTicks, min(s.ticks+1, stabilisationTicks)
	for i, n := range proposed {
		ring := s.recent[i*stabilisationTicks : (i+1)*stabilisationTicks]
		ring[k] = n
		most := n
		for _, v := range ring[:filled] {
			most = max(most, v)
		}
		if proposed[i] = Hold(n, most, obs.Apps[i].Replicas, tol); proposed[i] != n {
			held++
		}
	}
	s.ticks++
	return held
}
