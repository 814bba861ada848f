package wire

import (
	"strings"
	"testing"
	"time"
)

func TestAdmitRules(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	share, replicas := 0.3, 4
	pin := func(app string, issued time.Time, d time.Duration) Override {
		o := Override{Version: Version, Cluster: "c", Domain: "d", App: app, IssuedAt: issued, Until: issued.Add(d), By: "ops"}
		if app == "" {
			o.Share = &share
		} else {
			o.Replicas = &replicas
		}
		return o
	}
	cancel := func(app string, issued time.Time) Override {
		return Override{Version: Version, Cluster: "c", Domain: "d", App: app, Cancel: true, IssuedAt: issued, By: "ops"}
	}
	inForce := pin("d/a", t0.Add(-time.Minute), time.Hour)
	tests := []struct {
		name    string
		o       Override
		inForce *Override
		want    string // "" admitted, else a fragment of the reason
	}{
		{"a fresh pin is admitted", pin("d/a", t0, time.Hour), nil, ""},
		{"a pin issued within the skew ahead is admitted", pin("", t0.Add(MaxOverrideSkew), time.Hour), nil, ""},
		{"a pin issued past the skew ahead is refused", pin("", t0.Add(MaxOverrideSkew+time.Second), time.Hour), nil, "ahead of the Commander's clock (limit 1m0s)"},
		{"a newer pin replaces the pin in force", pin("d/a", t0, time.Hour), &inForce, ""},
		{"a pin issued before the pin in force is refused", pin("d/a", t0.Add(-2*time.Minute), time.Hour), &inForce, "before the pin in force"},
		{"a lapsed pin is refused", pin("d/a", t0.Add(-2*time.Hour), time.Hour), nil, "lapsed at 2026-01-01T11:00:00Z"},
		{"a cancel of the pin in force is admitted", cancel("d/a", t0), &inForce, ""},
		{"a cancel of no replica pin is refused", cancel("d/a", t0), nil, "d/a has no pin to cancel"},
		{"a cancel of no share pin is refused", cancel("", t0), nil, "d has no share pin to cancel"},
		{"a cancel issued before the pin in force is refused", cancel("d/a", t0.Add(-2*time.Minute)), &inForce, "before the pin in force"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.o.Validate(nil); err != nil {
				t.Fatalf("test override invalid: %v", err)
			}
			got := tt.o.Admit(t0, tt.inForce, "the Commander's")
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("Admit = %q, want %q", got, tt.want)
			}
		})
	}
}
