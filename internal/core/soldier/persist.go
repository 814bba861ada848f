package soldier

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// SnapshotVersion is the version of the Snapshot encoding. A snapshot of
// another version is not restored: the Soldier starts fresh, as before
// snapshots existed.
const SnapshotVersion = 1

// stateMargin is added to the longest of a Soldier's timers to make
// MaxStateAge: a restart that takes a little longer than a cooldown still
// finds its state.
const stateMargin = time.Minute

// Snapshot is the part of a Soldier's decision state that must survive a
// restart, so that a restarted Soldier decides as if it had not stopped:
// per app (by name) its last scale-up (the scale-down cooldown runs from it),
// its stabilisation window and its need at the last tick (the domain's rise
// is judged against it); the rollback ladder's rung and timers; the
// automatic fallback's window and hold; and the mode of the last tick.
//
// The executor's targets in force are recorded (Target) but restored only
// when the last tick's mode wrote nothing (recommend, shadow: they are the
// counterfactual the recommendations are held against). In a writing mode
// the cluster's replicas are the truth: a write that failed and was pending
// retry when the Soldier stopped is decided again from them, not lost.
// Operator pins are not in it: they are restored from the bus.
//
// Its JSON encoding (Encode, DecodeSnapshot) is versioned by Version and
// documented in docs/operations.md.
type Snapshot struct {
	Version int       `json:"version"`
	Domain  string    `json:"domain"`
	SavedAt time.Time `json:"saved_at"`
	Mode    string    `json:"mode,omitempty"` // the mode of the last tick; "": none yet
	// Apps are keyed by app name. Window is each app's stabilisation window,
	// its proposals oldest first; every app's has the same length (<= 30).
	Apps     map[string]AppSnapshot `json:"apps"`
	Ladder   LadderSnapshot         `json:"ladder"`
	Fallback *FallbackSnapshot      `json:"fallback,omitempty"` // nil: the automatic fallback is off
}

// AppSnapshot is one app's part of a Snapshot.
type AppSnapshot struct {
	Target      int32     `json:"target"`                 // replicas in force; -1: unknown
	LastScaleUp time.Time `json:"last_scale_up,omitzero"` // zero: none
	Window      []int32   `json:"window,omitempty"`       // stabiliser proposals, oldest first
	// Need is the replicas the app's load needed at the last tick, before
	// rounding (the domain's rise is judged against it); 0: none.
	Need float64 `json:"need,omitempty"`
}

// LadderSnapshot is the rollback ladder's rung and timers (zero: not running).
type LadderSnapshot struct {
	Rung  Rung         `json:"rung"`
	Above [4]time.Time `json:"above"` // since when p99/SLO has stayed at or above each rung's threshold
	Calm  time.Time    `json:"calm,omitzero"`
}

// FallbackSnapshot is the automatic fallback's window, oldest score first,
// and its hold.
type FallbackSnapshot struct {
	Window int     `json:"window"` // the config's window, in ticks, when saved
	Scores []Score `json:"scores"` // Caused holds the counted flag (Short while held)
	Policy float64 `json:"policy_cores"`
	Base   float64 `json:"baseline_cores"`
	Active bool    `json:"active"`
	Held   int     `json:"held"` // ticks since the trip
}

// Encode is s's JSON encoding.
func (s Snapshot) Encode() ([]byte, error) { return json.Marshal(s) }

// DecodeSnapshot reads a Snapshot encoded by Encode; one of another version
// is an error.
func DecodeSnapshot(b []byte) (Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return Snapshot{}, fmt.Errorf("decode soldier state: %w", err)
	}
	if s.Version != SnapshotVersion {
		return Snapshot{}, fmt.Errorf("decode soldier state: version %d, want %d", s.Version, SnapshotVersion)
	}
	return s, nil
}

