package commander

import (
	"testing"
	"time"
)

func TestResumeTerm(t *testing.T) {
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	first := FirstTerm(now)
	tests := []struct {
		rule   string
		held   uint64
		want   uint64
		wantOK bool
	}{
		{"an older held term leaves the clock's", first - 1e9, first, true},
		{"a held term 30s ahead (a clock behind the last one's) is exceeded by one", first + 30e9, first + 30e9 + 1, true},
		{"a held term past any clock is ignored", first + uint64(2*time.Minute), first, false},
		{"issue 16's term of 2^63 is ignored", 1 << 63, first, false},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, ok := ResumeTerm(now, first, tt.held)
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("ResumeTerm(held %d) = %d, %v; want %d, %v", tt.held, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
