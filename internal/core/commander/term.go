package commander

import (
	"time"

	"github.com/regimentd/regiment/wire"
)

// FirstTerm is the term a Commander starting at now takes: its clock in Unix
// nanoseconds. Soldiers accept terms up to their own clock plus
// wire.DefaultMaxSkew (wire.IntakeBounds.TermClock).
func FirstTerm(now time.Time) uint64 { return uint64(now.UnixNano()) }

// ResumeTerm is the term a Commander starting (or becoming leader) at now
// takes when the bus holds a directive of term held: FirstTerm(now), or
// held + 1 when the previous Commander's clock ran ahead of this one's. A
// held term no clock can have given (past now + wire.DefaultMaxSkew: a
// forged or corrupt directive) is ignored, and ok is false: following it
// would push every later term past what Soldiers accept.
func ResumeTerm(now time.Time, term, held uint64) (next uint64, ok bool) {
	if held >= uint64(now.Add(wire.DefaultMaxSkew).UnixNano()) {
		return term, false
	}
	return max(term, held+1), true
}
