package trace

import (
	"slices"
	"testing"
	"time"
)

func TestMax(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		want   float64
	}{
		{"empty series peaks at zero", nil, 0},
		{"single value is the peak", []float64{3}, 3},
		{"peak in the middle", []float64{1, 7, 2}, 7},
		{"peak at the end", []float64{0, 0, 9}, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Series{Values: tt.values}).Max(); got != tt.want {
				t.Errorf("Max = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRank(t *testing.T) {
	s := func(name string, v ...float64) Series { return Series{Name: name, Values: v} }
	tests := []struct {
		name   string
		series []Series
		want   []int
	}{
		{"no series", nil, []int{}},
		{"descending peak", []Series{s("a", 1), s("b", 5, 0), s("c", 0, 3)}, []int{1, 2, 0}},
		{"equal peaks go to the smaller name", []Series{s("z", 4), s("m", 1, 4), s("a", 4, 0)}, []int{2, 1, 0}},
		{"equal peaks and names go to the smaller index", []Series{s("f", 2), s("f", 2), s("e", 1)}, []int{0, 1, 2}},
		{"empty series rank as peak zero", []Series{s("a"), s("b", 1)}, []int{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rank(tt.series)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Rank = %v, want %v", got, tt.want)
			}
			// Deterministic whatever the input order: ranking a reversed copy
			// picks the same series.
			rev := slices.Clone(tt.series)
			slices.Reverse(rev)
			for i, j := range Rank(rev) {
				a, b := rev[j], tt.series[tt.want[i]]
				if a.Name != b.Name || a.Max() != b.Max() {
					t.Errorf("reversed input: rank %d is %s/%v, want %s/%v", i, a.Name, a.Max(), b.Name, b.Max())
				}
			}
		})
	}
}

func TestIndex(t *testing.T) {
	start := time.Date(1998, 4, 30, 21, 30, 0, 0, time.UTC)
	s := Series{Start: start}
	tests := []struct {
		name string
		t    time.Time
		want int
	}{
		{"Start is index 0", start, 0},
		{"inside the first minute", start.Add(59*time.Second + 999*time.Millisecond), 0},
		{"next minute", start.Add(time.Minute), 1},
		{"a day later", start.Add(24 * time.Hour), 1440},
		{"just before Start floors to -1", start.Add(-time.Nanosecond), -1},
		{"a minute and a second before Start is -2", start.Add(-61 * time.Second), -2},
		{"other time zones are the same instant", start.Add(90 * time.Second).In(time.FixedZone("CEST", 2*3600)), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Index(tt.t); got != tt.want {
				t.Errorf("Index(%v) = %d, want %d", tt.t, got, tt.want)
			}
		})
	}
	t.Run("zero Start takes offsets into the day", func(t *testing.T) {
		az := Series{}
		if got := az.Index(time.Time{}.Add(17*time.Hour + 56*time.Minute + 30*time.Second)); got != 1076 {
			t.Errorf("Index = %d, want 1076", got)
		}
	})
}
