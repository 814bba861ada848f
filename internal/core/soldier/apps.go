package soldier

import (
	"fmt"
	"slices"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// ReloadApps is Reload for a config whose domain may have another set of
// apps (discovery found workloads, or lost some): an app kept, by name,
// keeps its target in force, its scale-up cooldown, its stabilisation
// window, its operator pin and what was learned of its service time; a new app starts as at the Soldier's first
// tick (its target taken from the observation); the state of a removed app
// goes. Domain-wide state (directive, ladder rung, automatic fallback
// window) stays. swap runs under the same lock, after the checks and before
// the Soldier moves to the new apps, so that the Observer and Actuator move
// with it between two ticks; an error from it changes nothing. A changed
// set of apps needs the proportional policy (a learned one is sized to its
// apps' groups: restart to apply). Safe for concurrent use with Tick.
func (s *Soldier) ReloadApps(cfg *domains.Config, swap func() error) error {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	next, err := NewConfig(cfg, s.cfg.Domain)
	if err != nil {
		return fmt.Errorf("soldier: reload: domain %q is not in the new config: restart to apply", s.cfg.Domain)
	}
	same := slices.EqualFunc(next.Apps, s.cfg.Apps, func(a, b App) bool { return a.Name == b.Name })
	if _, ok := s.policy.(*SqrtStaffing); !same && !ok {
		return fmt.Errorf("soldier: reload: the set of apps of %s changed under a learned policy: restart to apply", s.cfg.Domain)
	}
	if err := s.checkReload(next, true); err != nil {
		return err
	}
	if err := swap(); err != nil {
		return fmt.Errorf("soldier: reload: %w", err)
	}
	if !same {
		s.setApps(next.Apps)
	}
	s.apply(next)
	return nil
}

// setApps moves the per-app state to apps, by name.
func (s *Soldier) setApps(apps []App) {
	old := make(map[string]int, len(s.cfg.Apps))
	for i, a := range s.cfg.Apps {
		old[a.Name] = i
	}
	from := make([]int, len(apps)) // old index per new app; -1: new
	for i, a := range apps {
		from[i] = -1
		if j, ok := old[a.Name]; ok {
			from[i] = j
		}
	}
	n := len(apps)
	e := s.exec
	current, lastUp, retry := make([]int32, n), make([]time.Time, n), make([]appRetry, n)
	for i, j := range from {
		current[i] = -1
		if j >= 0 {
			current[i], lastUp[i], retry[i] = e.current[j], e.lastUp[j], e.retry[j]
		}
	}
	e.current, e.lastUp, e.pinned, e.order = current, lastUp, make([]int32, n), make([]int, 0, n)
	e.retry, e.held, e.wrote, e.prevUp = retry, make([]bool, n), make([]bool, n), make([]time.Time, n)
	for i := range e.pinned {
		e.pinned[i] = -1 // set again from the pins before the next decision
	}
	e.npinned = 0
	s.stab.remap(from)
	st := s.state
	st.proposed, st.baseline, st.shadow, st.decided = make([]int32, n), make([]int32, n), make([]int32, n), make([]int32, n)
	st.unheld, st.apps = make([]int32, n), make([]AppDecision, n)
	st.need, st.want, st.risky, st.recip = make([]float64, n), make([]int32, n), make([]bool, n), recipConcurrency(apps)
	s.obs.Apps = make([]AppObservation, n)
	learning := newLearning(apps)
	for i, j := range from {
		if learning != nil && j >= 0 && s.learning != nil {
			learning[i] = s.learning[j]
		}
	}
	s.learning = learning
	s.mu.Lock()
	s.ov.pins.remap(apps)
	s.mu.Unlock()
}

// remap moves each app's window to its new index; from[i] is app i's old
// index, -1 for an app new to the window (which starts empty: its maximum
// is its first proposal's). The domain's rise is judged again from the
// next tick on.
func (s *Stabiliser) remap(from []int) {
	const w = stabilisationTicks
	if s.recent == nil {
		return
	}
	oldApps, n := len(s.most), len(from)
	recent, most, at := make([]int32, n*w), make([]int32, n), make([]int, n)
	for i, j := range from {
		if j < 0 {
			at[i] = -w // out of the window: the next Apply rescans the (empty) ring
			continue
		}
		most[i], at[i] = s.most[j], s.at[j]
		for k := range w {
			recent[k*n+i] = s.recent[k*oldApps+j]
		}
	}
	s.recent, s.most, s.at = recent, most, at
	s.past, s.judged, s.prior = make([]float64, n), make([]float64, n), false
}

// remap keeps the pins of the apps still there, by name.
func (p *Pins) remap(apps []App) {
	q := NewPins(p.domain, apps)
	for name, j := range p.index {
		if i, ok := q.index[name]; ok && p.pins[j].set {
			q.pins[i] = p.pins[j]
			q.set++
		}
	}
	*p = *q
}

// Apps is the domain's apps in force. Safe for concurrent use with Tick.
func (s *Soldier) Apps() []App {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	return slices.Clone(s.cfg.Apps)
}
