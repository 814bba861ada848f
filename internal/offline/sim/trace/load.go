package trace

import (
	"errors"
	"fmt"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Load reads the trace of every traffic block of sc, keyed by domain name.
// Each Traffic.Trace must already be resolved to a usable path. A file named
// by several blocks in the same format is read once and its Series are shared
// between those domains: treat them as read-only. Every problem is reported,
// joined into one error; on error the map is nil.
func Load(sc *domains.Scenario) (map[string][]Series, error) {
	type file struct {
		path   string
		format domains.TraceFormat
	}
	read := make(map[file][]Series)
	failed := make(map[file]bool)
	owner := make(map[string]int) // domain -> index of its traffic block
	out := make(map[string][]Series, len(sc.Traffic))
	lim, err := LimitsFromEnv()
	if err != nil {
		return nil, fmt.Errorf("load traffic: %w", err)
	}
	var errs []error
	for i, tr := range sc.Traffic {
		if j, dup := owner[tr.Domain]; dup {
			errs = append(errs, fmt.Errorf("load traffic %d: domain %q already has traffic block %d", i, tr.Domain, j))
			continue
		}
		owner[tr.Domain] = i
		f := file{tr.Trace, tr.Format}
		if failed[f] {
			continue // reported once, for the first domain that named it
		}
		s, ok := read[f]
		if !ok {
			var err error
			if s, err = lim.ReadFile(f.path, f.format); err != nil {
				failed[f] = true
				errs = append(errs, fmt.Errorf("load traffic for domain %q: %w", tr.Domain, err))
				continue
			}
			read[f] = s
		}
		out[tr.Domain] = s
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
