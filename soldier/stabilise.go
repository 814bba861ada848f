package soldier

// stabilisationTicks is the scale-down stabilisation window in Soldier
// ticks (5 minutes at the 10 s tick), as the HPA's: an app shrinks only to
// the largest size proposed for it over the window.
const stabilisationTicks = 30

// Hold is the hysteresis of one app: n is its proposed size this tick, most
// the largest proposed over the stabilisation window (n included), cur the
// target in force, need the replicas its load needs before rounding up
// (Need). A scale-up while the need is within tol of cur, or a scale-down
// whose window maximum is within tol of cur, keeps cur; a scale-down goes to
// the window's maximum, so that a dip shorter than the window does not
// shrink the app. Judging scale-ups on the unrounded need, as the HPA judges
// its utilisation ratio, keeps a small app whose need wavers around a whole
// replica from writing on every waver. cur <= 0 (unknown) takes n.
func Hold(n, most, cur int32, need, tol float64) int32 {
	switch {
	case cur <= 0:
		return n
	case n > cur && need <= float64(cur)*(1+tol):
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
// keeps, per app, the proposals of the last stabilisationTicks ticks and
// their maximum, which it rescans only when the entry holding it leaves the
// window; it does not allocate after the first tick.
type Stabiliser struct {
	recent []int32 // a ring of ticks of proposals: [k*apps+app], a tick's contiguous
	most   []int32 // per app, the largest proposal in the window
	at     []int   // per app, the latest tick (Apply call) that proposed most
	ticks  int     // Apply calls since recent was sized
}

// Apply records proposed (one per app) and replaces each proposal by its
// Hold against the target in force (obs.Apps[i].Replicas) and the app's
// need (one per app) with tolerance tol. It returns how many proposals it
// changed.
func (s *Stabiliser) Apply(proposed []int32, obs *Observation, need []float64, tol float64) (held int) {
	const w = stabilisationTicks
	if len(s.recent) != len(proposed)*w {
		s.recent, s.ticks = make([]int32, len(proposed)*w), 0
		s.most, s.at = make([]int32, len(proposed)), make([]int, len(proposed))
	}
	t, apps := s.ticks, len(proposed)
	k, filled := t%w, min(t+1, w)
	copy(s.recent[k*apps:(k+1)*apps], proposed)
	most, mostAt, oa, need := s.most[:apps], s.at[:apps], obs.Apps[:apps], need[:apps] // no bounds checks of their own
	for i, n := range proposed {
		switch {
		case t == 0 || n >= most[i]:
			most[i], mostAt[i] = n, t
		case t-mostAt[i] >= w: // the maximum's entry was overwritten: rescan, newest first
			best, at := n, t
			for d := 1; d < filled; d++ {
				if v := s.recent[(k-d+w)%w*apps+i]; v > best {
					best, at = v, t-d
				}
			}
			most[i], mostAt[i] = best, at
		}
		if proposed[i] = Hold(n, most[i], oa[i].Replicas, need[i], tol); proposed[i] != n {
			held++
		}
	}
	s.ticks++
	return held
}
