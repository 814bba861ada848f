package commander

import (
	"math"
	"testing"

	"github.com/regimentd/regiment/internal/core/reward"
)

// A quiet domain at its floor is where it belongs and scores no floor
// proximity; a domain held at its floor while its demand asks for more does.
func TestRewardFloorProximityCountsOnlyAWantingDomain(t *testing.T) {
	c := &Commander{weights: reward.DefaultCommanderWeights()}
	o := &Observation{Cluster: ClusterObs{CapacityCores: 1000}, Domains: []DomainObs{
		{Name: "quiet", Floor: 0.2, SLO: 0.2, DemandCores: 120}, // asks for 12% of the pool
		{Name: "busy", Floor: 0.1, SLO: 0.2, DemandCores: 500},  // asks for 50%
	}}
	for _, tc := range []struct {
		name   string
		shares []float64
		want   float64
		domain int
	}{
		{"the quiet domain at its floor, the busy one well above", []float64{0.2, 0.8}, 0, -1},
		{"the busy domain at its floor", []float64{0.9, 0.1}, -1, 1},
		{"the busy domain half the margin above it", []float64{0.775, 0.125}, -0.5, 1},
	} {
		a := Action{Shares: tc.shares}
		b := c.rewardOf(o, &a)
		if math.Abs(b.FloorProximity-tc.want) > 1e-9 || b.FloorDomain != tc.domain {
			t.Errorf("%s: floor proximity %v of domain %d, want %v of %d", tc.name, b.FloorProximity, b.FloorDomain, tc.want, tc.domain)
		}
	}
}
