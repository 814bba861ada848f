package kube

import "testing"

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name             string
		target, min, max int32
		headroom         float64
		lo, hi           int32
	}{
		{"min is the target, max adds the headroom", 10, 2, 100, 0.5, 10, 15},
		{"max rounds up", 3, 1, 100, 0.5, 3, 5},
		{"max stops at the app's max_replicas", 90, 2, 100, 0.5, 90, 100},
		{"a target over max_replicas is clamped", 150, 2, 100, 0.5, 100, 100},
		{"a target under min_replicas is raised", 1, 2, 100, 0.5, 2, 3},
		{"zero headroom pins the HPA", 7, 1, 100, 0, 7, 7},
		{"HPAs need min >= 1", 0, 0, 10, 0.5, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi := Bounds(tc.target, tc.min, tc.max, tc.headroom)
			if lo != tc.lo || hi != tc.hi {
				t.Errorf("Bounds(%d, %d, %d, %g) = [%d, %d], want [%d, %d]", tc.target, tc.min, tc.max, tc.headroom, lo, hi, tc.lo, tc.hi)
			}
		})
	}
}

func TestSafeBoundsRoundTrip(t *testing.T) {
	lo, hi, err := parseSafeBounds(formatSafeBounds(2, 200))
	if err != nil || lo != 2 || hi != 200 {
		t.Errorf("got [%d, %d], %v", lo, hi, err)
	}
	for _, bad := range []string{"", "2", "0-3", "5-4", "a-b", "2-3-4"} {
		if _, _, err := parseSafeBounds(bad); err == nil {
			t.Errorf("parseSafeBounds(%q) accepted", bad)
		}
	}
}
