package config

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// TestSummaryCountsAndShortDurations: validate's line counts domains, app
// sets and apps with their plurals, and prints a scenario's duration
// without zero minutes and seconds.
func TestSummaryCountsAndShortDurations(t *testing.T) {
	cfg := &domains.Config{Cluster: domains.Cluster{Name: "c"}, Domains: []domains.Domain{{Name: "a"}}}
	if got, want := Summary(cfg, nil), "ok: cluster c, 1 domain, 0 app sets, 0 apps"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	sc := &domains.Scenario{Name: "s", Duration: 72 * time.Hour}
	if got, want := Summary(cfg, sc), "ok: cluster c, 1 domain, 0 app sets, 0 apps; scenario s, 72h, 0 traffic, 0 events"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	cfg.Calendar.Events = []domains.Planned{{Name: "sale"}, {Name: "payday"}}
	sc.Events = []domains.Event{{Kind: domains.EventFlashSale, Announced: true}, {Kind: domains.EventFlashSale}}
	if got, want := Summary(cfg, sc), "ok: cluster c, 1 domain, 0 app sets, 0 apps, 2 events in the calendar; scenario s, 72h, 0 traffic, 2 events (1 announced)"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	for d, want := range map[time.Duration]string{72 * time.Hour: "72h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 45 * time.Second: "45s"} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
