package soldier

import (
	"math"
	"slices"
	"testing"

	"github.com/regimentd/regiment/internal/core/stats"
)

// The report's memory p75 is Percentile's value whether every app's
// memory utilisation has the same bits (nothing selected) or not, zeros of
// both signs and NaNs included, and its restart rate the apps' sum.
func TestMemAndRestartsIsPercentileAndSum(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, mem := range [][]float64{
		{0, 0, 0, 0}, {0.5}, {negZero, negZero}, {0, negZero, 0, 0}, {negZero, 0, 0},
		{math.NaN(), math.NaN()}, {0.3, math.NaN(), 0.3}, {0.1, 0.9, 0.4, 0.4, 0.2}, {},
	} {
		s := &Soldier{obs: Observation{Apps: make([]AppObservation, len(mem))}}
		sum := 0.0
		for i, m := range mem {
			s.obs.Apps[i].MemUtil, s.obs.Apps[i].RestartRate = m, float64(i)/3
			sum += float64(i) / 3
		}
		want := stats.Percentile(slices.Clone(mem), 0.75)
		got, restarts := s.memAndRestarts()
		if math.Float64bits(got) != math.Float64bits(want) || restarts != sum {
			t.Errorf("%v: p75 %v restarts %v, want %v %v", mem, got, restarts, want, sum)
		}
	}
}
