package soldier

import "math"

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

// riseThreshold is the domain's growth over one tick above which its rise
// is coherent (DomainGrowth > 1 + riseThreshold, 2% in 10 s): its apps'
// needs are floored by it (RiseFloor). Chosen on the training scenarios
// (docs/experiments.md, "A domain's rise as a floor").
const riseThreshold = 0.02

// DomainGrowth is a domain's summed need this tick, now, over the last
// tick's, before: 1 when before is not positive or either is not finite
// (no last tick, or no load), so that it never signals a rise.
func DomainGrowth(now, before float64) float64 {
	if before <= 0 || math.IsInf(before, 0) || math.IsInf(now, 0) || math.IsNaN(now) || math.IsNaN(before) {
		return 1
	}
	return now / before
}

// RiseFloor is an app's need (replicas, unrounded) floored by its domain's
// rise: when the domain's summed need grew by more than threshold over the
// last tick (growth > 1 + threshold), the app's need last tick (past) times
// that growth if larger; otherwise need. The domain's sum is far less
// noisy than one app, so in a coherent rise an app whose own need lags
// (per-app noise) is sized as the domain grows instead of waiting a tick.
// It never lowers need; a NaN past leaves need.
func RiseFloor(need, past, growth, threshold float64) float64 {
	if growth > 1+threshold {
		if f := past * growth; f > need {
			return f
		}
	}
	return need
}

// Stabiliser holds the small and the short-lived changes of whatever decides
// a domain's targets (the policy, the baseline, the ladder), so that one
// write does the work of several: the HPA's tolerance and scale-down
// stabilisation, applied to the Soldier's proposals before the executor. It
// keeps, per app, the proposals of the last stabilisationTicks ticks and
// their maximum, which it rescans only when the entry holding it leaves the
// window, and the last tick's needs and their sum, for the domain's rise
// (RiseFloor); it does not allocate after the first tick.
type Stabiliser struct {
	recent []int32 // a ring of ticks of proposals: [k*apps+app], a tick's contiguous
	most   []int32 // per app, the largest proposal in the window
	at     []int   // per app, the latest tick (Apply call) that proposed most
	ticks  int     // Apply calls since recent was sized
	// past is, per app, its need at the last Apply, and level their sum;
	// prior says they are there (not on the first tick after sizing or
	// remapping the window, nor after a restore without the last needs).
	past  []float64
	level float64
	prior bool
	// judged is, per app, the need this tick's Hold judges: floored by the
	// domain's rise where the floor raised the proposal, else the need.
	judged []float64
}

// Apply raises each of proposed (one per app) where the domain's rise
// floors the app's need (one per app; RiseFloor) and the app has a target
// in force: by the ratio of the floored need to the need, to at most the
// floored need rounded up (a policy's proposal sized for the app's load
// goes to the floor; one a budget, or a policy that sizes short, cut to a
// share of it keeps that share). It records the proposals and replaces
// each by its Hold against the target in force (obs.Apps[i].Replicas) and
// that floored need with tolerance tol. It returns how many proposals it
// held (changed after the floor) and how many the floor raised.
func (s *Stabiliser) Apply(proposed []int32, obs *Observation, need []float64, tol float64) (held, raised int) {
	const w = stabilisationTicks
	apps := len(proposed)
	if len(s.recent) != apps*w || len(s.past) != apps {
		s.recent, s.ticks = make([]int32, apps*w), 0
		s.most, s.at = make([]int32, apps), make([]int, apps)
		s.past, s.judged, s.prior = make([]float64, apps), make([]float64, apps), false
	}
	most, mostAt, oa, need, past, judged := s.most[:apps], s.at[:apps], obs.Apps[:apps], need[:apps], s.past[:apps], s.judged[:apps] // no bounds checks of their own
	level := 0.0
	for _, v := range need {
		level += v
	}
	growth := 1.0
	if s.prior {
		growth = DomainGrowth(level, s.level)
	}
	t := s.ticks
	k, filled := t%w, min(t+1, w)
	for i, n := range proposed {
		judged[i] = need[i]
		if fl := RiseFloor(need[i], past[i], growth, riseThreshold); fl > need[i] && oa[i].Replicas > 0 {
			// A need of 0 makes the ratio +Inf (NaN for a proposal of 0,
			// which ceilReplicas makes 0): the floor caps it.
			if f := min(ceilReplicas(float64(n)*fl/need[i]), ceilReplicas(fl)); f > n {
				proposed[i], judged[i] = f, fl
				raised++
			}
		}
		past[i] = need[i]
	}
	s.level, s.prior = level, true
	copy(s.recent[k*apps:(k+1)*apps], proposed)
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
		if proposed[i] = Hold(n, most[i], oa[i].Replicas, judged[i], tol); proposed[i] != n {
			held++
		}
	}
	s.ticks++
	return held, raised
}

// ceilReplicas is need rounded up to whole replicas as the policy rounds
// (bound), within [0, math.MaxInt32]; 0 for NaN.
func ceilReplicas(need float64) int32 {
	switch {
	case !(need > 0): // NaN too
		return 0
	case need >= math.MaxInt32:
		return math.MaxInt32
	}
	return int32(math.Ceil(need - 1e-9))
}
