package soldier

import (
	"fmt"
	"math"
	"time"

	"github.com/regimentd/regiment/wire"
)

// OverrideEvent is one step in an override's life, for the ledger.
type OverrideEvent struct {
	At       time.Time
	Kind     string        // wire.OverrideAccepted, ..., wire.OverrideCancelled
	Override wire.Override // the override concerned (for expired and applied: the pin)
	Replicas int32         // the target in force (clamped to [min, max]); -1 when none
	Reason   string        // one line for humans
}

// OverrideRecorder receives every override event. A Soldier's Recorder that
// also implements it gets them; RecordOverride is called from the goroutine
// of OnOverride as well as from Tick, so it must be safe for concurrent use.
type OverrideRecorder interface {
	RecordOverride(e OverrideEvent)
}

// Pins holds the operator's replica pins of one domain's apps: at most one
// per app, each until its deadline. It is pure (every method takes now) and
// not safe for concurrent use.
type Pins struct {
	domain string
	apps   []App
	index  map[string]int // "domain/app" -> app index
	pins   []pin          // per app
	set    int            // how many pins are set
}

type pin struct {
	o       wire.Override
	set     bool
	applied bool // wire.OverrideApplied was reported
}

// NewPins returns an empty pin set for domain's apps.
func NewPins(domain string, apps []App) *Pins {
	p := &Pins{domain: domain, apps: apps, index: make(map[string]int, len(apps)), pins: make([]pin, len(apps))}
	for i, a := range apps {
		p.index[a.Name] = i
	}
	return p
}

// Offer takes o at now: a replica pin replaces the app's pin, a cancel lifts
// it. It returns the event: wire.OverrideAccepted or wire.OverrideCancelled, or
// wire.OverrideRejected (nothing changed) for an invalid override, one of another
// domain, a share override (the Commander's), an unknown app, one issued more
// than wire.MaxOverrideSkew ahead of now, a lapsed one, one older than the app's
// pin in force, or a cancel of no pin.
func (p *Pins) Offer(o wire.Override, now time.Time) OverrideEvent {
	e := OverrideEvent{At: now, Kind: wire.OverrideRejected, Override: o, Replicas: -1}
	i, ok := p.index[o.App]
	if e.Reason = p.refusal(o, i, ok, now); e.Reason != "" {
		return e
	}
	if o.Cancel {
		old := p.pins[i].o
		p.put(i, pin{})
		e.Kind, e.Reason = wire.OverrideCancelled, fmt.Sprintf("pin of %s at %d replicas lifted by %s: %s", o.App, *old.Replicas, o.By, o.Reason)
		return e
	}
	p.put(i, pin{o: o, set: true})
	e.Kind, e.Replicas = wire.OverrideAccepted, p.target(i)
	e.Reason = fmt.Sprintf("%s pinned at %d replicas until %s by %s", o.App, e.Replicas, wire.Stamp(o.Until), o.By)
	if int(e.Replicas) != *o.Replicas {
		e.Reason += fmt.Sprintf(" (asked %d, held to [%d,%d])", *o.Replicas, p.apps[i].Min, p.apps[i].Max)
	}
	if o.Reason != "" {
		e.Reason += ": " + o.Reason
	}
	return e
}

// refusal is why p refuses o at now, "" if it does not; i is o's app's
// index when known.
func (p *Pins) refusal(o wire.Override, i int, known bool, now time.Time) string {
	switch err := o.Validate(nil); {
	case err != nil:
		return err.Error()
	case o.Domain != p.domain:
		return fmt.Sprintf("override for domain %s; this Soldier runs %s", o.Domain, p.domain)
	case o.ForCommander():
		return "share overrides are the Commander's"
	case !known:
		return fmt.Sprintf("%s is not an app of domain %s", o.App, p.domain)
	}
	var inForce *wire.Override
	if p.pins[i].set {
		inForce = &p.pins[i].o
	}
	return o.Admit(now, inForce, "this Soldier's")
}

// put sets app i's pin to pn, keeping the count of pins set.
func (p *Pins) put(i int, pn pin) {
	if p.pins[i].set {
		p.set--
	}
	if pn.set {
		p.set++
	}
	p.pins[i] = pn
}

