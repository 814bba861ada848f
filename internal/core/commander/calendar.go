package commander

import (
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// calendar is the operator's calendar as the Commander plans for it. An
// event raises its own domain's demand and, through the calls between
// domains, its callees' (a sale on payment is a sale on fraud, which scores
// payment's calls): for each event and each domain it touches, the share
// of the domain's demand the event multiplies and the domain's cores in
// use when the event's lead opened, the level the event's load multiplies.
type calendar struct {
	cal    domains.Calendar
	n      int       // domains
	domain []int     // per event, index into the config's domains; -1: none
	share  []float64 // per event x domain: the share of the domain's demand the event moves; 0: none
	base   []float64 // per event x domain: cores when the lead opened; 0: not taken
	met    []bool    // per event x domain: the event's demand has come (eventMet)
	open   []bool    // per event: its window held the last tick
}

// eventMet is the share of an event's planned cores a domain's own
// replicas must use for the event to count as come there: from then to the
// event's end the calendar plans nothing more for that domain, and the pool
// follows the replicas (and the forecast) down when the event's demand is
// less than the operator expected or passes early. Chosen on the training
// days (docs/experiments.md, "An operator's calendar"): planning to the
// event's end cost 0.1 point more for the same breaches.
const eventMet = 0.9

func newCalendar(cfg *domains.Config) calendar {
	n, k := len(cfg.Domains), len(cfg.Calendar.Events)
	c := calendar{cal: cfg.Calendar, n: n, share: make([]float64, k*n), base: make([]float64, k*n),
		met: make([]bool, k*n), open: make([]bool, k)}
	for _, e := range cfg.Calendar.Events {
		c.domain = append(c.domain, cfg.Domain(e.Domain))
	}
	return c
}

// reloaded is the calendar of cfg, keeping what was taken for every event
// that is in both, so that a reload during an event does not take the
// event's own demand for the level before it.
func (c *calendar) reloaded(cfg *domains.Config) calendar {
	out := newCalendar(cfg)
	if out.n != c.n {
		return out
	}
	for i, e := range out.cal.Events {
		for j, old := range c.cal.Events {
			if samePlanned(&e, &old) {
				copy(out.share[i*out.n:(i+1)*out.n], c.share[j*c.n:(j+1)*c.n])
				copy(out.base[i*out.n:(i+1)*out.n], c.base[j*c.n:(j+1)*c.n])
				copy(out.met[i*out.n:(i+1)*out.n], c.met[j*c.n:(j+1)*c.n])
				out.open[i] = c.open[j]
				break
			}
		}
	}
	return out
}

// apply sets each domain's EventCores at now, the most cores any event
// plans for it: the domain's cores when the event's lead opened times
// 1 + (Load - 1) x share x the event's progress (domains.Planned.Progress),
// within the domain's ceiling (no budget could let it use more), until the
// domain uses eventMet of that at full progress; and o.Event while
// any event's window holds now. share is 1 for the event's own domain and,
// for a domain it calls, the part of that domain's requests its calls were
// when the lead opened (calls, the domain-by-domain call ratios, x the
// caller's rate over the callee's, at most 1). It reads the reports in o,
// so call it after they are in. It does not allocate.
func (c *calendar) apply(o *Observation, now time.Time, calls []float64) {
	o.Event = false
	for i := range o.Domains {
		o.Domains[i].EventCores = 0
	}
	for k := range c.cal.Events {
		e, src := &c.cal.Events[k], c.domain[k]
		f, active := e.Progress(now, &c.cal)
		row := k * c.n
		if !active || src < 0 {
			if c.open[k] {
				clear(c.share[row : row+c.n])
				clear(c.base[row : row+c.n])
				clear(c.met[row : row+c.n])
				c.open[k] = false
			}
			continue
		}
		o.Event = true
		if !c.open[k] {
			c.open[k] = true
			c.share[row+src] = 1
			for j := range o.Domains {
				if j == src || o.Domains[j].RPS <= 0 {
					continue
				}
				c.share[row+j] = min(1, o.Domains[src].RPS*calls[src*c.n+j]/o.Domains[j].RPS)
			}
		}
		for j := range o.Domains {
			share, d := c.share[row+j], &o.Domains[j]
			if share <= 0 || c.met[row+j] {
				continue
			}
			if c.base[row+j] == 0 {
				c.base[row+j] = d.CoresUsed
			}
			ceiling := d.Ceiling * o.Cluster.CapacityCores
			full := min(c.base[row+j]*(1+(e.Load-1)*share), ceiling)
			if f >= 1 && d.CoresUsed >= eventMet*full {
				c.met[row+j] = true // the event's demand has come: its replicas hold its nodes
				continue
			}
			d.EventCores = max(d.EventCores, min(c.base[row+j]*(1+(e.Load-1)*share*f), ceiling))
		}
	}
}

func samePlanned(a, b *domains.Planned) bool {
	return a.Name == b.Name && a.Domain == b.Domain && a.Start.Equal(b.Start) && a.Duration == b.Duration && a.Load == b.Load && a.Lead == b.Lead
}
