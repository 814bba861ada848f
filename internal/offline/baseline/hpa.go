package baseline

import (
	"math"
	"time"
)

// This file is the pure core of the Kubernetes HorizontalPodAutoscaler
// (autoscaling/v2) for one CPU utilisation metric, as the Kubernetes
// documentation specifies it ("Horizontal Pod Autoscaling", section
// "Algorithm details" and "Configurable scaling behavior") and as the
// controller implements it (kubernetes/kubernetes
// pkg/controller/podautoscaler, current master):
//
//   - replica_calculator.go: GetResourceReplicas and Tolerances.isWithin;
//   - horizontal.go, with spec.behavior set: normalizeDesiredReplicasWithBehaviors,
//     stabilizeRecommendationWithBehaviors, convertDesiredReplicasWithBehaviorRate,
//     calculateScaleUpLimitWithScalingRules, calculateScaleDownLimitWithBehaviors;
//   - horizontal.go, without it (the legacy path): normalizeDesiredReplicas,
//     stabilizeRecommendation, convertDesiredReplicasWithRules,
//     calculateScaleUpLimit;
//   - horizontal.go tolerancesForHpa: per-direction tolerances
//     (spec.behavior.scaleUp/scaleDown.tolerance, the HPAConfigurableTolerance
//     feature, KEP-4951, alpha in v1.33).
//
// Its tests port the upstream CPU and behaviour cases by name
// (hpa_upstream_test.go).

// DefaultTolerance is the HPA's default tolerance: no scaling while the usage
// ratio is within 1 +- 0.1 (kube-controller-manager
// --horizontal-pod-autoscaler-tolerance).
const DefaultTolerance = 0.1

// DefaultSyncPeriod is how often the HPA controller reconciles
// (--horizontal-pod-autoscaler-sync-period).
const DefaultSyncPeriod = 15 * time.Second

// DefaultDownscaleWindow is the controller's downscale stabilisation window
// (--horizontal-pod-autoscaler-downscale-stabilization): the legacy path's
// only window, and the scale-down window of a behaviour that sets none.
const DefaultDownscaleWindow = 5 * time.Minute

// The legacy path's scale-up limit, max(scaleUpLimitFactor x current,
// scaleUpLimitMinimum) per reconcile (horizontal.go scaleUpLimitFactor,
// scaleUpLimitMinimum; upstream's tests raise the factor to 8).
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

// PolicyType says how a ScalingPolicy bounds a change.
type PolicyType int8

const (
	// PodsPolicy allows Value pods of change per Period.
	PodsPolicy PolicyType = iota + 1
	// PercentPolicy allows Value percent of the replicas at the start of the
	// Period of change per Period.
	PercentPolicy
)

// ScalingPolicy is one autoscaling/v2 HPAScalingPolicy.
type ScalingPolicy struct {
	Type   PolicyType
	Value  int32
	Period time.Duration // periodSeconds
}

// SelectPolicy says which policy of a direction wins.
type SelectPolicy int8

const (
	// SelectMax picks the policy that allows the largest change (the default).
	SelectMax SelectPolicy = iota
	// SelectMin picks the policy that allows the smallest change.
	SelectMin
	// SelectDisabled forbids changes in the direction.
	SelectDisabled
)

// ScalingRules is one direction's behaviour, an autoscaling/v2 HPAScalingRules.
type ScalingRules struct {
	// StabilizationWindow: scale-up uses the lowest, scale-down the highest
	// recommendation within it.
	StabilizationWindow time.Duration
	Select              SelectPolicy
	Policies            []ScalingPolicy
	// Tolerance is the direction's own usage-ratio dead band, >= 0
	// (HPAScalingRules.tolerance, HPAConfigurableTolerance); nil: the
	// controller's, HPAInput.Tolerance.
	Tolerance *float64
}

// Behaviour is the HPA's spec.behavior.
type Behaviour struct {
	ScaleUp, ScaleDown ScalingRules
}