// Expire lifts every pin lapsed at now, appending an wire.OverrideExpired event
// for each to events.
func (p *Pins) Expire(now time.Time, events []OverrideEvent) []OverrideEvent {
	if p.set == 0 {
		return events
	}
	for i := range p.pins {
		if pn := &p.pins[i]; pn.set && !pn.o.Active(now) {
			events = append(events, OverrideEvent{At: now, Kind: wire.OverrideExpired, Override: pn.o, Replicas: p.target(i),
				Reason: fmt.Sprintf("pin of %s at %d replicas lapsed at %s", pn.o.App, *pn.o.Replicas, wire.Stamp(pn.o.Until))})
			p.put(i, pin{})
		}
	}
	return events
}

// Target is app i's pinned target clamped to its [min, max] replicas, or -1
// when it has no pin.
func (p *Pins) Target(i int) int32 {
	if p.set == 0 || !p.pins[i].set {
		return -1
	}
	return p.target(i)
}

func (p *Pins) target(i int) int32 {
	n := min(*p.pins[i].o.Replicas, math.MaxInt32)
	return min(max(int32(n), p.apps[i].Min), p.apps[i].Max)
}

// Applied reports, once per pin, that app i's target in force (current) has
// reached its pin, appending an wire.OverrideApplied event to events.
func (p *Pins) Applied(i int, current int32, now time.Time, events []OverrideEvent) []OverrideEvent {
	pn := &p.pins[i]
	if !pn.set || pn.applied || current != p.target(i) {
		return events
	}
	pn.applied = true
	return append(events, OverrideEvent{At: now, Kind: wire.OverrideApplied, Override: pn.o, Replicas: current,
		Reason: fmt.Sprintf("%s held at %d replicas by the pin of %s", pn.o.App, current, pn.o.By)})
}

// Active returns the pins in force, in app order.
func (p *Pins) Active() []wire.Override {
	var out []wire.Override
	for _, pn := range p.pins {
		if pn.set {
			out = append(out, pn.o)
		}
	}
	return out
}

// SetApps replaces the apps' bounds (same apps, same order) after a reload.
func (p *Pins) SetApps(apps []App) { p.apps = apps }

// overrides is a Soldier's override state: the pins (guarded by Soldier.mu)
// and Tick's event scratch.
type overrides struct {
	pins   *Pins
	events []OverrideEvent
}

func newOverrides(cfg Config) overrides { return overrides{pins: NewPins(cfg.Domain, cfg.Apps)} }

// OnOverride offers an operator's override received from the bus: an app's
// replica pin, or its cancel. It returns whether it was taken and a line
// saying what was done or why not; the event also goes to the Recorder when
// it implements OverrideRecorder. A taken pin applies from the next tick, in
// every mode but off. Safe for concurrent use with Tick.
func (s *Soldier) OnOverride(o wire.Override, now time.Time) (ok bool, reason string) {
	s.mu.Lock()
	e := s.ov.pins.Offer(o, now)
	s.mu.Unlock()
	s.recordOverride(e)
	return e.Kind != wire.OverrideRejected, e.Reason
}

// Overrides returns the replica pins in force (lapsed ones go at the next
// tick).
func (s *Soldier) Overrides() []wire.Override {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ov.pins.Active()
}

// pinOverrides is Tick's hook before the executor: it lifts lapsed pins and
// hands the executor the pins in force.
func (s *Soldier) pinOverrides(now time.Time) {
	s.mu.Lock()
	s.ov.pins.SetApps(s.cfg.Apps)
	s.ov.events = s.ov.pins.Expire(now, s.ov.events[:0])
	if s.ov.pins.set > 0 || s.exec.npinned > 0 { // else no pin to set or to lift
		for i := range s.cfg.Apps {
			s.exec.Pin(i, s.ov.pins.Target(i))
		}
	}
	s.mu.Unlock()
	s.flushOverrideEvents()
}

// overridesApplied is Tick's hook after the executor: it reports pins whose
// target is in force for the first time.
func (s *Soldier) overridesApplied(now time.Time) {
	s.mu.Lock()
	s.ov.events = s.ov.events[:0]
	if s.exec.npinned > 0 { // else no pin in force
		for i := range s.cfg.Apps {
			if s.exec.Pinned(i) >= 0 {
				s.ov.events = s.ov.pins.Applied(i, s.exec.Current(i), now, s.ov.events)
			}
		}
	}
	s.mu.Unlock()
	s.flushOverrideEvents()
}

func (s *Soldier) flushOverrideEvents() {
	for _, e := range s.ov.events {
		s.recordOverride(e)
	}
	s.ov.events = s.ov.events[:0]
}

func (s *Soldier) recordOverride(e OverrideEvent) {
	if r, ok := s.rec.(OverrideRecorder); ok {
		r.RecordOverride(e)
	}
}
