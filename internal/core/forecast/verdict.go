package forecast

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// A calibrated P80 is exceeded 20% of the time; WriteVerdict allows 5
// points either way.
const (
	exceedTarget    = 0.20
	exceedTolerance = 0.05
)

// WriteVerdict writes whether rep meets the calibration target and
// how the 15-minute P50 compares with persistence; it reports whether the
// target is met: P80 exceeded exceedTarget +- exceedTolerance of the time,
// overall and in every time-of-day slice.
func (rep Report) WriteVerdict(w io.Writer) bool {
	in := func(e float64) bool { return e >= exceedTarget-exceedTolerance && e <= exceedTarget+exceedTolerance }
	ok := in(rep.Overall.Exceed80)
	var off []string
	width := rep.Period / Slices
	for s, sc := range rep.Slice {
		if sc.N > 0 && !in(sc.Exceed80) {
			from, to := time.Duration(s)*width, time.Duration(s+1)*width
			off = append(off, fmt.Sprintf("%gh-%gh %.1f%%", from.Hours(), to.Hours(), 100*sc.Exceed80))
			ok = false
		}
	}
	verdict := "PASS"
	if !ok {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "P80 exceeded %.1f%% of the time overall (target 20%% +- 5, overall and in every 4-hour slice): %s\n", 100*rep.Overall.Exceed80, verdict)
	if len(off) > 0 {
		fmt.Fprintf(w, "  outside the target: %s\n", strings.Join(off, ", "))
	}
	for h, sc := range rep.Horizon {
		if rep.Horizons[h] == 15*time.Minute {
			than := "better than"
			if sc.MAPE >= sc.NaiveMAPE {
				than = "no better than"
			}
			fmt.Fprintf(w, "15-min MAPE of P50 %.1f%%, %s persistence (%.1f%%)\n", 100*sc.MAPE, than, 100*sc.NaiveMAPE)
		}
	}
	return ok
}
