package commander

import (
	"math"
	"testing"
)

func TestGuardRules(t *testing.T) {
	rules := Rules{
		Floors: []float64{0.2, 0.1}, Ceilings: []float64{0.6, 0.5}, Priorities: []int{0, 1},
		DeadZone: 0.02, MaxChange: 0.1, ReserveMin: 0.02,
	}
	tests := []struct {
		name      string
		prev      []float64
		shares    []float64
		want      []float64
		wantGuard string
	}{
		{"floor raises a starved domain", nil, []float64{0.1, 0.3}, []float64{0.2, 0.3}, GuardFloor},
		{"ceiling caps a greedy domain", nil, []float64{0.7, 0.2}, []float64{0.6, 0.2}, GuardCeiling},
		{"max change limits a jump", []float64{0.3, 0.3}, []float64{0.5, 0.3}, []float64{0.4, 0.3}, GuardMaxChange},
		{"dead zone drops a small change", []float64{0.3, 0.3}, []float64{0.305, 0.3}, []float64{0.3, 0.3}, GuardDeadZone},
		{"change beyond the dead zone passes", []float64{0.3, 0.3}, []float64{0.32, 0.3}, []float64{0.32, 0.3}, ""},
		{"reserve trims the lowest priority first", []float64{0.55, 0.43}, []float64{0.55, 0.45}, []float64{0.55, 0.43}, GuardReserve},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAction(2)
			copy(a.Shares, tt.shares)
			applied := ApplyGuards(rules, tt.prev, &a, nil)
			for i := range tt.want {
				if math.Abs(a.Shares[i]-tt.want[i]) > 1e-9 {
					t.Fatalf("shares %v, want %v (applied %+v)", a.Shares, tt.want, applied)
				}
			}
			if tt.wantGuard == "" && len(applied) != 0 || tt.wantGuard != "" && (len(applied) == 0 || applied[0].Name != tt.wantGuard) {
				t.Fatalf("applied %+v, want %q", applied, tt.wantGuard)
			}
			if sum := a.Shares[0] + a.Shares[1] + a.Reserve; math.Abs(sum-1) > 1e-9 {
				t.Fatalf("shares + reserve = %v, want 1", sum)
			}
			if a.Reserve < rules.ReserveMin-1e-9 {
				t.Fatalf("reserve %v below reserve_min", a.Reserve)
			}
		})
	}
}
