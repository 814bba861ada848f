package baseline

import (
	"slices"
	"testing"
	"time"
)

// This file ports the upstream controller's CPU and behaviour test cases onto
// Recommend, each named after its upstream test function and, for table
// tests, the case name inside the table (kubernetes/kubernetes
// pkg/controller/podautoscaler, master: replica_calculator_test.go with the
// TestReplicaCalcResourceScale table and TestReplicaCalcConfigurableTolerance,
// horizontal_test.go). Left out: the custom, object and external metric
// cases, multi-metric ones, and those that pin the API plumbing (selectors,
// conditions on failed calls, event and status writes, event storage).
//
// How upstream fixtures map onto HPAInput:
//   - Pods are grouped as groupPods does: failed or deleted pods are
//     ignored; pending pods, pods within the CPU initialisation period (hot)
//     and pods whose Ready condition is False are not ready; listed pods
//     without a metric are missing; metrics of pods not listed are dropped.
//   - Utilisation is sum(usage) / sum(request) of the ready pods with a
//     metric, as GetResourceUtilizationRatio; Recommend floors it to whole
//     percent as upstream's integer division does. Recommend gives every pod
//     the same request; the one case whose missing pod requests more than the
//     others (TestReplicaCalcMissingMetricsScaleDownTargetOver100) lands on
//     upstream's count all the same.
//   - horizontal_test.go's fake clients split each pod's usage and request
//     over two containers, each rounded down (cpu.halved).
//   - An HPA test without scale rules has no spec.behavior: the legacy path
//     (NoBehaviour) with the controller's 5-minute downscale window. Upstream's
//     test package raises scaleUpLimitFactor to 8; no ported case depends on
//     it but TestConvertDesiredReplicasWithRules's last, which upstream
//     writes as calculateScaleUpLimit(3): here the controller's max(2 x 3, 4).
//   - A test whose recommendations are nil gets the controller's initial
//     recommendation, the current count at the first reconcile
//     (recordInitialRecommendation).
//   - Upstream's pure replica-calculator and normalisation tests go through
//     Recommend with the rest made transparent: calculator cases with
//     unlimited rate policies and no history, normalisation cases with the
//     desired count produced by one pod at the right ratio (desire).
//   - Where upstream calls a normalisation function directly with current
//     replicas above max, Recommend's reconcile brings them to max first
//     (ReasonAboveMax): the count is upstream's, the reason the reconcile's.
//   - Calculator errors (no metric for any pod, no CPU request, no pods)
//     leave the replicas alone, as the controller does: ReasonNoMetrics.

// cpu is an upstream test's CPU metric and pods.
type cpu struct {
	target   int32   // target utilisation, percent
	levels   []int64 // mCPU pod i uses; listed pods past the end report no metric
	requests []int64 // mCPU pod i requests; one entry per pod listed
	unready  []int   // pods whose Ready condition is False
	hot      []int   // pods started within the CPU initialisation period
	pending  []int   // pods in phase Pending
	ignored  []int   // pods failed or being deleted
	halved   bool    // usage and request split over two containers, each rounded down
}

// ones is n requests of 1000m.
func ones(n int) []int64 {
	r := make([]int64, n)
	for i := range r {
		r[i] = 1000
	}
	return r
}

// desire is a metric whose replica calculation is exactly n: one pod at n
// times the target (two at half of it for n = 1, which a ratio of 1 would
// leave within tolerance).
func desire(n int32) cpu {
	if n == 1 {
		return cpu{target: 2, levels: []int64{10, 10}, requests: ones(2)}
	}
	return cpu{target: 1, levels: []int64{int64(n) * 10}, requests: ones(1)}
}

// observe groups c's pods as groupPods does and returns the counts and the
// ready pods' utilisation.
func (c cpu) observe() (ready, notReady, missing int32, util float64) {
	var used, requested int64
	for i, req := range c.requests {
		switch {
		case slices.Contains(c.ignored, i):
		case slices.Contains(c.pending, i):
			notReady++
		case i >= len(c.levels):
			missing++
		case slices.Contains(c.hot, i) || slices.Contains(c.unready, i):
			notReady++
		default:
			ready++
			u := c.levels[i]
			if c.halved {
				u, req = 2*(u/2), 2*(req/2)
			}
			used += u
			requested += req
		}
	}
	if requested > 0 {
		util = float64(used) / float64(requested)
	}
	return ready, notReady, missing, util
}

// upstreamCase is one upstream case on Recommend.
type upstreamCase struct {
	name     string
	min, max int32
	current  int32
	cpu      cpu
	set      []func(*HPAInput)
	want     int32
	reason   string
}

func (c upstreamCase) input() HPAInput {
	ready, notReady, missing, util := c.cpu.observe()
	x := HPAInput{
		Now: t0, Current: c.current, Ready: ready, NotReady: notReady, Missing: missing,
		Utilisation: util, Target: float64(c.cpu.target) / 100, Tolerance: DefaultTolerance,
		Min: c.min, Max: c.max, DownscaleWindow: DefaultDownscaleWindow, Behaviour: DefaultBehaviour(),
	}
	for _, f := range c.set {
		f(&x)
	}
	return x
}

