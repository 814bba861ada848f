package commander

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/regimentd/regiment/wire"
)

// GuardOverride names a share set by an operator's pin, and an unpinned
// domain's share cut below its floor to make room for pins.
const GuardOverride = "override"

// OverrideEvent is one step in a share override's life, for the ledger.
type OverrideEvent struct {
	At       time.Time
	Kind     string        // wire.OverrideAccepted, ..., wire.OverrideCancelled
	Override wire.Override // the override concerned (for expired and applied: the pin)
	Share    float64       // the pinned share; -1 when none
	Reason   string        // one line for humans
}

// OverrideRecorder receives every override event. A Commander's Recorder
// that also implements it gets them; RecordOverride is called from the
// goroutine of OnOverride as well as from Tick, so it must be safe for
// concurrent use.
type OverrideRecorder interface {
	RecordOverride(e OverrideEvent)
}

// SharePins holds the operator's share pins: at most one per domain, each
// until its deadline. It is pure (every method takes now) and not safe for
// concurrent use.
//
// Invariant: the pinned shares sum to at most 1 (Offer refuses a pin that
// would break it), so ApplyPins can always make room.
type SharePins struct {
	names []string
	pins  []sharePin // per domain
	share []float64  // per domain: the pin, -1 for none (Shares' result)
}

type sharePin struct {
	o       wire.Override
	set     bool
	applied bool
}

// NewSharePins returns an empty pin set for the domains, in config order.
func NewSharePins(domains []string) *SharePins {
	p := &SharePins{names: domains, pins: make([]sharePin, len(domains)), share: make([]float64, len(domains))}
	for i := range p.share {
		p.share[i] = -1
	}
	return p
}

// Offer takes o at now: a share pin replaces the domain's pin, a cancel lifts
// it. It returns the event: wire.OverrideAccepted or wire.OverrideCancelled, or
// wire.OverrideRejected (nothing changed) for an invalid override, an unknown
// domain, a replica override (the Soldier's), one issued more than
// wire.MaxOverrideSkew ahead of now, a lapsed one, one older than the domain's pin
// in force, a cancel of no pin, or a pin that would make the pinned shares sum
// past 1.
func (p *SharePins) Offer(o wire.Override, now time.Time) OverrideEvent {
	e := OverrideEvent{At: now, Kind: wire.OverrideRejected, Override: o, Share: -1}
	i := slices.Index(p.names, o.Domain)
	if e.Reason = p.refusal(o, i, now); e.Reason != "" {
		return e
	}
	if o.Cancel {
		old := *p.pins[i].o.Share
		p.pins[i], p.share[i] = sharePin{}, -1
		e.Kind, e.Reason = wire.OverrideCancelled, fmt.Sprintf("share pin of %s at %.4g lifted by %s: %s", o.Domain, old, o.By, o.Reason)
		return e
	}
	others := 0.0
	for j := range p.pins {
		if j != i && p.pins[j].set {
			others += *p.pins[j].o.Share
		}
	}
	if others+*o.Share > 1+1e-9 {
		e.Reason = fmt.Sprintf("pinned shares would sum to %.4g, past 1 (other pins hold %.4g)", others+*o.Share, others)
		return e
	}
	p.pins[i], p.share[i] = sharePin{o: o, set: true}, *o.Share
	e.Kind, e.Share = wire.OverrideAccepted, *o.Share
	e.Reason = fmt.Sprintf("%s pinned at share %.4g until %s by %s", o.Domain, *o.Share, wire.Stamp(o.Until), o.By)
	if o.Reason != "" {
		e.Reason += ": " + o.Reason
	}
	return e
}

// refusal is why p refuses o at now, "" if it does not; i is o's domain's
// index, -1 when the domain is unknown.
func (p *SharePins) refusal(o wire.Override, i int, now time.Time) string {
	switch err := o.Validate(nil); {
	case err != nil:
		return err.Error()
	case i < 0:
		return fmt.Sprintf("%s is not a domain of this cluster", o.Domain)
	case !o.ForCommander():
		return "replica overrides are the domain's Soldier's"
	}
	var inForce *wire.Override
	if p.pins[i].set {
		inForce = &p.pins[i].o
	}
	return o.Admit(now, inForce, "the Commander's")
}

// Expire lifts every pin lapsed at now, appending an wire.OverrideExpired event
// for each to events.
func (p *SharePins) Expire(now time.Time, events []OverrideEvent) []OverrideEvent {
	for i := range p.pins {
		if pn := &p.pins[i]; pn.set && !pn.o.Active(now) {
			events = append(events, OverrideEvent{At: now, Kind: wire.OverrideExpired, Override: pn.o, Share: *pn.o.Share,
				Reason: fmt.Sprintf("share pin of %s at %.4g lapsed at %s", p.names[i], *pn.o.Share, wire.Stamp(pn.o.Until))})
			*pn, p.share[i] = sharePin{}, -1
		}
	}
	return events
}

// Shares is the pinned share per domain, -1 where none; owned by p.
func (p *SharePins) Shares() []float64 { return p.share }

