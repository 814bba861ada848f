package daemon

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/core/soldier"
)

// stateKey is where a Soldier keeps its decision state in its store.
func stateKey(domain string) string { return "soldier/" + domain }

// newRestoreFailed is regiment_soldier_state_restore_failed.
func newRestoreFailed(reg prometheus.Registerer) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "regiment_soldier_state_restore_failed",
		Help: "1 when the decision state saved in the store could not be read at start (damaged or unreadable): the Soldier started fresh. 0 otherwise, also when there was none to restore."})
	reg.MustRegister(g)
	return g
}

// restoreState gives the Soldier the decision state its last run saved in
// its store (cooldowns, stabilisation windows, the ladder, the automatic
// fallback), unless it is too old, another version's or unreadable: then it
// starts fresh, and says why.
func (p *SoldierProcess) restoreState() {
	if !p.keep {
		return
	}
	raw, err := p.st.State(stateKey(p.opts.Domain))
	if err != nil || raw == nil {
		if err != nil {
			p.restoreFailed.Set(1)
			p.log.Warn("decision state not restored: starting fresh", "error", err)
		}
		return
	}
	snap, err := soldier.DecodeSnapshot(raw)
	if err != nil {
		p.restoreFailed.Set(1)
		p.log.Warn("decision state not restored: starting fresh", "error", err)
		return
	}
	if ok, why := p.sd.Restore(snap, p.deps.Clock()); ok {
		p.log.Info("decision state restored", "detail", why, "saved_at", snap.SavedAt)
	} else {
		p.log.Info("decision state not restored", "reason", why, "saved_at", snap.SavedAt)
	}
}

// saveState puts the Soldier's decision state at now in its store: one
// small write per tick, so that a restart, even a kill -9, finds the state
// of its last tick. A failure is logged when it starts and when it ends.
func (p *SoldierProcess) saveState(now time.Time) {
	if !p.keep {
		return
	}
	raw, err := p.sd.Snapshot(now).Encode()
	if err == nil {
		err = p.st.PutState(stateKey(p.opts.Domain), raw)
	}
	switch {
	case err != nil && !p.saveErr:
		p.log.Warn("decision state not saved: a restart will start fresh", "error", err)
	case err == nil && p.saveErr:
		p.log.Info("decision state saved again")
	}
	p.saveErr = err != nil
}
