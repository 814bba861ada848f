package soldier

import (
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Rung is a step of the rollback ladder.
type Rung int

const (
	RungNone   Rung = iota // the policy acts
	RungAlert              // the policy acts; operators are alerted
	RungFreeze             // the learned policy is frozen: targets held, scale-ups by the baseline only
	RungRevert             // the domain runs the baseline policy
)

var rungNames = [...]string{"none", "alert", "freeze", "revert"}

func (r Rung) String() string { return rungNames[r] }

// LadderConfig is one priority tier's rollback ladder: thresholds as
// multiples of the SLO p99, each to be exceeded for Sustain before its rung
// engages, and CoolOff below the alert threshold before control steps back
// down one rung.
type LadderConfig struct {
	Alert, Freeze, Revert float64 // p99 / SLO, ascending
	Sustain               time.Duration
	CoolOff               time.Duration
}

// DefaultLadder is the ladder of a priority tier (domains.DefaultLadder): P0
// alerts at 1.2x the SLO sustained 15 s, freezes at 1.5x and reverts at 2x;
// P1 alerts at 1.3x over 30 s; P2 and below at 1.5x over 45 s. Cool-off is 5
// minutes.
func DefaultLadder(priority int) LadderConfig { return LadderFrom(domains.DefaultLadder(priority)) }

// LadderFrom is the ladder of a tier's config settings (complete: see
// domains.Soldier.Ladder).
func LadderFrom(l domains.Ladder) LadderConfig {
	return LadderConfig{Alert: l.Alert, Freeze: l.Freeze, Revert: l.Revert, Sustain: l.Sustain, CoolOff: l.CoolOff}
}

// Ladder tracks one domain's rung from the freshest p99 it is shown. It is a
// deterministic state machine; time is a parameter.
type Ladder struct {
	cfg   LadderConfig
	rung  Rung
	above [4]time.Time // since when r has stayed at or above each rung's threshold; zero: not above
	calm  time.Time    // since when r has stayed below the alert threshold; zero: not calm
}

// NewLadder returns a ladder at RungNone.
func NewLadder(cfg LadderConfig) *Ladder { return &Ladder{cfg: cfg} }

// SetConfig replaces the thresholds and lengths from the next Observe on. The
// rung in force and the times it has been above or below thresholds are kept:
// a new config neither hands control back nor escalates by itself.
func (l *Ladder) SetConfig(cfg LadderConfig) { l.cfg = cfg }

// Rung is the rung in force.
func (l *Ladder) Rung() Rung { return l.rung }

// Observe takes r = p99 / SLO at now and returns the rung in force and
// whether it changed. Rungs climb as soon as a threshold has been exceeded for
// Sustain (several at once if r jumped); they step down one at a time, each
// after CoolOff below the alert threshold.
func (l *Ladder) Observe(now time.Time, r float64) (Rung, bool) {
	before := l.rung
	thresholds := [4]float64{0, l.cfg.Alert, l.cfg.Freeze, l.cfg.Revert}
	for k := RungAlert; k <= RungRevert; k++ {
		switch {
		case r < thresholds[k]:
			l.above[k] = time.Time{}
		case l.above[k].IsZero():
			l.above[k] = now
		}
		if !l.above[k].IsZero() && now.Sub(l.above[k]) >= l.cfg.Sustain && k > l.rung {
			l.rung = k
		}
	}
	if r >= l.cfg.Alert {
		l.calm = time.Time{}
	} else if l.rung > RungNone {
		if l.calm.IsZero() {
			l.calm = now
		}
		if now.Sub(l.calm) >= l.cfg.CoolOff {
			l.rung--
			l.calm = now // the next rung down needs its own cool-off
		}
	}
	return l.rung, l.rung != before
}