// Applied reports, once per pin, that the decided shares carry it, appending
// wire.OverrideApplied events to events.
func (p *SharePins) Applied(shares []float64, now time.Time, events []OverrideEvent) []OverrideEvent {
	for i := range p.pins {
		if pn := &p.pins[i]; pn.set && !pn.applied && shares[i] == *pn.o.Share {
			pn.applied = true
			events = append(events, OverrideEvent{At: now, Kind: wire.OverrideApplied, Override: pn.o, Share: shares[i],
				Reason: fmt.Sprintf("%s held at share %.4g by the pin of %s", p.names[i], shares[i], pn.o.By)})
		}
	}
	return events
}

// Active returns the pins in force, in domain order.
func (p *SharePins) Active() []wire.Override {
	var out []wire.Override
	for _, pn := range p.pins {
		if pn.set {
			out = append(out, pn.o)
		}
	}
	return out
}

// ApplyPins sets each pinned domain's share (pins[i] >= 0) in a, after ApplyGuards,
// and appends what changed to applied. Floors, ceilings, max change and the
// dead-zone do not undo a pin. Room for the pins is made from the unpinned
// domains, lowest priority first: first down to their floors to keep
// reserve_min free (guard reserve), then, only if the shares still sum past 1,
// below their floors (guard override). The reserve is what remains; it may
// fall under reserve_min when pins alone leave less. order is scratch with
// capacity for every domain; it makes ApplyPins allocation-free.
//
// Invariant: when the pins sum to at most 1, the shares plus the reserve sum
// to 1 afterwards.
func ApplyPins(r Rules, pins []float64, a *Action, applied []Applied, order []int) []Applied {
	set := func(name string, i int, v float64) {
		if v != a.Shares[i] {
			applied = append(applied, Applied{name, i, a.Shares[i], v})
			a.Shares[i] = v
		}
	}
	pinned := false
	for i, v := range pins {
		if v >= 0 {
			set(GuardOverride, i, v)
			pinned = true
		}
	}
	if !pinned {
		return applied
	}
	order = order[:0]
	for i := range a.Shares {
		if pins[i] < 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return r.Priorities[y] - r.Priorities[x] })
	sum := 0.0
	for _, s := range a.Shares {
		sum += s
	}
	if over := sum - (1 - r.ReserveMin); over > 1e-12 {
		for _, i := range order {
			if over <= 1e-12 {
				break
			}
			if cut := min(over, a.Shares[i]-r.Floors[i]); cut > 0 {
				set(GuardReserve, i, a.Shares[i]-cut)
				over -= cut
				sum -= cut
			}
		}
	}
	if over := sum - 1; over > 1e-12 {
		for _, i := range order {
			if over <= 1e-12 {
				break
			}
			if cut := min(over, a.Shares[i]); cut > 0 {
				set(GuardOverride, i, a.Shares[i]-cut)
				over -= cut
				sum -= cut
			}
		}
	}
	a.Reserve = max(0, 1-sum)
	return applied
}

// overrides is a Commander's override state, under its own lock so that
// OnOverride does not wait for a tick's publishing.
type overrides struct {
	mu     sync.Mutex
	pins   *SharePins
	pinned []float64       // a tick's copy of the pins in force (tick only)
	order  []int           // ApplyPins' scratch (tick only)
	events []OverrideEvent // tick only
}

func newOverrides(names []string) *overrides {
	return &overrides{pins: NewSharePins(names), pinned: make([]float64, 0, len(names)), order: make([]int, 0, len(names))}
}

// OnOverride offers an operator's override received from the bus: a domain's
// share pin, or its cancel. It returns whether it was taken and a line saying
// what was done or why not; the event also goes to the Recorder when it
// implements OverrideRecorder. A taken pin applies from the next decision.
// Safe for concurrent use with Tick.
func (c *Commander) OnOverride(o wire.Override, now time.Time) (ok bool, reason string) {
	c.ov.mu.Lock()
	e := c.ov.pins.Offer(o, now)
	c.ov.mu.Unlock()
	c.recordOverride(e)
	return e.Kind != wire.OverrideRejected, e.Reason
}

// Overrides returns the share pins in force (lapsed ones go at the next
// decision). Safe for concurrent use with Tick.
func (c *Commander) Overrides() []wire.Override {
	c.ov.mu.Lock()
	defer c.ov.mu.Unlock()
	return c.ov.pins.Active()
}

// applyOverrides is decide's hook after ApplyGuards: it lifts lapsed pins, applies
// those in force to the final action and reports first applications. c.mu is
// held.
func (c *Commander) applyOverrides(now time.Time) {
	c.ov.mu.Lock()
	c.ov.events = c.ov.pins.Expire(now, c.ov.events[:0])
	c.ov.pinned = append(c.ov.pinned[:0], c.ov.pins.Shares()...)
	c.ov.mu.Unlock()
	c.applied = ApplyPins(c.rules, c.ov.pinned, &c.final, c.applied, c.ov.order)
	c.ov.mu.Lock()
	c.ov.events = c.ov.pins.Applied(c.final.Shares, now, c.ov.events)
	c.ov.mu.Unlock()
	for _, e := range c.ov.events {
		c.recordOverride(e)
	}
}

func (c *Commander) recordOverride(e OverrideEvent) {
	if r, ok := c.rec.(OverrideRecorder); ok {
		r.RecordOverride(e)
	}
}
