package kube

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bounds maps a replica target to HPA bounds in hpa-bounds actuation:
//
//	min = clamp(target, appMin, appMax)
//	max = clamp(ceil(min x (1 + headroom)), min, appMax)
//
// The HPA keeps reacting to load between min and max (its fast loop); the
// Soldier moves the floor to its target and lets the HPA add up to headroom
// on top, never past the app's configured max_replicas. headroom 0 pins the
// HPA to the target.
func Bounds(target, appMin, appMax int32, headroom float64) (lo, hi int32) {
	lo = min(max(target, appMin, 1), max(appMax, 1))
	hi = int32(math.Ceil(float64(lo)*(1+headroom) - 1e-9))
	return lo, min(max(hi, lo), max(appMax, lo))
}

// safeBounds is the value of AnnotationSafeBounds: "min-max".
func formatSafeBounds(lo, hi int32) string { return fmt.Sprintf("%d-%d", lo, hi) }

func parseSafeBounds(s string) (lo, hi int32, err error) {
	a, b, ok := strings.Cut(s, "-")
	l, err1 := strconv.ParseInt(a, 10, 32)
	h, err2 := strconv.ParseInt(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || l < 1 || h < l {
		return 0, 0, fmt.Errorf("safe bounds %q: want \"min-max\" with 1 <= min <= max", s)
	}
	return int32(l), int32(h), nil
}