// DefaultBehaviour is spec.behavior with every field left to its default:
// scale up without stabilisation by at most the larger of 100% or 4 pods per
// 15 s; scale down to the highest recommendation of the last 300 s, by at
// most 100% per 15 s. The API server fills in the unset fields of a
// behaviour that is given (pkg/apis/autoscaling/v2 defaults.go
// SetDefaults_HorizontalPodAutoscalerBehavior, GenerateHPAScaleUpRules,
// GenerateHPAScaleDownRules) and the controller the scale-down window, from
// --horizontal-pod-autoscaler-downscale-stabilization
// (maybeInitScaleDownStabilizationWindow). An HPA with no spec.behavior at
// all keeps none and takes the legacy path (HPAInput.NoBehaviour).
func DefaultBehaviour() Behaviour {
	return Behaviour{
		ScaleUp: ScalingRules{
			StabilizationWindow: 0,
			Select:              SelectMax,
			Policies: []ScalingPolicy{
				{Type: PercentPolicy, Value: 100, Period: 15 * time.Second},
				{Type: PodsPolicy, Value: 4, Period: 15 * time.Second},
			},
		},
		ScaleDown: ScalingRules{
			StabilizationWindow: 300 * time.Second,
			Select:              SelectMax,
			Policies: []ScalingPolicy{
				{Type: PercentPolicy, Value: 100, Period: 15 * time.Second},
			},
		},
	}
}

// longest is the longest period of the rules' policies.
func (r *ScalingRules) longest() time.Duration {
	var p time.Duration
	for _, pol := range r.Policies {
		p = max(p, pol.Period)
	}
	return p
}

// TimestampedRecommendation is one unstabilised recommendation the controller made,
// kept for the stabilisation windows.
type TimestampedRecommendation struct {
	At       time.Time
	Replicas int32
}

// ScaleEvent is one change of the replica count the controller made, kept
// for the rate policies: Change > 0 scaled up, Change < 0 scaled down.
type ScaleEvent struct {
	At     time.Time
	Change int32
}

// HPAInput is everything one reconcile of one HPA looks at.
type HPAInput struct {
	Now time.Time
	// Current is the scale target's spec.replicas.
	Current int32
	// Ready counts the pods that are ready and have a metric.
	Ready int32
	// NotReady counts the pods not yet ready (pending, or starting within the
	// CPU initialisation period): their metrics are set aside.
	NotReady int32
	// Missing counts the pods without a metric.
	Missing int32
	// Utilisation is the Ready pods' mean CPU usage over their request, >= 0;
	// above 1 when burstable pods use more than they request.
	Utilisation float64
	// Target is the target average utilisation, > 0 (0.7 is 70%).
	Target float64
	// Tolerance is the controller's usage-ratio dead band, both ways
	// (--horizontal-pod-autoscaler-tolerance), DefaultTolerance by default.
	// With Behaviour set, a direction's ScalingRules.Tolerance overrides it.
	Tolerance float64
	// Min and Max are spec.minReplicas and spec.maxReplicas.
	Min, Max int32
	// NoBehaviour says spec.behavior is unset: the controller takes its
	// legacy path (normaliseLegacy) and Behaviour is ignored.
	NoBehaviour bool
	// DownscaleWindow is the legacy path's stabilisation window, the
	// controller's --horizontal-pod-autoscaler-downscale-stabilization
	// (DefaultDownscaleWindow); unused with Behaviour set, whose ScaleDown
	// window the controller fills from the same flag when the spec leaves it
	// unset (DefaultBehaviour has it).
	DownscaleWindow time.Duration
	Behaviour       Behaviour
	// History holds past recommendations, any order; zero entries are unused.
	History []TimestampedRecommendation
	// Events holds past scale events, any order; zero entries are unused.
	Events []ScaleEvent
}

