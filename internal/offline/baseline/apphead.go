package baseline

import (
	"math"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// NewOracleNowPerApp is the present-only oracle (NewOracleNow) with a
// headroom per app instead of one for all: each app's own growth over its
// lead, learned from its past needs only. Its lead is the ticks from a
// decision to a replica serving (its replica look-ahead: the capacity
// target holds the nodes for the headroom, so a growth within it waits for
// no node); its growth at a past tick t is its
// largest need over (t, t + lead] over its need at t; its headroom is the
// q-quantile of those growths so far, less 1. An app with fewer than
// minGrowthSamples growths uses the quantile of every app's. With the
// present known exactly, it is the bound for a policy that sizes each
// app by how its own traffic has moved (docs/experiments.md). Not a policy
// to run.
func NewOracleNowPerApp(cfg *domains.Config, s *sim.Sim, q float64) *Oracle {
	o := NewOracleNow(cfg, s, 0)
	n := len(o.near)
	h := &appHeadroom{q: q, lead: make([]int, n), count: make([]uint32, n),
		hist: make([]uint32, n*growthBins), pooled: make([]uint32, growthBins)}
	for i, near := range o.near {
		h.lead[i] = near
		h.span = max(h.span, h.lead[i]+1)
	}
	h.past = make([]int32, h.span*n)
	o.perApp = h
	return o
}

// Growth histograms: bin 0 counts no growth (at most 1x), bins 1 to
// growthBins-1 split ln(growth) over (0, ln maxGrowth] evenly; a growth past
// maxGrowth counts in the last bin.
const (
	growthBins       = 128
	maxGrowth        = 8.0
	minGrowthSamples = 30
)

// appHeadroom learns each app's growth over its lead from its past needs.
type appHeadroom struct {
	q      float64  // quantile, (0, 1)
	lead   []int    // per app, ticks
	span   int      // ticks of past kept: the longest lead + 1
	past   []int32  // needs, at [(tick % span) * n + i]
	hist   []uint32 // per app growthBins counts, at [i * growthBins + b]
	count  []uint32 // per app, growths counted
	pooled []uint32 // every app's growths
	total  uint32
	ticks  int // needs recorded
}

// observe records next, every app's need at the coming tick, and counts
// the growth of each app whose lead has passed since a recorded need.
func (h *appHeadroom) observe(next []int32) {
	n := len(next)
	copy(h.past[(h.ticks%h.span)*n:][:n], next)
	h.ticks++
	for i, lead := range h.lead {
		if h.ticks <= lead {
			continue
		}
		origin := h.ticks - 1 - lead
		peak := int32(0)
		for t := origin + 1; t < h.ticks; t++ {
			peak = max(peak, h.past[(t%h.span)*n+i])
		}
		g := float64(peak) / float64(max(h.past[(origin%h.span)*n+i], 1))
		b := 0 // no growth
		if g > 1 {
			b = 1 + min(int(math.Log(g)/math.Log(maxGrowth)*(growthBins-1)), growthBins-2)
		}
		h.hist[i*growthBins+b]++
		h.count[i]++
		h.pooled[b]++
		h.total++
	}
}

// headroom is app i's headroom now, a fraction >= 0: the q-quantile of its
// growths (of every app's while it has too few), less 1, at the upper edge
// of its bin; 0 before any growth is known.
func (h *appHeadroom) headroom(i int) float64 {
	bins, total := h.hist[i*growthBins:][:growthBins], h.count[i]
	if total < minGrowthSamples {
		bins, total = h.pooled, h.total
	}
	if total == 0 {
		return 0
	}
	want := uint32(math.Ceil(h.q * float64(total)))
	seen := uint32(0)
	for b, c := range bins {
		if seen += c; seen >= want {
			return math.Exp(float64(b)/(growthBins-1)*math.Log(maxGrowth)) - 1
		}
	}
	return maxGrowth - 1
}