// rc is a replica_calculator_test.go case: the calculator alone, behind
// unlimited rate policies and no history.
func rc(name string, current int32, m cpu, want int32, reason string, set ...func(*HPAInput)) upstreamCase {
	return upstreamCase{name: "replica_calculator_test.go/" + name, min: 1, max: 1000, current: current, cpu: m,
		set: append([]func(*HPAInput){unlimited(0, 0)}, set...), want: want, reason: reason}
}

// hc is a horizontal_test.go case.
func hc(name string, min, max, current int32, m cpu, want int32, reason string, set ...func(*HPAInput)) upstreamCase {
	m.halved = true
	return upstreamCase{name: "horizontal_test.go/" + name, min: min, max: max, current: current, cpu: m, set: set, want: want, reason: reason}
}

// norm is a horizontal_test.go case that normalises a given desired count.
func norm(name string, min, max, current, desired, want int32, reason string, set ...func(*HPAInput)) upstreamCase {
	return upstreamCase{name: "horizontal_test.go/" + name, min: min, max: max, current: current, cpu: desire(desired), set: set, want: want, reason: reason}
}

// noBehaviour is an HPA without spec.behavior.
func noBehaviour(x *HPAInput) { x.NoBehaviour = true }

// firstReconcile is the controller's initial recommendation, the current
// count, for a test whose recommendations are nil.
func firstReconcile(x *HPAInput) {
	x.History = append(x.History, TimestampedRecommendation{At: t0, Replicas: x.Current})
}

// history is past recommendations as replicas, age pairs.
func history(pairs ...any) func(*HPAInput) {
	return func(x *HPAInput) {
		for k := 0; k < len(pairs); k += 2 {
			x.History = append(x.History, TimestampedRecommendation{At: ago(pairs[k+1].(time.Duration)), Replicas: int32(pairs[k].(int))})
		}
	}
}

// unlimited is a behaviour whose rate policies never bind, with the given
// stabilisation windows, in seconds.
func unlimited(upWindow, downWindow int) func(*HPAInput) {
	return func(x *HPAInput) {
		x.Behaviour = Behaviour{
			ScaleUp:   ScalingRules{StabilizationWindow: time.Duration(upWindow) * time.Second, Policies: []ScalingPolicy{{Type: PercentPolicy, Value: 1e6, Period: 15 * time.Second}}},
			ScaleDown: ScalingRules{StabilizationWindow: time.Duration(downWindow) * time.Second, Policies: []ScalingPolicy{{Type: PercentPolicy, Value: 100, Period: 15 * time.Second}}},
		}
	}
}

// rules is generateScalingRules: a Pods policy of pods per podsPeriod s and
// a Percent policy of percent per percentPeriod s (each when not 0), select
// Max, the window in seconds.
func rules(pods, podsPeriod, percent, percentPeriod, window int32) ScalingRules {
	r := ScalingRules{StabilizationWindow: time.Duration(window) * time.Second}
	if pods != 0 {
		r.Policies = append(r.Policies, ScalingPolicy{Type: PodsPolicy, Value: pods, Period: time.Duration(podsPeriod) * time.Second})
	}
	if percent != 0 {
		r.Policies = append(r.Policies, ScalingPolicy{Type: PercentPolicy, Value: percent, Period: time.Duration(percentPeriod) * time.Second})
	}
	return r
}

func up(r ScalingRules) func(*HPAInput)   { return func(x *HPAInput) { x.Behaviour.ScaleUp = r } }
func down(r ScalingRules) func(*HPAInput) { return func(x *HPAInput) { x.Behaviour.ScaleDown = r } }

// tolerance sets the directions' own tolerances, upstream's
// Tolerances{scaleDown, scaleUp}.
func tolerance(scaleDown, scaleUp float64) func(*HPAInput) {
	return func(x *HPAInput) {
		x.Behaviour.ScaleDown.Tolerance, x.Behaviour.ScaleUp.Tolerance = &scaleDown, &scaleUp
	}
}

// uniform is generateEventsUniformDistribution: one event per change, spread
// over the last period seconds, each at the middle of its segment; sign is
// +1 for scale-up events, -1 for scale-down ones.
func uniform(sign int32, changes []int32, period int) func(*HPAInput) {
	return func(x *HPAInput) {
		seg := float64(period) / float64(len(changes))
		for k, c := range changes {
			back := time.Duration(float64(period)-seg*float64(k+1)+seg/2) * time.Second
			x.Events = append(x.Events, ScaleEvent{At: ago(back), Change: sign * c})
		}
	}
}