// Reasons a recommendation gives: what decided it, or which guard clipped it.
// In parentheses the controller's condition reason where it has one.
const (
	ReasonAboveMax        = "current replicas above max replicas"
	ReasonBelowMin        = "current replicas below min replicas"
	ReasonScalingDisabled = "scaling disabled: current replicas are zero"
	ReasonNoMetrics       = "no metrics for any ready pod"
	ReasonTolerance       = "usage ratio within tolerance"
	ReasonRatio           = "replicas scaled by the usage ratio"
	ReasonReversed        = "usage ratio with unready or missing pods reverses direction or is within tolerance"
	ReasonMetricsLength   = "counting unready or missing pods reverses direction"
	ReasonUpStabilised    = "scale-up stabilised: lowest recommendation in the window (ScaleUpStabilized)"
	ReasonDownStabilised  = "scale-down stabilised: highest recommendation in the window (ScaleDownStabilized)"
	ReasonUpLimit         = "scale-up rate limited by the policies (ScaleUpLimit)"
	ReasonDownLimit       = "scale-down rate limited by the policies (ScaleDownLimit)"
	ReasonTooMany         = "clamped to max replicas (TooManyReplicas)"
	ReasonTooFew          = "clamped to min replicas (TooFewReplicas)"
	// The legacy path's (no spec.behavior).
	ReasonWindowPeak    = "highest recommendation in the downscale window, either direction (ScaleDownStabilized)"
	ReasonLegacyUpLimit = "scale-up limited to max(2 x current, 4) replicas (ScaleUpLimit)"
)

// Recommend is one HPA reconcile: the replica count the controller sets and
// why. Order as in the controller: replicas outside [Min, Max] are brought to
// the bound; else the replica calculator's desired count is stabilised over
// the windows, limited by the rate policies and clamped to [Min, Max] (with
// NoBehaviour: normaliseLegacy). It is pure and does not allocate.
func Recommend(in HPAInput) (replicas int32, reason string) {
	replicas, _, _, reason = recommend(in)
	return replicas, reason
}

// recommend is Recommend that also returns the unstabilised desired count and
// whether the controller records it in its history.
func recommend(in HPAInput) (replicas, desired int32, record bool, reason string) {
	return recommendWithin(&in, historyBounds(&in))
}

// bounds are the extremes of the recommendation history within the
// stabilisation windows: the lowest in the scale-up window (MaxInt32 when
// none) and the highest in the scale-down window (MinInt32 when none), where
// a recommendation counts when made after the cutoff (timestamp.After, as
// stabilizeRecommendationWithBehaviors), and the legacy path's peak, the
// highest in the downscale window, where one made at the cutoff counts too
// (!timestamp.Before, as stabilizeRecommendation; MinInt32 when none).
type bounds struct{ up, down, peak int32 }

// noBounds are the bounds of an empty history.
var noBounds = bounds{up: math.MaxInt32, down: math.MinInt32, peak: math.MinInt32}

// historyBounds finds the bounds of in.History.
func historyBounds(in *HPAInput) bounds {
	b := noBounds
	upCut := in.Now.Add(-in.Behaviour.ScaleUp.StabilizationWindow)
	downCut := in.Now.Add(-in.Behaviour.ScaleDown.StabilizationWindow)
	peakCut := in.Now.Add(-in.DownscaleWindow)
	for _, r := range in.History {
		if r.At.IsZero() {
			continue
		}
		if r.At.After(upCut) {
			b.up = min(b.up, r.Replicas)
		}
		if r.At.After(downCut) {
			b.down = max(b.down, r.Replicas)
		}
		if !r.At.Before(peakCut) {
			b.peak = max(b.peak, r.Replicas)
		}
	}
	return b
}

// recommendWithin is recommend with the history already reduced to its
// bounds.
func recommendWithin(in *HPAInput, b bounds) (replicas, desired int32, record bool, reason string) {
	switch {
	case in.Current == 0 && in.Min != 0:
		return 0, 0, false, ReasonScalingDisabled
	case in.Current > in.Max:
		return in.Max, 0, false, ReasonAboveMax
	case in.Current < in.Min:
		return in.Min, 0, false, ReasonBelowMin
	}
	desired, ok, why := replicaCount(in)
	if !ok {
		return in.Current, 0, false, why
	}
	var stable int32
	var stabWhy, limitWhy string
	if in.NoBehaviour {
		stable, stabWhy = max(desired, b.peak), ReasonWindowPeak
		replicas, limitWhy = normaliseLegacy(in, stable)
	} else {
		stable, stabWhy = stabilise(in.Current, desired, b)
		replicas, limitWhy = limitRate(in, stable)
	}
	switch {
	case replicas != stable:
		reason = limitWhy
	case stable != desired:
		reason = stabWhy
	default:
		reason = why
	}
	return replicas, desired, true, reason
}

// tolerances are the usage-ratio dead band below and above 1, upstream's
// Tolerances{scaleDown, scaleUp} (replica_calculator.go).
type tolerances struct{ down, up float64 }

