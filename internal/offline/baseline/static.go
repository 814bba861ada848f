package baseline

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Static provisions every app once, for its peak demand over the scenario at
// the Soldier's target utilisation, and never changes it: what a team does
// when it sizes by hand for the busiest hour it knows about.
type Static struct {
	replicas []int32
}

// NewStatic sizes each app of s for peak[i] requests per second:
// ceil(peak / (capacity per replica x target utilisation)), within the app's
// replica bounds.
func NewStatic(apps []domains.App, target float64, s *sim.Sim) *Static {
	peak := s.PeakRPS()
	st := &Static{replicas: make([]int32, len(apps))}
	for i, a := range apps {
		n := int32(math.Ceil(peak[i] / (s.Capacity(i) * target)))
		st.replicas[i] = min(max(n, int32(a.MinReplicas)), int32(a.MaxReplicas))
	}
	return st
}

// Decide sets every target to its static size.
func (st *Static) Decide(_ time.Time, _ *sim.Telemetry, targets []int32) {
	copy(targets, st.replicas)
}
