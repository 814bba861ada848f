package baseline

import (
	"math"
	"testing"
)

// An app's headroom is the quantile of its own growth over its lead: a flat
// app gets none; an app that doubles for a while every 50 ticks gets 1.0 at
// a quantile above the share of origins a doubling follows, none below it;
// an app with too few growths yet takes every app's quantile.
func TestAppHeadroomLearnsEachAppsGrowth(t *testing.T) {
	binWidth := 2 * (math.Pow(maxGrowth, 1.0/(growthBins-1)) - 1) // of a growth of 2
	const lead = 5
	h := &appHeadroom{q: 0.95, lead: []int{lead, lead}, span: lead + 1, past: make([]int32, 2*(lead+1)),
		count: make([]uint32, 2), hist: make([]uint32, 2*growthBins), pooled: make([]uint32, growthBins)}
	if got := h.headroom(0); got != 0 {
		t.Errorf("headroom before any growth %v, want 0", got)
	}
	for k := range 1000 {
		spiky := int32(10)
		if k%50 >= 40 {
			spiky = 20 // 10 ticks doubled: 5 of every 50 origins see the doubling ahead
		}
		h.observe([]int32{10, spiky})
	}
	if got := h.headroom(0); got != 0 {
		t.Errorf("flat app's headroom %v, want 0", got)
	}
	if got := h.headroom(1); got < 1 || got > 1+binWidth {
		t.Errorf("spiky app's headroom at q 0.95: %v, want 1 up to the bin's upper edge", got)
	}
	h.q = 0.85 // 10% of origins see a doubling
	if got := h.headroom(1); got != 0 {
		t.Errorf("spiky app's headroom at q 0.85: %v, want 0", got)
	}
	h.q = 0.9
	h.count[0] = minGrowthSamples - 1 // as if young: the pooled quantile (5% of all origins doubled)
	if got := h.headroom(0); got != 0 {
		t.Errorf("young app's headroom %v, want the pooled quantile 0 at q 0.9", got)
	}
	h.q = 0.99
	if got := h.headroom(0); got < 1 || got > 1+binWidth {
		t.Errorf("young app's headroom %v, want the pooled quantile ~1 at q 0.99", got)
	}
}

// On the step world the per-app bound learns the step after it has seen
// one: with a high quantile it breaches no more than the uniform present-only
// oracle without headroom, and its names parse as the others do.
func TestOracleNowPerApp(t *testing.T) {
	now, app := runStepWorld(t, "oracle-now"), runStepWorld(t, "oracle-now-app@99")
	t.Logf("oracle-now %.1f core-hours, %.1f breach app-minutes; oracle-now-app@99 %.1f, %.1f",
		now.CostCoreHours, now.BreachAppMinutes, app.CostCoreHours, app.BreachAppMinutes)
	if app.BreachAppMinutes > now.BreachAppMinutes || app.CostCoreHours < now.CostCoreHours {
		t.Errorf("oracle-now-app@99 %.1f core-hours, %.1f breach app-minutes; oracle-now %.1f, %.1f: want no more breaches, no less cost",
			app.CostCoreHours, app.BreachAppMinutes, now.CostCoreHours, now.BreachAppMinutes)
	}
	checkKnown(t, []string{"oracle-now-app@99", "oracle-now-app@99.9", "oracle-now-app@50"},
		[]string{"oracle-now-app@0", "oracle-now-app@100", "oracle-now-app@x", "oracle-now-app"})
}
