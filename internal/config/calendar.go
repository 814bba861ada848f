package config

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/core/domains"
)

// calendarHCL is the calendar block: the operator's schedule of expected
// demand (domains.Calendar).
type calendarHCL struct {
	Def    hcl.Range
	Lead   durationAttr `hcl:"lead"`
	Ramp   durationAttr `hcl:"ramp"`
	Events []*plannedHCL
}

func (c *calendarHCL) children() []child {
	return []child{
		{typ: "event", label: "name",
			example: `event "black-friday" { domain = "payment" ... }`,
			open: func(def hcl.Range, l label) node {
				e := &plannedHCL{Def: def, Name: l}
				c.Events = append(c.Events, e)
				return e
			}},
	}
}

func (c *calendarHCL) translate() domains.Calendar {
	out := domains.Calendar{Lead: c.Lead.V, Ramp: c.Ramp.V}
	for _, e := range c.Events {
		out.Events = append(out.Events, domains.Planned{Name: e.Name.V, Domain: e.Domain.V, Start: e.Start.V,
			Duration: e.Duration.V, Load: e.Load.V, Lead: e.Lead.V})
	}
	return out
}

type plannedHCL struct {
	Def      hcl.Range
	Name     label
	Domain   stringAttr   `hcl:"domain"`
	Start    timeAttr     `hcl:"start"`
	Duration durationAttr `hcl:"duration"`
	Load     numberAttr   `hcl:"load"`
	Lead     durationAttr `hcl:"lead"`
}

func (e *plannedHCL) children() []child { return nil }

var (
	eventLeads = interval{lo: 0, hi: float64(domains.MaxEventLead), loOpen: true}
	eventLoads = interval{lo: 1, hi: domains.MaxEventLoad, loOpen: true}
)

// validateCalendar checks the calendar block: its lead and ramp, and each
// event's domain, start, duration, load and lead.
func validateCalendar(cfg *domains.Config, h *calendarHCL, c checker) {
	cal := &cfg.Calendar
	c.duration(&h.Lead, cal.Lead, eventLeads)
	c.duration(&h.Ramp, cal.Ramp, interval{lo: 0, hi: float64(cal.Lead), loOpen: true}) // at most the lead
	names := cfg.DomainNames()
	for _, e := range h.Events {
		c.name(e.Name, "event")
		c.required(&e.Domain.attr, `domain = "payment"`)
		c.required(&e.Start.attr, `start = "2026-11-27T08:00:00Z"`)
		c.required(&e.Duration.attr, `duration = "4h"`)
		c.required(&e.Load.attr, "load = 2.0")
		if e.Domain.ok() {
			c.ref(e.Domain.Range, e.Domain.V, "domain", names)
		}
		c.duration(&e.Duration, e.Duration.V, positive)
		c.number(&e.Load, e.Load.V, eventLoads)
		c.duration(&e.Lead, e.Lead.V, eventLeads)
	}
}
