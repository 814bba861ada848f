package soldier

import "time"

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

// DefaultLadder is the ladder of a priority tier: P0 alerts at 1.2x the SLO
// sustained 15 s, freezes at 1.5x and reverts at 2x; P1 alerts at 1.3x over
// 30 s; P2 and below at 1.5x over 45 s. Freeze and revert keep P0's ratios to
// the alert threshold (x1.25, x5/3). Cool-off is 5 minutes.
func DefaultLadder(priority int) LadderConfig {
	alert, sustain := 1.2, 15*time.Second
	switch {
	case priority == 1:
		alert, sustain = 1.3, 30*time.Second
	case priority >= 2:
		alert, sustain = 1.5, 45*time.Second
	}
	return LadderConfig{Alert: alert, Freeze: alert * 1.25, Revert: alert * 5 / 3, Sustain: sustain, CoolOff: 5 * time.Minute}
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