// isWithin is Tolerances.isWithin (replica_calculator.go, current master):
//
//	(1.0-t.scaleDown) <= usageRatio && usageRatio <= (1.0+t.scaleUp)
//
// A ratio on a bound is within: 110% over a 100% target with tolerance 0.1
// does not scale. (The check it replaced, math.Abs(1.0-usageRatio) <=
// tolerance, scaled there: in floating point |1 - 1.1| is just above 0.1.)
func (t tolerances) isWithin(ratio float64) bool {
	return (1.0-t.down) <= ratio && ratio <= (1.0+t.up)
}

// tolerancesFor is tolerancesForHpa (horizontal.go): the controller's
// tolerance both ways unless spec.behavior sets a direction's own.
func tolerancesFor(in *HPAInput) tolerances {
	t := tolerances{down: in.Tolerance, up: in.Tolerance}
	if in.NoBehaviour {
		return t
	}
	if p := in.Behaviour.ScaleDown.Tolerance; p != nil {
		t.down = *p
	}
	if p := in.Behaviour.ScaleUp.Tolerance; p != nil {
		t.up = *p
	}
	return t
}

// ReplicaCount is the HPA replica calculator for a resource utilisation
// metric (GetResourceReplicas): the desired replica count before behaviour,
// or ok false when no ready pod has a metric. With the usage ratio
//
//	ratio = utilisation% / target%              (whole percent, as the controller)
//	desired = ceil(ratio x ready)               no unready or missing pods
//
// and nothing changes while 1 - down <= ratio <= 1 + up (tolerances.isWithin,
// tolerancesFor). Otherwise the ratio is
// recomputed over more pods: missing pods count at 100% of their request on a
// scale-down and at 0% on a scale-up, not-yet-ready pods at 0% on a scale-up
// (they are left out on a scale-down); if the new ratio reverses the direction
// or falls within tolerance nothing changes, else
//
//	desired = ceil(newRatio x pods counted)
//
// unless that count reverses the direction.
func ReplicaCount(in HPAInput) (desired int32, ok bool, reason string) { return replicaCount(&in) }

// replicaCount is ReplicaCount without copying the input.
func replicaCount(in *HPAInput) (desired int32, ok bool, reason string) {
	if in.Ready <= 0 {
		return in.Current, false, ReasonNoMetrics
	}
	tol := tolerancesFor(in)
	target := int64(math.Round(in.Target * 100))
	// The controller sums milli-cores and divides in integers:
	// utilisation% = floor(sum(usage) x 100 / sum(request)).
	util := int64(math.Floor(in.Utilisation*100 + 1e-9))
	ratio := float64(util) / float64(target)

	// For target > 0, ratio > 1 exactly when util > target (integers, the
	// quotient correctly rounded): the test need not wait for the division.
	above := util > target
	if target <= 0 {
		above = ratio > 1
	}
	unreadyUp := in.NotReady > 0 && above
	if !unreadyUp && in.Missing == 0 {
		if tol.isWithin(ratio) {
			return in.Current, true, ReasonTolerance
		}
		return int32(math.Ceil(ratio * float64(in.Ready))), true, ReasonRatio
	}

	// Sums in percent of one pod's request, every pod requesting the same.
	usage := in.Utilisation * 100 * float64(in.Ready)
	pods := int64(in.Ready)
	if in.Missing > 0 {
		switch {
		case ratio < 1:
			usage += float64(int64(in.Missing) * max(100, target))
			pods += int64(in.Missing)
		case ratio > 1:
			pods += int64(in.Missing) // at 0%
		}
	}
	if unreadyUp {
		pods += int64(in.NotReady) // at 0%
	}
	newUtil := int64(math.Floor(usage/float64(pods) + 1e-9))
	newRatio := float64(newUtil) / float64(target)
	if tol.isWithin(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
		return in.Current, true, ReasonReversed
	}
	desired = int32(math.Ceil(newRatio * float64(pods)))
	if (newRatio < 1 && desired > in.Current) || (newRatio > 1 && desired < in.Current) {
		return in.Current, true, ReasonMetricsLength
	}
	return desired, true, ReasonRatio
}

