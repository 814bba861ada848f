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
// pkg/controller/podautoscaler: replica_calculator.go GetResourceReplicas,
// horizontal.go stabilizeRecommendationWithBehaviors and
// convertDesiredReplicasWithBehaviorRate).

// DefaultTolerance is the HPA's default tolerance: no scaling while the usage
// ratio is within 1 +- 0.1 (kube-controller-manager
// --horizontal-pod-autoscaler-tolerance).
const DefaultTolerance = 0.1

// DefaultSyncPeriod is how often the HPA controller reconciles
// (--horizontal-pod-autoscaler-sync-period).
const DefaultSyncPeriod = 15 * time.Second

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
}

// Behaviour is the HPA's spec.behavior.
type Behaviour struct {
	ScaleUp, ScaleDown ScalingRules
}

// DefaultBehaviour is the behaviour the API server fills in when a v2 HPA
// gives none: scale up without stabilisation by at most the larger of 100% or
// 4 pods per 15 s; scale down to the highest recommendation of the last 300 s,
// by at most 100% per 15 s.
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

// Recommendation is one unstabilised recommendation the controller made,
// kept for the stabilisation windows.
type Recommendation struct {
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
	// Utilisation is the Ready pods' mean CPU usage over their request, >= 0.
	Utilisation float64
	// Target is the target average utilisation, > 0 (0.7 is 70%).
	Target float64
	// Tolerance is the usage-ratio dead band, DefaultTolerance by default.
	Tolerance float64
	// Min and Max are spec.minReplicas and spec.maxReplicas.
	Min, Max  int32
	Behaviour Behaviour
	// History holds past recommendations, any order; zero entries are unused.
	History []Recommendation
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
)

// Recommend is one HPA reconcile: the replica count the controller sets and
// why. Order as in the controller: replicas outside [Min, Max] are brought to
// the bound; else the replica calculator's desired count is stabilised over
// the windows, limited by the rate policies and clamped to [Min, Max]. It is
// pure and does not allocate.
func Recommend(in HPAInput) (replicas int32, reason string) {
	replicas, _, _, reason = recommend(in)
	return replicas, reason
}

// recommend is Recommend that also returns the unstabilised desired count and
// whether the controller records it in its history.
func recommend(in HPAInput) (replicas, desired int32, record bool, reason string) {
	return recommendWithin(in, historyBounds(&in))
}

// bounds are the extremes of the recommendation history within the
// stabilisation windows: the lowest in the scale-up window (MaxInt32 when
// none) and the highest in the scale-down window (MinInt32 when none).
type bounds struct{ up, down int32 }

// historyBounds finds the bounds of in.History.
func historyBounds(in *HPAInput) bounds {
	b := bounds{up: math.MaxInt32, down: math.MinInt32}
	upCut := in.Now.Add(-in.Behaviour.ScaleUp.StabilizationWindow)
	downCut := in.Now.Add(-in.Behaviour.ScaleDown.StabilizationWindow)
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
	}
	return b
}

// recommendWithin is recommend with the history already reduced to its
// bounds.
func recommendWithin(in HPAInput, b bounds) (replicas, desired int32, record bool, reason string) {
	switch {
	case in.Current == 0 && in.Min != 0:
		return 0, 0, false, ReasonScalingDisabled
	case in.Current > in.Max:
		return in.Max, 0, false, ReasonAboveMax
	case in.Current < in.Min:
		return in.Min, 0, false, ReasonBelowMin
	}
	desired, ok, why := ReplicaCount(in)
	if !ok {
		return in.Current, 0, false, why
	}
	stable, stabWhy := stabilise(in.Current, desired, b)
	replicas, limitWhy := limitRate(&in, stable)
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

// ReplicaCount is the HPA replica calculator for a resource utilisation
// metric (GetResourceReplicas): the desired replica count before behaviour,
// or ok false when no ready pod has a metric. With the usage ratio
//
//	ratio = utilisation% / target%              (whole percent, as the controller)
//	desired = ceil(ratio x ready)               no unready or missing pods
//
// and nothing changes while |1 - ratio| <= tolerance. Otherwise the ratio is
// recomputed over more pods: missing pods count at 100% of their request on a
// scale-down and at 0% on a scale-up, not-yet-ready pods at 0% on a scale-up
// (they are left out on a scale-down); if the new ratio reverses the direction
// or falls within tolerance nothing changes, else
//
//	desired = ceil(newRatio x pods counted)
//
// unless that count reverses the direction.
func ReplicaCount(in HPAInput) (desired int32, ok bool, reason string) {
	if in.Ready <= 0 {
		return in.Current, false, ReasonNoMetrics
	}
	target := int64(math.Round(in.Target * 100))
	// The controller sums milli-cores and divides in integers:
	// utilisation% = floor(sum(usage) x 100 / sum(request)).
	util := int64(math.Floor(in.Utilisation*100 + 1e-9))
	ratio := float64(util) / float64(target)

	unreadyUp := in.NotReady > 0 && ratio > 1
	if !unreadyUp && in.Missing == 0 {
		if math.Abs(1-ratio) <= in.Tolerance {
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
	if math.Abs(1-newRatio) <= in.Tolerance || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1) {
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
