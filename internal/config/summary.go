package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Summary is one line describing a valid config and scenario (sc may be
// nil), what `regiment validate` prints, e.g. "ok: cluster prod, 5
// domains, 12 app sets, 1550 apps, 2 events in the calendar; scenario s,
// 72h, 2 traffic, 3 events (1 announced)".
func Summary(cfg *domains.Config, sc *domains.Scenario) string {
	sets := 0
	for _, d := range cfg.Domains {
		sets += len(d.AppSets)
	}
	s := fmt.Sprintf("ok: cluster %s, %s, %s, %s", cfg.Cluster.Name,
		plural(len(cfg.Domains), "domain"), plural(sets, "app set"), plural(cfg.AppCount(), "app"))
	discovering := 0
	for _, d := range cfg.Domains {
		if d.Discover != nil {
			discovering++
		}
	}
	if discovering > 0 {
		s += fmt.Sprintf(" (and those %s find on the cluster)", plural(discovering, "discover block")) // counted at run time
	}
	if n := len(cfg.Calendar.Events); n > 0 {
		s += fmt.Sprintf(", %s in the calendar", plural(n, "event"))
	}
	if sc != nil {
		s += fmt.Sprintf("; scenario %s, %s, %d traffic, %s", sc.Name,
			ShortDuration(sc.Duration), len(sc.Traffic), plural(len(sc.Events), "event"))
		if n := len(sc.Planned()); n > 0 {
			s += fmt.Sprintf(" (%d announced)", n)
		}
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ShortDuration drops zero minutes and seconds: 72h, 1h30m, 90s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
