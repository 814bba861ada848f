package recording

import (
	"fmt"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// LedgerOverride is the ledger kind of every override event: accepted,
// rejected, applied (first in force), expired and cancelled, named first in
// the entry's Detail.
const LedgerOverride = "override"

// RecordOverride implements commander.OverrideRecorder: each share override
// event becomes a ledger entry. Safe for concurrent use with Record.
func (c *Commander) RecordOverride(e commander.OverrideEvent) {
	values := map[string]float64{}
	if e.Share >= 0 {
		values["share"] = e.Share
	}
	overrideEntry(c.Ledger, c.Err, e.At, e.Kind, e.Override, e.Reason, values)
}

// RecordOverride implements soldier.OverrideRecorder: each replica override
// event becomes a ledger entry. Safe for concurrent use with Record.
func (s *Soldier) RecordOverride(e soldier.OverrideEvent) {
	values := map[string]float64{}
	if e.Replicas >= 0 {
		values["replicas"] = float64(e.Replicas)
	}
	overrideEntry(s.Ledger, s.Err, e.At, e.Kind, e.Override, e.Reason, values)
}

// overrideEntry writes one override event: Detail is "<kind> <target> by
// <who>: <reason>", Values carry the pinned value and, for a pin, its
// deadline ("until_unix", seconds).
func overrideEntry(ledger Ledger, errf func(error), at time.Time, kind string, o wire.Override, reason string, values map[string]float64) {
	if ledger == nil {
		return
	}
	// Operator text is cleaned before it is stored: a client other than
	// "regiment override" may have sent newlines or terminal escapes.
	target, by := o.Target(), wire.CleanText(o.By, wire.MaxName)
	reason = wire.CleanText(reason, wire.MaxReason)
	if target == "" {
		target = "(undecodable)"
	}
	if by == "" {
		by = "?"
	}
	if !o.Cancel && !o.Until.IsZero() {
		values["until_unix"] = float64(o.Until.Unix())
	}
	e := store.LedgerEntry{At: at, Domain: o.Domain, Kind: LedgerOverride,
		Detail: fmt.Sprintf("%s %s by %s: %s", kind, target, by, reason), Values: values}
	if err := ledger(e); err != nil && errf != nil {
		errf(fmt.Errorf("record override %s of %s: %w", kind, target, err))
	}
}

var (
	_ commander.OverrideRecorder = (*Commander)(nil)
	_ soldier.OverrideRecorder   = (*Soldier)(nil)
)
