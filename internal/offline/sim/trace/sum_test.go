package trace

import (
	"slices"
	"testing"
)

// TestSumAddsEveryMinuteOfEverySeries: each minute is the sum over the
// series that reach it, and the sum is as long as the longest series.
func TestSumAddsEveryMinuteOfEverySeries(t *testing.T) {
	got := Sum([]Series{{Values: []float64{1, 2}}, {Values: []float64{10, 20, 30}}, {}})
	if want := []float64{11, 22, 30}; !slices.Equal(got, want) {
		t.Fatalf("Sum = %v, want %v", got, want)
	}
	if got := Sum(nil); len(got) != 0 {
		t.Fatalf("Sum(nil) = %v", got)
	}
}