// MaxStateAge is how old a Snapshot may be and still be restored for cfg:
// the longest of the scale-down cooldown, the ladder's sustain and cool-off,
// the stabilisation window and the automatic fallback's hold, plus a minute.
// An older state has run out: a Soldier that stopped that long starts fresh.
func MaxStateAge(cfg Config) time.Duration {
	tick := max(cfg.Soldier.Tick, time.Second)
	longest := max(cfg.Soldier.ScaleDownCooldown, cfg.Ladder.Sustain, cfg.Ladder.CoolOff,
		stabilisationTicks*tick, time.Duration(cfg.Fallback.Hold)*tick)
	return longest + stateMargin
}

// Snapshot is st's state to keep across a restart, at now.
func (st *State) Snapshot(now time.Time) Snapshot {
	s := Snapshot{Version: SnapshotVersion, Domain: st.cfg.Domain, SavedAt: now, Mode: string(st.last),
		Apps: make(map[string]AppSnapshot, len(st.cfg.Apps))}
	windows := st.stab.windows(len(st.cfg.Apps))
	needs := st.stab.needs(len(st.cfg.Apps))
	for i, a := range st.cfg.Apps {
		as := AppSnapshot{Target: st.exec.current[i], LastScaleUp: st.exec.lastUp[i]}
		if windows != nil {
			as.Window = windows[i]
		}
		if needs != nil {
			as.Need = needs[i]
		}
		s.Apps[a.Name] = as
	}
	l := st.ladder
	s.Ladder = LadderSnapshot{Rung: l.rung, Above: l.above, Calm: l.calm}
	if f := st.auto; len(f.ring) > 0 {
		fs := &FallbackSnapshot{Window: len(f.ring), Policy: f.pc, Base: f.bc, Active: f.active, Held: f.held,
			Scores: make([]Score, 0, f.n)}
		for k := range f.n {
			fs.Scores = append(fs.Scores, f.ring[(f.next-f.n+k+len(f.ring))%len(f.ring)])
		}
		s.Fallback = fs
	}
	return s
}

// Restore makes s st's state, as if the Soldier had not stopped since
// s.SavedAt, and says what it did. A snapshot of another domain, from the
// future or older than MaxStateAge is ignored (restored false); the
// stabilisation windows of one older than the window's span (30 ticks) are
// (the window has passed). Apps no longer configured are dropped; apps new since keep a fresh state; a
// fallback window of another length starts afresh. Call it before the first
// tick.
func (st *State) Restore(s Snapshot, now time.Time) (restored bool, why string) {
	switch age := now.Sub(s.SavedAt); {
	case s.Domain != st.cfg.Domain:
		return false, fmt.Sprintf("state of domain %q, not %q", s.Domain, st.cfg.Domain)
	case age < 0:
		return false, fmt.Sprintf("state saved %s in the future", -age)
	case age > MaxStateAge(st.cfg):
		return false, fmt.Sprintf("state %s old, over its %s limit", age.Round(time.Second), MaxStateAge(st.cfg))
	}
	st.last = domains.Mode(s.Mode)
	keepTargets := st.last != "" && !st.last.Writes()
	// The window counts ticks: one saved longer ago than it spans has passed.
	keepWindows := now.Sub(s.SavedAt) <= stabilisationTicks*max(st.cfg.Soldier.Tick, time.Second)
	windows := make([][]int32, len(st.cfg.Apps))
	needs := make([]float64, len(st.cfg.Apps))
	kept := 0
	for i, a := range st.cfg.Apps {
		as, ok := s.Apps[a.Name]
		if !ok {
			continue
		}
		kept++
		needs[i] = as.Need
		st.exec.lastUp[i] = as.LastScaleUp
		if keepTargets {
			st.exec.current[i] = as.Target
		}
		if keepWindows {
			windows[i] = as.Window
		}
	}
	st.stab.restore(windows)
	// The domain's rise is judged over one tick: needs saved longer ago,
	// or missing an app, are not the last tick's.
	if now.Sub(s.SavedAt) <= st.cfg.Soldier.Tick && kept == len(st.cfg.Apps) {
		st.stab.restoreNeeds(needs)
	}
	st.ladder.rung, st.ladder.above, st.ladder.calm = s.Ladder.Rung, s.Ladder.Above, s.Ladder.Calm
	st.auto.restore(s.Fallback)
	return true, fmt.Sprintf("restored %d of %d apps, saved %s ago", kept, len(st.cfg.Apps), now.Sub(s.SavedAt).Round(time.Second))
}

