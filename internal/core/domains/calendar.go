package domains

import (
	"slices"
	"time"
)

// Calendar is the operator's schedule of expected demand (the config's
// calendar block): the sales, paydays and batch windows a platform team
// plans, which no forecast of the traffic's past can see coming. The
// Commander asks the pool for each event's nodes ahead of it
// (commander.PlanCapacity) and flags it in its observation (time.event).
type Calendar struct {
	// Lead is how long before an event's start the Commander begins to ask
	// for its nodes. Default 30m: the design's forecaster sees calendar
	// events as known-future inputs at its longest horizon, t+30 min.
	Lead time.Duration
	// Ramp is how long, from Start - Lead, the Commander takes to ask for all
	// of an event's nodes, so that the provisioner sees a steady rise, not a
	// burst its rate limits stall on. Default 10m; <= Lead.
	Ramp time.Duration
	// Events in file order.
	Events []Planned
}

// Planned is one event of the calendar: Domain's demand is expected at Load
// times its level before the event, from Start for Duration.
type Planned struct {
	Name     string
	Domain   string
	Start    time.Time
	Duration time.Duration // > 0
	Load     float64       // > 1: the expected demand over the demand before
	// Lead, when above 0, is this event's own Calendar.Lead: longer for a
	// sale that may go live early, shorter for a window that starts on time.
	Lead time.Duration
}

// WithPlanned returns a copy of c whose calendar holds c's events, then
// events; c itself when events is empty.
func (c *Config) WithPlanned(events []Planned) *Config {
	if len(events) == 0 {
		return c
	}
	out := *c
	out.Calendar.Events = append(slices.Clip(c.Calendar.Events), events...)
	return &out
}

// Calendar defaults (Calendar.Lead, Calendar.Ramp) and bounds.
const (
	DefaultEventLead = 30 * time.Minute
	DefaultEventRamp = 10 * time.Minute
	// MaxEventLead bounds Calendar.Lead: nodes held idle longer than this
	// ahead of an event cost more than any stall they avoid.
	MaxEventLead = 6 * time.Hour
	// MaxEventLoad bounds Planned.Load.
	MaxEventLoad = 20.0
)

// Progress is how much of e's expected extra demand the Commander plans at
// now under cal: 0 before Start - lead and from Start + Duration on, rising
// linearly to 1 over the calendar's ramp (at most the lead) from Start -
// lead, then 1 until the event ends; lead is e's own, else the calendar's.
// active reports whether now is within [Start - lead, Start + Duration).
func (e *Planned) Progress(now time.Time, cal *Calendar) (f float64, active bool) {
	lead := cal.Lead
	if e.Lead > 0 {
		lead = e.Lead
	}
	ramp := min(cal.Ramp, lead)
	open := e.Start.Add(-lead)
	if now.Before(open) || !now.Before(e.Start.Add(e.Duration)) {
		return 0, false
	}
	if ramp <= 0 {
		return 1, true
	}
	return min(1, float64(now.Sub(open))/float64(ramp)), true
}
