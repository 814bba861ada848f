package commander

import (
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// calendar is the operator's calendar as the Commander plans for it: each
// event's domain, and that domain's cores in use when the event's lead
// opened, the level the event's load multiplies.
type calendar struct {
	cal    domains.Calendar
	domain []int     // index into the config's domains; -1: none
	base   []float64 // cores; 0: not taken yet
	met    []bool    // the event's demand has come (eventMet)
}

// eventMet is the share of an event's planned cores the domain's own
// replicas must use for the event to count as come: from then to the
// event's end the calendar plans nothing more for it, and the pool follows
// the replicas (and the forecast) down when the event's demand is less than
// the operator expected or passes early. Chosen on the training days
// (docs/experiments.md, "An operator's calendar"): planning to the event's
// end cost 0.1 point more for the same breaches.
const eventMet = 0.9

func newCalendar(cfg *domains.Config) calendar {
	c := calendar{cal: cfg.Calendar}
	for _, e := range cfg.Calendar.Events {
		c.domain = append(c.domain, cfg.Domain(e.Domain))
		c.base = append(c.base, 0)
		c.met = append(c.met, false)
	}
	return c
}

// reloaded is the calendar of cfg, keeping the base of every event that is
// in both, so that a reload during an event does not take the event's own
// demand for the level before it.
func (c *calendar) reloaded(cfg *domains.Config) calendar {
	out := newCalendar(cfg)
	for i, e := range out.cal.Events {
		for j, old := range c.cal.Events {
			if samePlanned(&e, &old) {
				out.base[i], out.met[i] = c.base[j], c.met[j]
				break
			}
		}
	}
	return out
}

// apply sets each domain's EventCores at now, the most cores any of its
// events plans: the domain's cores when the event's lead opened times
// 1 + (Load - 1) x the event's progress (domains.Planned.Progress), until
// the domain uses eventMet of it; and o.Event while any event's window holds
// now. It reads CoresUsed, so call it after the reports are in o. It does
// not allocate.
func (c *calendar) apply(o *Observation, now time.Time) {
	o.Event = false
	for i := range o.Domains {
		o.Domains[i].EventCores = 0
	}
	for k := range c.cal.Events {
		e, di := &c.cal.Events[k], c.domain[k]
		f, active := e.Progress(now, &c.cal)
		if !active || di < 0 {
			c.base[k] = 0
			c.met[k] = false
			continue
		}
		o.Event = true
		d := &o.Domains[di]
		if c.base[k] == 0 {
			c.base[k] = d.CoresUsed
		}
		if f >= 1 && d.CoresUsed >= eventMet*c.base[k]*e.Load {
			c.met[k] = true // the event's demand has come: its replicas hold its nodes
		}
		if c.met[k] {
			continue
		}
		d.EventCores = max(d.EventCores, c.base[k]*(1+(e.Load-1)*f))
	}
}

func samePlanned(a, b *domains.Planned) bool {
	return a.Name == b.Name && a.Domain == b.Domain && a.Start.Equal(b.Start) && a.Duration == b.Duration && a.Load == b.Load && a.Lead == b.Lead
}
