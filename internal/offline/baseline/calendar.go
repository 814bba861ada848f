package baseline

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// HPACalendar is the HPA of a platform team that scales for its calendar
// the way HPA shops do, with a cron scaler per app (KEDA's cron trigger, or
// a CronJob that patches minReplicas): from an event's start - lead to its
// end, every app of the event's domain is held at least at load x the
// replicas it had when the window opened, within its max. The same calendar
// and lead as Regiment's Commander (domains.Calendar), without its ramp:
// each app's cron fires on its own, all at once.
const HPACalendar = "hpa-calendar"

// CalendarHPA is the HPA with a cron floor per app for each event of a
// calendar. Decide does not allocate after an event's window first opens.
type CalendarHPA struct {
	hpa *HPA
	cal domains.Calendar
	// window is cal without its ramp: each cron fires whole at the lead.
	window domains.Calendar
	min    []int32   // each app's own min_replicas
	apps   [][]int   // per event, the ids of its domain's apps
	base   [][]int32 // per event, each of its apps' replicas when the window opened; nil: closed
}

// NewCalendarHPA is the default HPA (DefaultHPASettings) of cfg's apps with
// cron floors for cfg's calendar and the events s's scenario announced.
func NewCalendarHPA(cfg *domains.Config, s *sim.Sim) *CalendarHPA {
	cal := cfg.WithPlanned(s.Planned()).Calendar
	c := &CalendarHPA{hpa: NewHPA(cfg, DefaultHPASettings(cfg)), cal: cal, window: domains.Calendar{Lead: cal.Lead}}
	c.min = append([]int32(nil), c.hpa.min...)
	for _, e := range cal.Events {
		di := cfg.Domain(e.Domain)
		var ids []int
		for _, a := range cfg.Apps() {
			if a.Domain == di {
				ids = append(ids, a.ID)
			}
		}
		c.apps = append(c.apps, ids)
		c.base = append(c.base, nil)
	}
	return c
}

// Decide sets each app's floor for the events whose window holds now, then
// reconciles the HPAs (HPA.Decide), which scale every app to its floor at
// their next sync.
func (c *CalendarHPA) Decide(now time.Time, t *sim.Telemetry, targets []int32) {
	copy(c.hpa.min, c.min)
	for k := range c.cal.Events {
		e := &c.cal.Events[k]
		if _, active := e.Progress(now, &c.window); !active {
			c.base[k] = c.base[k][:0]
			continue
		}
		ids := c.apps[k]
		if len(c.base[k]) == 0 {
			for _, id := range ids {
				c.base[k] = append(c.base[k], targets[id])
			}
		}
		for j, id := range ids {
			floor := int32(min(math.Ceil(float64(c.base[k][j])*e.Load), float64(c.hpa.max[id])))
			c.hpa.min[id] = max(c.hpa.min[id], floor)
		}
	}
	c.hpa.Decide(now, t, targets)
}
