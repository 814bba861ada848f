package calibrate

import (
	"fmt"
	"math"
)

func errf(format string, args ...any) error { return fmt.Errorf("calibrate: "+format, args...) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// relErr is the mean absolute error of sim against rec relative to the mean
// magnitude of rec: sum|sim - rec| / sum|rec|. ok is false when rec is all 0.
func relErr(rec, sim []float64) (float64, bool) {
	num, den := 0.0, 0.0
	for i := range rec {
		num += math.Abs(sim[i] - rec[i])
		den += math.Abs(rec[i])
	}
	if den == 0 {
		return 0, false
	}
	return num / den, true
}
