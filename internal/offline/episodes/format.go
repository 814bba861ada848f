package episodes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
)

// keyOutcomes are the outcomes show prefers, in this order.
var keyOutcomes = []string{"p99_seconds", "error_rate", "slo_compliant", "cost_core_hours"}

// ParseTime parses an absolute (RFC 3339) or relative-to-now ("-5m") time; ""
// is the zero time.
func ParseTime(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "":
		return time.Time{}, nil
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
		d, err := ParseDuration(s)
		if err == nil {
			return now.Add(d), nil
		}
	default:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q: want RFC 3339 (2024-05-01T12:00:00Z), relative to now (-5m, -2h, -1d) or \"now\"", s)
}

// ParseDuration is time.ParseDuration plus a whole-day unit ("7d").
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	return time.ParseDuration(s)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// summary prints up to limit "k=v" pairs of m: the preferred keys first (in
// their order), then the rest sorted, then how many were left out.
func summary(m map[string]float64, preferred []string, limit int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := orderedKeys(m, preferred)
	var parts []string
	for i, k := range keys {
		if i == limit && len(keys) > limit+1 {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(keys)-limit))
			break
		}
		parts = append(parts, k+"="+num(m[k]))
	}
	return strings.Join(parts, " ")
}

func guards(gs []store.Guard) string {
	if len(gs) == 0 {
		return "-"
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%s(%s %s->%s)", g.Name, g.Target, num(g.Before), num(g.After)))
	}
	return strings.Join(parts, ", ")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// orderedKeys are m's keys: those of first that m has, in their order,
// then the others sorted.
func orderedKeys(m map[string]float64, first []string) []string {
	var keys []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