// stabilise bounds the recommendation by the history: not above the highest
// recommendation in the scale-down window (desired included), not below the
// lowest in the scale-up window, starting from the current count.
func stabilise(current, desired int32, b bounds) (int32, string) {
	up, down := min(desired, b.up), max(desired, b.down)
	rec := current
	if rec < up {
		rec = up
	}
	if rec > down {
		rec = down
	}
	if desired >= current {
		return rec, ReasonUpStabilised
	}
	return rec, ReasonDownStabilised
}

// normaliseLegacy is the rest of normalizeDesiredReplicas (horizontal.go),
// the path of an HPA without spec.behavior, after stabilizeRecommendation
// has taken the highest recommendation of the downscale window, the desired
// one included (stable). That window holds both ways: upstream keeps no
// lower bound there, so a recommendation the scale-up limit cut short is
// still pursued, and a recent peak keeps a falling HPA up, for as long as it
// stays in the window. convertDesiredReplicasWithRules then brings stable
// to at least Min and at most the lower of Max and
//
//	scaleUpLimit = max(2 x current, 4)     calculateScaleUpLimit
//
// There is no scale-down rate limit and no event history.
func normaliseLegacy(in *HPAInput, stable int32) (int32, string) {
	limit := int32(max(scaleUpLimitFactor*float64(in.Current), scaleUpLimitMinimum))
	highest, why := in.Max, ReasonTooMany
	if in.Max > limit {
		highest, why = limit, ReasonLegacyUpLimit
	}
	switch {
	case stable < in.Min:
		return in.Min, ReasonTooFew
	case stable > highest:
		return highest, why
	}
	return stable, ""
}

// limitRate applies the direction's rate policies and the [Min, Max] bounds.
func limitRate(in *HPAInput, desired int32) (int32, string) {
	switch {
	case desired > in.Current:
		limit := max(scaleUpLimit(in), in.Current)
		if limit < in.Max {
			if desired > limit {
				return limit, ReasonUpLimit
			}
		} else if desired > in.Max {
			return in.Max, ReasonTooMany
		}
	case desired < in.Current:
		limit := min(scaleDownLimit(in), in.Current)
		if limit > in.Min {
			if desired < limit {
				return limit, ReasonDownLimit
			}
		} else if desired < in.Min {
			return in.Min, ReasonTooFew
		}
	}
	return desired, ""
}

// periodStart is the replica count at the start of a policy's period: the
// current count less the changes made within the period.
func periodStart(in *HPAInput, period time.Duration) int32 {
	cut := in.Now.Add(-period)
	start := in.Current
	for _, e := range in.Events {
		if !e.At.IsZero() && e.At.After(cut) {
			start -= e.Change
		}
	}
	return start
}

// scaleUpLimit is the highest count the scale-up policies allow
// (calculateScaleUpLimitWithScalingRules):
//
//	Pods:    start + value
//	Percent: ceil(start x (1 + value/100))
func scaleUpLimit(in *HPAInput) int32 {
	r := &in.Behaviour.ScaleUp
	if r.Select == SelectDisabled {
		return in.Current
	}
	result := int32(math.MinInt32)
	if r.Select == SelectMin {
		result = math.MaxInt32
	}
	for _, p := range r.Policies {
		start := periodStart(in, p.Period)
		var proposed int32
		switch p.Type {
		case PodsPolicy:
			proposed = start + p.Value
		case PercentPolicy:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if r.Select == SelectMin {
			result = min(result, proposed)
		} else {
			result = max(result, proposed)
		}
	}
	return result
}

// scaleDownLimit is the lowest count the scale-down policies allow
// (calculateScaleDownLimitWithBehaviors):
//
//	Pods:    start - value
//	Percent: floor(start x (1 - value/100))
func scaleDownLimit(in *HPAInput) int32 {
	r := &in.Behaviour.ScaleDown
	if r.Select == SelectDisabled {
		return in.Current
	}
	result := int32(math.MaxInt32)
	if r.Select == SelectMin {
		result = math.MinInt32
	}
	for _, p := range r.Policies {
		start := periodStart(in, p.Period)
		var proposed int32
		switch p.Type {
		case PodsPolicy:
			proposed = start - p.Value
		case PercentPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		if r.Select == SelectMin {
			result = max(result, proposed)
		} else {
			result = min(result, proposed)
		}
	}
	return result
}