// windows is each of n apps' proposals in the window, oldest first; nil
// before the first Apply.
func (s *Stabiliser) windows(n int) [][]int32 {
	if s.ticks == 0 || len(s.recent) != n*stabilisationTicks {
		return nil
	}
	const w = stabilisationTicks
	filled := min(s.ticks, w)
	out := make([][]int32, n)
	for i := range out {
		out[i] = make([]int32, filled)
		for k := range filled {
			out[i][k] = s.recent[(s.ticks-filled+k)%w*n+i]
		}
	}
	return out
}

// needs is each of n apps' need at the last Apply; nil when there is none
// (before the first Apply, or after sizing, remapping or restoring).
func (s *Stabiliser) needs(n int) []float64 {
	if !s.prior || len(s.past) != n {
		return nil
	}
	return slices.Clone(s.past)
}

// restoreNeeds makes needs (one per app) the last tick's, as needs returned
// them, for the next Apply's domain growth; it sizes the stabiliser's
// per-app state first if restore left it empty.
func (s *Stabiliser) restoreNeeds(needs []float64) {
	n := len(needs)
	if len(s.recent) != n*stabilisationTicks {
		s.recent, s.most, s.at, s.ticks = make([]int32, n*stabilisationTicks), make([]int32, n), make([]int, n), 0
	}
	s.past, s.judged, s.prior = slices.Clone(needs), make([]float64, n), true
	s.level = 0
	for _, v := range needs {
		s.level += v
	}
}

// restore refills the window from per-app proposals, oldest first, as
// windows returned them: the longest sets the fill; an app with fewer (nil:
// new since) is padded in front with zeros, which never hold a proposal.
func (s *Stabiliser) restore(windows [][]int32) {
	const w = stabilisationTicks
	n, filled := len(windows), 0
	for _, win := range windows {
		filled = max(filled, min(len(win), w))
	}
	if filled == 0 {
		*s = Stabiliser{}
		return
	}
	s.recent, s.most, s.at, s.ticks = make([]int32, n*w), make([]int32, n), make([]int, n), filled
	s.past, s.judged, s.prior = make([]float64, n), make([]float64, n), false // the domain's rise is judged from the next tick on
	for i, win := range windows {
		win = win[max(0, len(win)-filled):]
		pad := filled - len(win)
		for k, v := range win {
			s.recent[(pad+k)*n+i] = v
		}
		// The largest, and the latest tick proposing it, as Apply keeps them.
		for k := range filled {
			if v := s.recent[k*n+i]; k == 0 || v >= s.most[i] {
				s.most[i], s.at[i] = v, k
			}
		}
	}
}

// restore makes fs the fallback's window and hold; nil, or a window of
// another length, leaves it fresh.
func (f *Fallback) restore(fs *FallbackSnapshot) {
	f.clear()
	f.active, f.held = false, 0
	if fs == nil || fs.Window != len(f.ring) || len(fs.Scores) > len(f.ring) {
		return
	}
	for _, sc := range fs.Scores {
		f.push(sc, sc.Caused)
	}
	f.pc, f.bc, f.active, f.held = fs.Policy, fs.Base, fs.Active, fs.Held
}

// Snapshot is the Soldier's state to keep across a restart, at now (see
// State.Snapshot). Safe for concurrent use with Tick.
func (s *Soldier) Snapshot(now time.Time) Snapshot {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	return s.state.Snapshot(now)
}

// Restore makes snap the Soldier's state (see State.Restore). Call it before
// the first tick.
func (s *Soldier) Restore(snap Snapshot, now time.Time) (restored bool, why string) {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	return s.state.Restore(snap, now)
}

// ForgetTargets makes every app's target in force unknown, to be taken from
// the next observation: another Soldier acted meanwhile. Safe for
// concurrent use with Tick.
func (s *Soldier) ForgetTargets() {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	s.exec.Forget()
}
