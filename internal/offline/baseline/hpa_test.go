package baseline

import (
	"testing"
	"time"
)

// t0 is an arbitrary reconcile time for the table tests.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// in is a reconcile with the Kubernetes defaults: target 70%, tolerance
// 0.1, default behaviour, replicas in [1, 100], no history.
func in(current, ready int32, util float64) HPAInput {
	return HPAInput{
		Now: t0, Current: current, Ready: ready, Utilisation: util,
		Target: 0.7, Tolerance: DefaultTolerance, Min: 1, Max: 100,
		Behaviour: DefaultBehaviour(),
	}
}

// legacy is in for an HPA without spec.behavior: the controller's legacy
// path with its 5-minute downscale window.
func legacy(current, ready int32, util float64) HPAInput {
	x := in(current, ready, util)
	x.NoBehaviour, x.DownscaleWindow = true, DefaultDownscaleWindow
	return x
}

func ago(d time.Duration) time.Time { return t0.Add(-d) }

// The documented examples come from the Kubernetes documentation, "Horizontal
// Pod Autoscaling" (kubernetes.io/docs/concepts/workloads/autoscaling/
// horizontal-pod-autoscale/): "Algorithm details" (AD), "Default behavior"
// (DB), "Scaling policies" (SP), "Stabilization window" (SW); the rest pin the
// controller's code paths (replica_calculator.go, horizontal.go).
func TestRecommend(t *testing.T) {
	tests := []struct {
		name   string
		in     func() HPAInput
		want   int32
		reason string
	}{
		{"AD: currentMetricValue 200m, desired 100m doubles the replicas", func() HPAInput {
			x := in(4, 4, 1.0)
			x.Target = 0.5
			return x
		}, 8, ReasonRatio},
		{"AD: currentMetricValue 50m, desired 100m halves the replicas", func() HPAInput {
			x := in(8, 8, 0.25)
			x.Target = 0.5
			return x
		}, 4, ReasonRatio},
		{"AD: ratio 1.05 within tolerance keeps replicas", func() HPAInput {
			x := in(10, 10, 0.63)
			x.Target = 0.6
			return x
		}, 10, ReasonTolerance},
		{"AD: ratio 0.9 is within tolerance too", func() HPAInput { return in(10, 10, 0.63) }, 10, ReasonTolerance},
		{"AD: ratio 1.2 leaves tolerance: ceil(1.2 x 10)", func() HPAInput { return in(10, 10, 0.84) }, 12, ReasonRatio},
		{"AD: the ratio uses ready pods, not current replicas", func() HPAInput {
			x := in(10, 5, 0.35) // 5 ready at half the target, 5 not ready: ceil(0.5 x 5)
			x.NotReady = 5
			return x
		}, 3, ReasonRatio},
		{"AD: utilisation is whole percent: 76.9% over 70% is within tolerance", func() HPAInput { return in(10, 10, 0.7699) }, 10, ReasonTolerance},
		// Upstream sums milli-cores and divides in integers: 10 pods of 1000m
		// using 907m each are 9070 x 100 / 10000 = 90%, truncated, not 91%;
		// over 50% that is a ratio of 1.8 and ceil(1.8 x 10) = 18 (91% would
		// give ceil(18.2) = 19).
		{"AD: utilisation is truncated to whole percent, not rounded: 90.7% over 50% is 18 pods", func() HPAInput {
			x := in(10, 10, 0.907)
			x.Target = 0.5
			return x
		}, 18, ReasonRatio},
		{"AD: missing metrics assumed 0% on scale-up can cancel it", func() HPAInput {
			x := in(6, 4, 0.8) // ratio 80/70; with 2 pods at 0%: 53/70, a scale-down
			x.Missing = 2
			return x
		}, 6, ReasonReversed},
		{"AD: missing metrics assumed 0% on scale-up dampen it", func() HPAInput {
			x := in(5, 4, 1.0) // ratio 100/70; with 1 pod at 0%: 80/70 = 1.14, ceil(1.14 x 5)
			x.Missing = 1
			return x
		}, 6, ReasonRatio},
		{"AD: missing metrics assumed 100% on scale-down dampen it", func() HPAInput {
			x := in(6, 4, 0.35) // ratio 0.5; with 2 pods at 100%: 56/70 = 0.8, ceil(0.8 x 6)
			x.Missing = 2
			return x
		}, 5, ReasonRatio},
		{"AD: missing metrics assumed 100% on scale-down can cancel it", func() HPAInput {
			x := in(6, 2, 0.56) // ratio 0.8; with 4 pods at 100%: 85/70, a scale-up
			x.Missing = 4
			return x
		}, 6, ReasonReversed},
		{"AD: not-yet-ready pods at 0% on scale-up can land within tolerance", func() HPAInput {
			x := in(8, 4, 1.0) // ratio 2 at a 50% target; with 4 pods at 0%: 50/50
			x.Target, x.NotReady = 0.5, 4
			return x
		}, 8, ReasonReversed},
		{"AD: not-yet-ready pods at 0% on scale-up dampen it", func() HPAInput {
			x := in(6, 4, 1.0) // with 2 pods at 0%: 66/50 = 1.32, ceil(1.32 x 6)
			x.Target, x.NotReady = 0.5, 2
			return x
		}, 8, ReasonRatio},
		// Upstream counts unready pods only when the ready pods' ratio is
		// above 1 (scaleUpWithUnready: usageRatio > 1.0): exactly at the
		// target they stay out and the ratio 1 keeps the count, where at 0%
		// they would make it 25/50 and halve the replicas.
		{"AD: at exactly the target, not-yet-ready pods change nothing", func() HPAInput {
			x := in(8, 4, 0.5)
			x.Target, x.NotReady = 0.5, 4
			return x
		}, 8, ReasonTolerance},
		{"AD: not-yet-ready pods are left out on a scale-down", func() HPAInput {
			x := in(8, 4, 0.35)
			x.NotReady = 4
			return x
		}, 2, ReasonRatio},
		{"AD: counting unready pods that would shrink a scale-up keeps replicas", func() HPAInput {
			x := in(20, 4, 1.0) // 100/50 = 2; with 16 pods at 0%: 20/50 = 0.4, a reversal
			x.Target, x.NotReady = 0.5, 16
			return x
		}, 20, ReasonReversed},
		{"AD: no ready pod with a metric: no change", func() HPAInput { return in(5, 0, 0) }, 5, ReasonNoMetrics},
		{"DB: scale-up limited to max(100%, 4 pods) per period: 4 pods win at 2", func() HPAInput {
			x := in(2, 2, 1.0)
			x.Target = 0.1 // ratio 10: desired 20
			return x
		}, 6, ReasonUpLimit},
		{"DB: scale-up limited to max(100%, 4 pods) per period: 100% wins at 10", func() HPAInput {
			x := in(10, 10, 1.0)
			x.Target = 0.25 // ratio 4: desired 40
			return x
		}, 20, ReasonUpLimit},
		{"DB: scale-up counts changes already made in the period", func() HPAInput {
			x := in(6, 6, 1.0)
			x.Target = 0.25
			x.Events = []ScaleEvent{{At: ago(10 * time.Second), Change: 4}} // started the period at 2
			return x
		}, 6, ReasonUpLimit},
		{"DB: a change older than the period no longer counts", func() HPAInput {
			x := in(6, 6, 1.0)
			x.Target = 0.25
			x.Events = []ScaleEvent{{At: ago(15 * time.Second), Change: 4}}
			return x
		}, 12, ReasonUpLimit},
		{"DB: scale-up has no stabilisation window", func() HPAInput {
			x := in(4, 4, 1.0)
			x.Target = 0.5
			x.History = []TimestampedRecommendation{{At: ago(100 * time.Second), Replicas: 3}}
			return x
		}, 8, ReasonRatio},
		{"SW: scale-down picks the highest recommendation in the 300 s window", func() HPAInput {
			x := in(10, 10, 0.28) // desired 4
			x.History = []TimestampedRecommendation{{At: ago(200 * time.Second), Replicas: 9}, {At: ago(100 * time.Second), Replicas: 7}}
			return x
		}, 9, ReasonDownStabilised},
		{"SW: a recommendation 300 s old has left the window", func() HPAInput {
			x := in(10, 10, 0.28)
			x.History = []TimestampedRecommendation{{At: ago(300 * time.Second), Replicas: 9}, {At: ago(301 * time.Second), Replicas: 12}}
			return x
		}, 4, ReasonRatio},
		{"SW: the window never raises replicas above current", func() HPAInput {
			x := in(10, 10, 0.28)
			x.History = []TimestampedRecommendation{{At: ago(60 * time.Second), Replicas: 15}}
			return x
		}, 10, ReasonDownStabilised},
		{"DB: scale-down by at most 100% per period reaches the recommendation at once", func() HPAInput { return in(40, 40, 0.07) }, 4, ReasonRatio},
		{"SP: 4 pods or 10% per minute: 10% allows more above 40 replicas", func() HPAInput {
			x := in(80, 80, 0.07)
			x.Behaviour.ScaleDown.Policies = []ScalingPolicy{{Type: PodsPolicy, Value: 4, Period: time.Minute}, {Type: PercentPolicy, Value: 10, Period: time.Minute}}
			x.Behaviour.ScaleDown.StabilizationWindow = 0
			return x
		}, 72, ReasonDownLimit},
		{"SP: 4 pods or 10% per minute: 4 pods allow more below 40 replicas", func() HPAInput {
			x := in(30, 30, 0.07)
			x.Behaviour.ScaleDown.Policies = []ScalingPolicy{{Type: PodsPolicy, Value: 4, Period: time.Minute}, {Type: PercentPolicy, Value: 10, Period: time.Minute}}
			x.Behaviour.ScaleDown.StabilizationWindow = 0
			return x
		}, 26, ReasonDownLimit},
		{"SP: selectPolicy Min picks the smallest change", func() HPAInput {
			x := in(80, 80, 0.07)
			x.Behaviour.ScaleDown = ScalingRules{Select: SelectMin, Policies: []ScalingPolicy{{Type: PodsPolicy, Value: 4, Period: time.Minute}, {Type: PercentPolicy, Value: 10, Period: time.Minute}}}
			return x
		}, 76, ReasonDownLimit},
		{"SP: selectPolicy Disabled forbids scale-down", func() HPAInput {
			x := in(80, 80, 0.07)
			x.Behaviour.ScaleDown = ScalingRules{Select: SelectDisabled}
			return x
		}, 80, ReasonDownLimit},
		{"SP: percent scale-down rounds the limit down", func() HPAInput {
			x := in(15, 15, 0.07) // start 15 x (1 - 0.5) = 7.5: 7
			x.Behaviour.ScaleDown = ScalingRules{Policies: []ScalingPolicy{{Type: PercentPolicy, Value: 50, Period: time.Minute}}}
			return x
		}, 7, ReasonDownLimit},
		{"SP: percent scale-up rounds the limit up", func() HPAInput {
			x := in(15, 15, 1.0) // 15 x 1.1 = 16.5: 17
			x.Target = 0.1
			x.Behaviour.ScaleUp = ScalingRules{Policies: []ScalingPolicy{{Type: PercentPolicy, Value: 10, Period: time.Minute}}}
			return x
		}, 17, ReasonUpLimit},
		{"min and max clamp: max", func() HPAInput {
			x := in(8, 8, 1.0)
			x.Target, x.Max = 0.5, 10
			return x
		}, 10, ReasonTooMany},
		{"min and max clamp: min", func() HPAInput {
			x := in(8, 8, 0.07)
			x.Min = 3
			return x
		}, 3, ReasonTooFew},
		{"current replicas above max come down to max before any metric", func() HPAInput {
			x := in(12, 12, 1.0)
			x.Max = 10
			return x
		}, 10, ReasonAboveMax},
		{"current replicas below min come up to min before any metric", func() HPAInput {
			x := in(1, 1, 0.0)
			x.Min = 2
			return x
		}, 2, ReasonBelowMin},
		{"zero replicas disable scaling", func() HPAInput { return in(0, 0, 0) }, 0, ReasonScalingDisabled},
		{"isWithin: a ratio of exactly 1 + tolerance is within (110% over 100%)", func() HPAInput {
			x := in(10, 10, 1.1)
			x.Target = 1
			return x
		}, 10, ReasonTolerance},
		{"isWithin: a ratio of exactly 1 - tolerance is within (90% over 100%)", func() HPAInput {
			x := in(10, 10, 0.9)
			x.Target = 1
			return x
		}, 10, ReasonTolerance},
		{"isWithin: just past the bound scales (111% over 100%)", func() HPAInput {
			x := in(10, 10, 1.11)
			x.Target = 1
			return x
		}, 12, ReasonRatio},
		{"tolerances: the scale-up tolerance does not widen the scale-down side", func() HPAInput {
			x := in(10, 10, 0.56) // ratio 0.8
			up := 0.5
			x.Behaviour.ScaleUp.Tolerance = &up
			x.Behaviour.ScaleDown.StabilizationWindow = 0
			return x
		}, 8, ReasonRatio},
		{"tolerances: a direction's tolerance replaces the controller's", func() HPAInput {
			x := in(10, 10, 0.84) // ratio 1.2
			up := 0.25
			x.Behaviour.ScaleUp.Tolerance = &up
			return x
		}, 10, ReasonTolerance},
		{"tolerances: without spec.behavior the controller's applies both ways", func() HPAInput {
			x := in(10, 10, 0.84)
			up := 0.25
			x.Behaviour.ScaleUp.Tolerance = &up
			x.NoBehaviour, x.DownscaleWindow = true, DefaultDownscaleWindow
			return x
		}, 12, ReasonRatio},
		{"legacy: scale-up by at most max(2 x current, 4): 4 pods from 1", func() HPAInput {
			x := legacy(1, 1, 1.0)
			x.Target = 0.1
			return x
		}, 4, ReasonLegacyUpLimit},
		{"legacy: scale-up by at most max(2 x current, 4): doubling from 10", func() HPAInput {
			x := legacy(10, 10, 1.0)
			x.Target = 0.1
			return x
		}, 20, ReasonLegacyUpLimit},
		{"legacy: a peak in the window holds on scale-up too", func() HPAInput {
			x := legacy(10, 10, 0.84) // desired 12; 16 two minutes ago
			x.History = []TimestampedRecommendation{{At: ago(2 * time.Minute), Replicas: 16}}
			return x
		}, 16, ReasonWindowPeak},
		{"legacy: a peak above current holds against a scale-down", func() HPAInput {
			x := legacy(10, 10, 0.28) // desired 4; 12 a minute ago
			x.History = []TimestampedRecommendation{{At: ago(time.Minute), Replicas: 12}}
			return x
		}, 12, ReasonWindowPeak},
		{"legacy: a recommendation exactly the window old is still in it", func() HPAInput {
			x := legacy(10, 10, 0.28)
			x.History = []TimestampedRecommendation{{At: ago(DefaultDownscaleWindow), Replicas: 9}, {At: ago(DefaultDownscaleWindow + time.Second), Replicas: 12}}
			return x
		}, 9, ReasonWindowPeak},
		{"legacy: no scale-down rate limit", func() HPAInput { return legacy(40, 40, 0.07) }, 4, ReasonRatio},
		{"legacy: the window's peak is clamped to max", func() HPAInput {
			x := legacy(10, 10, 0.84)
			x.Max = 14
			x.History = []TimestampedRecommendation{{At: ago(time.Minute), Replicas: 16}}
			return x
		}, 14, ReasonTooMany},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := Recommend(tt.in())
			if got != tt.want || reason != tt.reason {
				t.Fatalf("Recommend = %d (%s), want %d (%s)", got, reason, tt.want, tt.reason)
			}
		})
	}
}

func TestRecommendDoesNotAllocate(t *testing.T) {
	x := in(10, 10, 0.28)
	x.History = make([]TimestampedRecommendation, 22)
	x.Events = make([]ScaleEvent, 3)
	if allocs := testing.AllocsPerRun(100, func() { Recommend(x) }); allocs != 0 {
		t.Fatalf("%.1f allocations per Recommend, want 0", allocs)
	}
	x.NoBehaviour, x.DownscaleWindow = true, DefaultDownscaleWindow
	if allocs := testing.AllocsPerRun(100, func() { Recommend(x) }); allocs != 0 {
		t.Fatalf("%.1f allocations per legacy Recommend, want 0", allocs)
	}
}