func TestUpstreamCases(t *testing.T) {
	hot0, unready0 := []int{0}, []int{0}
	cases := []upstreamCase{
		// replica_calculator_test.go, TestReplicaCalcResourceScale.
		rc("TestReplicaCalcResourceScale/scale up", 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3)}, 5, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: container metric", 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3)}, 5, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: unready pod scales less", 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3), unready: unready0}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: hot-CPU container scales less", 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3), hot: hot0}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: hot-CPU pod scales less", 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3), hot: hot0}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/no scale: unready pods ignored", 3, cpu{target: 30, levels: []int64{400, 500, 700}, requests: ones(3), unready: []int{1, 2}}, 3, ReasonReversed),
		rc("TestReplicaCalcResourceScale/no scale: hot-CPU pods ignored", 3, cpu{target: 30, levels: []int64{400, 500, 700}, requests: ones(3), unready: []int{1, 2}, hot: []int{1, 2}}, 3, ReasonReversed),
		rc("TestReplicaCalcResourceScale/scale up: failed pods ignored", 2, cpu{target: 30, levels: []int64{500, 700}, requests: ones(4), unready: []int{2, 3}, ignored: []int{2, 3}}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: failed pods ignored with missing container metric", 2, cpu{target: 30, levels: []int64{500, 700}, requests: ones(4), unready: []int{2, 3}, ignored: []int{2, 3}}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: container metrics with failed pods ignored", 2, cpu{target: 30, levels: []int64{500, 700}, requests: ones(4), unready: []int{2, 3}, ignored: []int{2, 3}}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: pods being deleted are ignored", 2, cpu{target: 30, levels: []int64{500, 700}, requests: ones(4), unready: []int{2, 3}, ignored: []int{2, 3}}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale up: container metrics with pods being deleted ignored", 2, cpu{target: 30, levels: []int64{500, 700}, requests: ones(4), unready: []int{2, 3}, ignored: []int{2, 3}}, 4, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5)}, 3, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: container metric", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5)}, 3, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: exclude unready pods", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5), unready: []int{3, 4}}, 2, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: container metric excludes unready pods", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5), unready: []int{3, 4}}, 2, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: exclude unscheduled pods", 5, cpu{target: 50, levels: []int64{100}, requests: ones(5), unready: []int{1, 2, 3, 4}, pending: []int{1, 2, 3, 4}}, 1, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: container metric excludes unscheduled pods", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5), unready: []int{1, 2, 3, 4}, pending: []int{1, 2, 3, 4}}, 1, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: ignore hot-CPU pods", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5), hot: []int{3, 4}}, 2, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: container metric ignores hot-CPU pods", 5, cpu{target: 50, levels: []int64{100, 300, 500, 1000, 1000}, requests: ones(5), hot: []int{3, 4}}, 2, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: failed pods ignored", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(7), unready: []int{5, 6}, ignored: []int{5, 6}}, 3, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: container metric with failed pods ignored", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(7), unready: []int{5, 6}, ignored: []int{5, 6}}, 3, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: pods being deleted are ignored", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(7), unready: []int{5, 6}, ignored: []int{5, 6}}, 3, ReasonRatio),
		rc("TestReplicaCalcResourceScale/scale down: still-running pods being deleted are ignored", 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(7), unready: []int{5, 6}, ignored: []int{5, 6}}, 3, ReasonRatio),

		// replica_calculator_test.go, the CPU tests outside the table.
		rc("TestReplicaCalcDisjointResourcesMetrics", 1, cpu{target: 100, requests: ones(1)}, 1, ReasonNoMetrics), // its one metric is for a pod not listed
		rc("TestReplicaCalcTolerance", 3, cpu{target: 100, levels: []int64{1010, 1030, 1020}, requests: []int64{900, 1000, 1100}}, 3, ReasonTolerance),
		rc("TestReplicaCalcConfigurableTolerance/Outside of a 0% tolerance", 3, cpu{target: 100, levels: []int64{909, 1010, 1111}, requests: []int64{900, 1000, 1100}}, 4, ReasonRatio, tolerance(0, 0)),
		rc("TestReplicaCalcConfigurableTolerance/Within a 200% scale-up tolerance", 3, cpu{target: 100, levels: []int64{1890, 1910, 1900}, requests: []int64{900, 1000, 1100}}, 3, ReasonTolerance, tolerance(DefaultTolerance, 2)),
		rc("TestReplicaCalcConfigurableTolerance/Outside 8% scale-up tolerance (and superfuous scale-down tolerance)", 3, cpu{target: 100, levels: []int64{1100, 1080, 1090}, requests: []int64{900, 1000, 1100}}, 4, ReasonRatio, tolerance(2, .08)),
		rc("TestReplicaCalcConfigurableTolerance/Within a 36% scale-down tolerance", 3, cpu{target: 100, levels: []int64{660, 640, 650}, requests: []int64{900, 1000, 1100}}, 3, ReasonTolerance, tolerance(.36, DefaultTolerance)),
		rc("TestReplicaCalcConfigurableTolerance/Outside a 34% scale-down tolerance", 3, cpu{target: 100, levels: []int64{660, 640, 650}, requests: []int64{900, 1000, 1100}}, 2, ReasonRatio, tolerance(.34, DefaultTolerance)),
		rc("TestReplicaCalcSuperfluousMetrics", 4, cpu{target: 100, levels: []int64{4000, 9500, 3000, 7000, 3200, 2000}, requests: ones(4)}, 24, ReasonRatio),
		rc("TestReplicaCalcMissingMetrics", 4, cpu{target: 100, levels: []int64{400, 95}, requests: ones(4)}, 3, ReasonRatio),
		rc("TestReplicaCalcEmptyMetrics", 4, cpu{target: 100, requests: ones(4)}, 4, ReasonNoMetrics),
		rc("TestReplicaCalcEmptyCPURequest", 1, cpu{target: 100, levels: []int64{200}}, 1, ReasonNoMetrics), // its one pod requests no CPU
		rc("TestReplicaCalcMissingMetricsNoChangeEq", 2, cpu{target: 100, levels: []int64{1000}, requests: ones(2)}, 2, ReasonReversed),
		rc("TestReplicaCalcMissingMetricsNoChangeGt", 2, cpu{target: 100, levels: []int64{1900}, requests: ones(2)}, 2, ReasonReversed),
		rc("TestReplicaCalcMissingMetricsNoChangeLt", 2, cpu{target: 100, levels: []int64{600}, requests: ones(2)}, 2, ReasonRatio),
		rc("TestReplicaCalcMissingMetricsUnreadyChange", 3, cpu{target: 50, levels: []int64{100, 450}, requests: ones(3), unready: unready0}, 3, ReasonReversed),
		rc("TestReplicaCalcMissingMetricsHotCpuNoChange", 3, cpu{target: 50, levels: []int64{100, 450}, requests: ones(3), hot: hot0}, 3, ReasonReversed),
		rc("TestReplicaCalcMissingMetricsUnreadyScaleUp", 3, cpu{target: 50, levels: []int64{100, 2000}, requests: ones(3), unready: unready0}, 4, ReasonRatio),
		rc("TestReplicaCalcMissingMetricsHotCpuScaleUp", 3, cpu{target: 50, levels: []int64{100, 2000}, requests: ones(3), unready: unready0, hot: hot0}, 4, ReasonRatio),
		rc("TestReplicaCalcMissingMetricsUnreadyScaleDown", 4, cpu{target: 50, levels: []int64{100, 100, 100}, requests: ones(4), unready: unready0}, 3, ReasonRatio),
		rc("TestReplicaCalcMissingMetricsScaleDownTargetOver100", 4, cpu{target: 300, levels: []int64{200, 100, 100}, requests: []int64{1000, 1000, 2000, 2000}, unready: unready0}, 2, ReasonRatio),
		rc("TestReplicaCalcDuringRollingUpdateWithMaxSurge", 2, cpu{target: 50, levels: []int64{100, 100}, requests: ones(3)}, 2, ReasonMetricsLength),
		// 10 pods at 150m of requests jittered around 300m (sum 3000m):
		// a target of int32((1/(2 x 0.9) + 0.01) x 100) = 56% breaks the
		// tolerance, one of 55% (+ 0.004) does not.
		rc("TestReplicaCalcComputedToleranceAlgImplementation/scale", 10, cpu{target: 56, levels: tenAt(150), requests: jittered}, 9, ReasonRatio),
		rc("TestReplicaCalcComputedToleranceAlgImplementation/within tolerance", 10, cpu{target: 55, levels: tenAt(150), requests: jittered}, 10, ReasonTolerance),

		// horizontal_test.go, reconciles of one CPU HPA.
		hc("TestScaleUp", 2, 6, 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3)}, 5, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleUpContainer", 2, 6, 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3)}, 5, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleUpUnreadyLessScale", 2, 6, 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3), unready: unready0}, 4, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleUpHotCpuLessScale", 2, 6, 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3), hot: hot0}, 4, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleUpUnreadyNoScale", 2, 6, 3, cpu{target: 30, levels: []int64{400, 500, 700}, requests: ones(3), unready: []int{1, 2}}, 3, ReasonReversed, noBehaviour, firstReconcile),
		hc("TestScaleUpHotCpuNoScale", 2, 6, 3, cpu{target: 30, levels: []int64{400, 500, 700}, requests: ones(3), unready: []int{1, 2}, hot: []int{1, 2}}, 3, ReasonReversed, noBehaviour, firstReconcile),
		hc("TestScaleUpIgnoresFailedPods", 2, 6, 2, cpu{target: 30, levels: []int64{500, 700}, requests: ones(4), unready: []int{2, 3}, ignored: []int{2, 3}}, 4, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleUpIgnoresDeletionPods", 2, 6, 2, cpu{target: 30, levels: []int64{500, 700}, requests: ones(4), unready: []int{2, 3}, ignored: []int{2, 3}}, 4, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleUpDeployment", 2, 6, 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3)}, 5, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleUpReplicaSet", 2, 6, 3, cpu{target: 30, levels: []int64{300, 500, 700}, requests: ones(3)}, 5, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestScaleDown", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5)}, 3, ReasonRatio, noBehaviour),
		hc("TestScaleDownContainerResource", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5)}, 3, ReasonRatio, noBehaviour),
		hc("TestScaleDownWithScalingRules", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5)}, 3, ReasonRatio, up(rules(0, 0, 100, 15, 30))),
		hc("TestScaleDownStabilizeInitialSize", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5)}, 5, ReasonWindowPeak, noBehaviour, firstReconcile),
		hc("TestScaleDownIncludeUnreadyPods", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5), unready: []int{3, 4}}, 2, ReasonRatio, noBehaviour),
		hc("TestScaleDownIgnoreHotCpuPods", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(5), hot: []int{3, 4}}, 2, ReasonRatio, noBehaviour),
		hc("TestScaleDownIgnoresFailedPods", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(7), unready: []int{5, 6}, ignored: []int{5, 6}}, 3, ReasonRatio, noBehaviour),
		hc("TestScaleDownIgnoresDeletionPods", 2, 6, 5, cpu{target: 50, levels: []int64{100, 300, 500, 250, 250}, requests: ones(7), unready: []int{5, 6}, ignored: []int{5, 6}}, 3, ReasonRatio, noBehaviour),
		hc("TestTolerance", 1, 5, 3, cpu{target: 100, levels: []int64{1010, 1030, 1020}, requests: []int64{900, 1000, 1100}}, 3, ReasonTolerance, noBehaviour, firstReconcile),
		hc("TestMinReplicas", 2, 5, 3, cpu{target: 90, levels: []int64{10, 95, 10}, requests: []int64{900, 1000, 1100}}, 2, ReasonTooFew, noBehaviour),
		hc("TestZeroMinReplicasDesiredZero", 0, 5, 3, cpu{target: 90, levels: []int64{0, 0, 0}, requests: []int64{900, 1000, 1100}}, 0, ReasonRatio, noBehaviour),
		hc("TestMinReplicasDesiredZero", 2, 5, 3, cpu{target: 90, levels: []int64{0, 0, 0}, requests: []int64{900, 1000, 1100}}, 2, ReasonTooFew, noBehaviour),
		hc("TestZeroReplicas", 3, 5, 0, cpu{target: 90}, 0, ReasonScalingDisabled, noBehaviour, firstReconcile),
		hc("TestTooFewReplicas", 3, 5, 2, cpu{target: 90}, 3, ReasonBelowMin, noBehaviour, firstReconcile),
		hc("TestTooManyReplicas", 3, 5, 10, cpu{target: 90}, 5, ReasonAboveMax, noBehaviour, firstReconcile),
		hc("TestMaxReplicas", 2, 5, 3, cpu{target: 90, levels: []int64{8000, 9500, 1000}, requests: []int64{900, 1000, 1100}}, 5, ReasonTooMany, noBehaviour, firstReconcile),
		hc("TestSuperfluousMetrics", 2, 6, 4, cpu{target: 100, levels: []int64{4000, 9500, 3000, 7000, 3200, 2000}, requests: ones(4)}, 6, ReasonTooMany, noBehaviour, firstReconcile),
		hc("TestMissingMetrics", 2, 6, 4, cpu{target: 100, levels: []int64{400, 95}, requests: ones(4)}, 3, ReasonRatio, noBehaviour),
		hc("TestEmptyMetrics", 2, 6, 4, cpu{target: 100, requests: ones(4)}, 4, ReasonNoMetrics, noBehaviour, firstReconcile),
		hc("TestEmptyCPURequest", 1, 5, 1, cpu{target: 100, levels: []int64{200}}, 1, ReasonNoMetrics, noBehaviour, firstReconcile), // no pods listed
		hc("TestEventCreated", 1, 5, 1, cpu{target: 50, levels: []int64{200}, requests: []int64{200}}, 2, ReasonRatio, noBehaviour, firstReconcile),
		hc("TestEventNotCreated", 1, 5, 2, cpu{target: 50, levels: []int64{200, 200}, requests: []int64{400, 400}}, 2, ReasonTolerance, noBehaviour, firstReconcile),
		hc("TestMissingReports", 1, 5, 4, cpu{target: 50, levels: []int64{200}, requests: []int64{200}}, 2, ReasonRatio, noBehaviour),
		hc("TestUpscaleCap", 1, 100, 3, cpu{target: 10, levels: []int64{100, 200, 300}, requests: []int64{100, 100, 100}}, 24, ReasonUpLimit, up(rules(0, 0, 700, 60, 0)), firstReconcile),
		hc("TestUpscaleCapGreaterThanMaxReplicas", 1, 20, 3, cpu{target: 10, levels: []int64{100, 200, 300}, requests: []int64{100, 100, 100}}, 20, ReasonTooMany, up(rules(0, 0, 700, 60, 0)), firstReconcile),
		// spec.replicas 4 with 5 pods (a 25% surge), all at the target.
		hc("TestMoreReplicasThanSpecNoScale", 1, 8, 4, cpu{target: 50, levels: []int64{500, 500, 500, 500, 500}, requests: ones(5)}, 4, ReasonTolerance, noBehaviour, firstReconcile),
		hc("TestStabilizeDownscale", 1, 5, 4, cpu{target: 100, levels: []int64{50, 50, 50}, requests: []int64{100, 100, 100}}, 4, ReasonWindowPeak, noBehaviour, history(10, 10*time.Minute, 4, time.Minute)),
		hc("TestComputedToleranceAlgImplementation/tc1", 0, 1000, 10, cpu{target: 56, levels: tenAt(150), requests: jittered}, 9, ReasonRatio, noBehaviour),
		hc("TestComputedToleranceAlgImplementation/tc2", 0, 1000, 10, cpu{target: 55, levels: tenAt(150), requests: jittered}, 10, ReasonTolerance, noBehaviour),
		hc("TestScaleUpRCImmediately", 2, 6, 1, cpu{target: 80, levels: []int64{0, 0, 0, 0}, requests: ones(4)}, 2, ReasonBelowMin, noBehaviour, firstReconcile),
		hc("TestScaleDownRCImmediately", 2, 5, 6, cpu{target: 50, levels: []int64{8000, 9500, 1000}, requests: []int64{900, 1000, 1100}}, 5, ReasonAboveMax, noBehaviour, firstReconcile),

		// horizontal_test.go, TestConvertDesiredReplicasWithRules: the legacy
		// path's min, max and scale-up limit.
		norm("TestConvertDesiredReplicasWithRules/prenormalized desired replicas within range", 3, 8, 5, 7, 7, ReasonRatio, noBehaviour),
		norm("TestConvertDesiredReplicasWithRules/prenormalized desired replicas < minReplicas", 2, 8, 3, 1, 2, ReasonTooFew, noBehaviour),
		norm("TestConvertDesiredReplicasWithRules/prenormalized desired zeroed replicas within range", 0, 10, 1, 0, 0, ReasonRatio, noBehaviour),
		norm("TestConvertDesiredReplicasWithRules/maxReplicas is the limit because maxReplicas < scaleUpLimit", 1, 10, 20, 1000, 10, ReasonAboveMax, noBehaviour),
		norm("TestConvertDesiredReplicasWithRules/scaleUpLimit is the limit because scaleUpLimit < maxReplicas", 1, 2000, 3, 1000, 6, ReasonLegacyUpLimit, noBehaviour),

		// horizontal_test.go, the behaviour path's limits.
		norm("TestCalculateScaleUpLimitWithScalingRules", 1, 1000, 1, 10, 2, ReasonUpLimit, up(selectMin(rules(2, 60, 50, 60, 300)))),
		norm("TestCalculateScaleDownLimitWithBehaviors", 1, 1000, 5, 1, 3, ReasonDownLimit, down(selectMin(rules(2, 60, 50, 60, 300)))),

		// horizontal_test.go, TestNormalizeDesiredReplicas: the legacy
		// path's stabilisation, the highest recommendation of the last 5
		// minutes (current 5, so that the limits do not bind).
		norm("TestNormalizeDesiredReplicas/empty log", 1, 100, 5, 5, 5, ReasonRatio, noBehaviour),
		norm("TestNormalizeDesiredReplicas/stabilize", 1, 100, 5, 3, 5, ReasonWindowPeak, noBehaviour, history(4, 2*time.Minute, 5, time.Minute)),
		norm("TestNormalizeDesiredReplicas/no stabilize", 1, 100, 5, 3, 3, ReasonRatio, noBehaviour, history(1, 2*time.Minute, 2, time.Minute)),
		norm("TestNormalizeDesiredReplicas/no stabilize - old recommendations", 1, 100, 5, 3, 3, ReasonRatio, noBehaviour, history(10, 10*time.Minute, 9, 9*time.Minute)),
		norm("TestNormalizeDesiredReplicas/stabilize - old recommendations", 1, 100, 5, 3, 5, ReasonWindowPeak, noBehaviour, history(10, 10*time.Minute, 4, time.Minute, 5, 2*time.Minute, 9, 9*time.Minute)),

		// horizontal_test.go, TestScalingWithRules: the behaviour path's
		// rate limits (convertDesiredReplicasWithBehaviorRate), no history.
		norm("TestScalingWithRules/prenormalized desired replicas within range", 3, 8, 5, 7, 7, ReasonRatio),
		norm("TestScalingWithRules/prenormalized desired replicas < minReplicas", 2, 8, 3, 1, 2, ReasonTooFew),
		norm("TestScalingWithRules/prenormalized desired replicas within range when minReplicas is 0", 0, 10, 1, 0, 0, ReasonRatio),
		norm("TestScalingWithRules/maxReplicas is the limit because maxReplicas < scaleUpLimit", 1, 10, 20, 1000, 10, ReasonAboveMax),
		norm("TestScalingWithRules/desired replica count is more than the maximum replica count", 100, 150, 100, 1000, 150, ReasonTooMany),
		norm("TestScalingWithRules/scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies", 1, 2000, 3, 1000, 4, ReasonUpLimit, up(rules(0, 0, 1, 60, 0))),
		// Upstream marks this case testThis and returns before running it.
		norm("TestScalingWithRules/scaleDownLimit is the limit because scaleDownLimit > minReplicas with user defined policies", 3, 2000, 1000, 3, 980, ReasonDownLimit, down(rules(20, 60, 0, 0, 0))),
		norm("TestScalingWithRules/scaleUp with default behavior", 1, 1000, 10, 50, 20, ReasonUpLimit),
		norm("TestScalingWithRules/scaleUp with pods policy larger than percent policy", 1, 1000, 10, 500, 110, ReasonUpLimit, up(rules(100, 60, 100, 60, 0))),
		norm("TestScalingWithRules/scaleUp with percent policy larger than pods policy", 1, 1000, 10, 500, 20, ReasonUpLimit, up(rules(2, 60, 100, 60, 0))),
		norm("TestScalingWithRules/scaleUp with spec MaxReplicas limitation with large pod policy", 1, 1000, 10, 50, 50, ReasonRatio, up(rules(100, 60, 0, 0, 0))),
		norm("TestScalingWithRules/scaleUp with spec MaxReplicas limitation with large percent policy", 1, 1000, 10, 50, 50, ReasonRatio, up(rules(10000, 60, 0, 0, 0))),
		norm("TestScalingWithRules/scaleUp with pod policy limitation", 1, 1000, 10, 50, 40, ReasonUpLimit, up(rules(30, 60, 0, 0, 0))),
		norm("TestScalingWithRules/scaleUp with percent policy limitation", 1, 1000, 10, 50, 30, ReasonUpLimit, up(rules(0, 0, 200, 60, 0))),
		norm("TestScalingWithRules/scaleDown with percent policy larger than pod policy", 1, 1000, 100, 2, 80, ReasonDownLimit, down(rules(20, 60, 1, 60, 300))),
		norm("TestScalingWithRules/scaleDown with pod policy larger than percent policy", 1, 1000, 100, 2, 98, ReasonDownLimit, down(rules(2, 60, 1, 60, 300))),
		norm("TestScalingWithRules/scaleDown with spec MinReplicas=nil limitation with large pod policy", 1, 1000, 10, 0, 1, ReasonTooFew, down(rules(100, 60, 0, 0, 300))),
		norm("TestScalingWithRules/scaleDown with spec MinReplicas limitation with large pod policy", 1, 1000, 10, 0, 1, ReasonTooFew, down(rules(100, 60, 0, 0, 300))),
		norm("TestScalingWithRules/scaleDown with spec MinReplicas limitation with large percent policy", 5, 1000, 10, 2, 5, ReasonTooFew, down(rules(0, 0, 100, 60, 300))),
		norm("TestScalingWithRules/scaleDown with pod policy limitation", 1, 1000, 10, 2, 5, ReasonDownLimit, down(rules(5, 60, 0, 0, 300))),
		norm("TestScalingWithRules/scaleDown with percent policy limitation", 1, 1000, 10, 5, 5, ReasonRatio, down(rules(0, 0, 50, 60, 300))),
		norm("TestScalingWithRules/scaleUp with spec MaxReplicas limitation with large pod policy and events", 1, 200, 100, 500, 200, ReasonTooMany, up(rules(300, 60, 0, 0, 0)), uniform(1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleUp with spec MaxReplicas limitation with large percent policy and events", 1, 200, 100, 500, 200, ReasonTooMany, up(rules(0, 0, 10000, 60, 0)), uniform(1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events", 1, 1000, 100, 500, 100, ReasonUpLimit, up(rules(5, 120, 0, 0, 0)), uniform(1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleUp with pod policy and previous scale up events", 1, 1000, 100, 500, 235, ReasonUpLimit, up(rules(150, 120, 0, 0, 0)), uniform(1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleUp with percent policy and previous scale up events", 1, 1000, 100, 500, 255, ReasonUpLimit, up(rules(0, 0, 200, 120, 0)), uniform(1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleUp with percent policy and previous scale up and down events", 1, 1000, 6, 24, 16, ReasonUpLimit, up(rules(0, 0, 300, 300, 0)), uniform(1, []int32{4}, 120), uniform(-1, []int32{2}, 120)),
		norm("TestScalingWithRules/scaleDown with default policy and previous events", 1, 1000, 10, 5, 5, ReasonRatio, uniform(-1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events", 1, 1000, 100, 0, 1, ReasonTooFew, down(rules(115, 120, 0, 0, 300)), uniform(-1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleDown with spec MinReplicas limitation with large pod policy and previous events", 5, 1000, 100, 0, 5, ReasonTooFew, down(rules(130, 120, 0, 0, 300)), uniform(-1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleDown with spec MinReplicas limitation with large percent policy and previous events", 5, 1000, 100, 2, 5, ReasonTooFew, down(rules(0, 0, 100, 120, 300)), uniform(-1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleDown with pod policy limitation and previous events", 1, 1000, 100, 2, 100, ReasonDownLimit, down(rules(5, 120, 0, 0, 300)), uniform(-1, []int32{1, 5, 9}, 120)),
		norm("TestScalingWithRules/scaleDown with percent policy limitation and previous events", 1, 1000, 100, 0, 56, ReasonDownLimit, down(rules(0, 0, 50, 120, 300)), uniform(-1, []int32{2, 4, 6}, 120)),
		norm("TestScalingWithRules/scaleDown with percent policy and previous scale up and down events", 1, 1000, 10, 1, 6, ReasonDownLimit, down(rules(0, 0, 50, 180, 0)), uniform(1, []int32{2}, 120), uniform(-1, []int32{4}, 120)),
		norm("TestScalingWithRules/scaleDown with previous events preventing further scale down", 1, 1000, 100, 0, 100, ReasonDownLimit, down(rules(0, 0, 10, 120, 300)), uniform(-1, []int32{10, 10, 10}, 120)),
		norm("TestScalingWithRules/scaleDown with with previous events still allowing more scale down", 1, 1000, 10, 5, 5, ReasonRatio, down(rules(0, 0, 1000, 120, 300)), uniform(-1, []int32{10, 10, 10}, 120)),
		norm("TestScalingWithRules/check 'outdated' flag for events for one behavior for up", 1, 1000, 100, 200, 200, ReasonRatio, up(rules(1000, 60, 0, 0, 0)), uniform(1, []int32{8, 12, 9, 11}, 120)),
		norm("TestScalingWithRules/check that events were not marked 'outdated' for two different policies in the behavior for up", 1, 1000, 100, 200, 200, ReasonRatio, up(rules(1000, 120, 100, 60, 0)), uniform(1, []int32{8, 12, 9, 11}, 120)),
		norm("TestScalingWithRules/check that events were marked 'outdated' for two different policies in the behavior for up", 1, 1000, 100, 200, 200, ReasonRatio, up(rules(1000, 30, 100, 60, 0)), uniform(1, []int32{8, 12, 9, 11}, 120)),
		norm("TestScalingWithRules/check 'outdated' flag for events for one behavior for down", 1, 1000, 100, 5, 5, ReasonRatio, down(rules(1000, 60, 0, 0, 300)), uniform(-1, []int32{8, 12, 9, 11}, 120)),
		norm("TestScalingWithRules/check that events were not marked 'outdated' for two different policies in the behavior for down", 1, 1000, 100, 5, 5, ReasonRatio, down(rules(1000, 120, 100, 60, 300)), uniform(-1, []int32{8, 12, 9, 11}, 120)),
		norm("TestScalingWithRules/check that events were marked 'outdated' for two different policies in the behavior for down", 1, 1000, 100, 5, 5, ReasonRatio, down(rules(1000, 30, 100, 60, 300)), uniform(-1, []int32{8, 12, 9, 11}, 120)),

		// horizontal_test.go, TestNormalizeDesiredReplicasWithBehavior: the
		// behaviour path's stabilisation (stabilizeRecommendationWithBehaviors);
		// a window the case does not set is 0.
		norm("TestNormalizeDesiredReplicasWithBehavior/empty recommendations for scaling down", 1, 1000, 100, 5, 5, ReasonRatio, unlimited(0, 0)),
		norm("TestNormalizeDesiredReplicasWithBehavior/simple scale down stabilization", 1, 1000, 100, 3, 5, ReasonDownStabilised, unlimited(0, 180), history(4, 2*time.Minute, 5, time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/simple scale up stabilization", 1, 1000, 1, 7, 4, ReasonUpStabilised, unlimited(300, 0), history(4, 2*time.Minute, 5, time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/no scale down stabilization", 1, 1000, 100, 3, 3, ReasonRatio, unlimited(300, 0), history(1, 2*time.Minute, 2, time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/no scale up stabilization", 1, 1000, 1, 3, 3, ReasonRatio, unlimited(0, 300), history(4, 2*time.Minute, 5, time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/no scale down stabilization, reuse recommendation element", 1, 1000, 100, 3, 3, ReasonRatio, unlimited(0, 0), history(10, 10*time.Minute, 9, 9*time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/no scale up stabilization, reuse recommendation element", 1, 1000, 1, 100, 100, ReasonRatio, unlimited(0, 0), history(10, 10*time.Minute, 9, 9*time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/scale down stabilization, reuse one of obsolete recommendation element", 1, 1000, 100, 3, 5, ReasonDownStabilised, unlimited(0, 180), history(10, 10*time.Minute, 4, time.Minute, 5, 2*time.Minute, 9, 9*time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/scale up stabilization, reuse one of obsolete recommendation element", 1, 1000, 1, 100, 5, ReasonUpStabilised, unlimited(300, 0), history(10, 100*time.Minute, 6, time.Minute, 5, 2*time.Minute, 9, 3*time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/scale up and down stabilization, do not scale up when prenormalized rec goes down", 1, 1000, 2, 1, 2, ReasonDownStabilised, unlimited(300, 300), history(2, 100*time.Minute, 3, 3*time.Minute)),
		norm("TestNormalizeDesiredReplicasWithBehavior/scale up and down stabilization, do not scale down when prenormalized rec goes up", 1, 1000, 2, 3, 2, ReasonUpStabilised, unlimited(300, 300), history(2, 100*time.Minute, 1, 3*time.Minute)),
	}
	if len(cases) != 153 {
		t.Errorf("%d upstream cases, want 153", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Errorf("case %q appears twice", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			got, reason := Recommend(c.input())
			if got != c.want || reason != c.reason {
				t.Fatalf("Recommend = %d (%s), want %d (%s)", got, reason, c.want, c.reason)
			}
		})
	}
}

// tenAt is ten pods each using m.
func tenAt(m int64) []int64 {
	l := make([]int64, 10)
	for i := range l {
		l[i] = m
	}
	return l
}

// jittered is TestComputedToleranceAlgImplementation's requests: 300m
// each, jittered by +-100, 10, 2 and 1.
var jittered = []int64{400, 200, 310, 290, 302, 298, 301, 299, 300, 300}

// selectMin is r choosing the policy that allows the smallest change.
func selectMin(r ScalingRules) ScalingRules {
	r.Select = SelectMin
	return r
}
