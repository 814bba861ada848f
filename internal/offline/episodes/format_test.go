package episodes

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, in string
		want     time.Time
		bad      bool
	}{
		{"empty is the zero time", "", time.Time{}, false},
		{"now is now", "now", now, false},
		{"a minus duration is before now", "-5m", now.Add(-5 * time.Minute), false},
		{"days are whole days", "-1d", now.Add(-24 * time.Hour), false},
		{"RFC 3339 is absolute", "1998-06-10T14:20:00Z", time.Date(1998, 6, 10, 14, 20, 0, 0, time.UTC), false},
		{"a date alone is midnight", "2024-04-30", time.Date(2024, 4, 30, 0, 0, 0, 0, time.UTC), false},
		{"anything else is refused", "yesterday", time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTime(tt.in, now)
			if (err != nil) != tt.bad || !got.Equal(tt.want) {
				t.Errorf("ParseTime(%q) = %v, %v; want %v (error: %v)", tt.in, got, err, tt.want, tt.bad)
			}
		})
	}
}
