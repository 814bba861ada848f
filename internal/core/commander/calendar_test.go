package commander

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// TestCommanderPlansTheCalendarsEvents follows a Commander through one
// event of the operator's calendar, p0 at 2x from 12:00 for an hour with the
// default lead (30 min) and ramp (10 min): the pool's plan, the time.event
// flag, and the end of the plan once the event's demand has come.
func TestCommanderPlansTheCalendarsEvents(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cfg := testConfig()
	cfg.Calendar.Events = []domains.Planned{{Name: "sale", Domain: "p0", Start: start, Duration: time.Hour, Load: 2}}
	pool := &recordingPool{}
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &nopPublisher{}, nil, 1, 0)
	c.SetPool(pool)
	steps := []struct {
		rule    string
		at      time.Duration // from the event's start
		p0      float64       // p0's cores in use; p1 and p3 use 100 each
		plan    float64       // the pool's plan, cores
		flagged bool
	}{
		{"before the lead opens, the cores in use", -31 * time.Minute, 100, 300, false},
		{"the lead opens: p0's level now is the event's base", -30 * time.Minute, 100, 300, true},
		{"halfway up the ramp, half the event's extra cores", -25 * time.Minute, 110, 350, true},
		{"the ramp done, the base x load, held though p0 fell", -20 * time.Minute, 90, 400, true},
		{"the event started early: its rise so far is under the plan", -15 * time.Minute, 150, 400, true},
		{"the demand has come (0.9 of the plan): the replicas hold the nodes", -10 * time.Minute, 180, 380, true},
		{"and the plan stays with them as the event's demand falls short", 10 * time.Minute, 140, 340, true},
		{"the event over: no flag", time.Hour, 100, 300, false},
	}
	event := slices.Index(Layout(cfg), "time.event")
	for i, s := range steps {
		now := start.Add(s.at)
		c.OnReport(report(cfg, "p0", s.p0, 0.05, now))
		c.OnReport(report(cfg, "p1", 100, 0.05, now))
		c.OnReport(report(cfg, "p3", 100, 0.05, now))
		dec, err := c.Tick(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		// The hold keeps a plan's peak for plan_hold (0 here) and the
		// forecast plans no growth this young: the plan is the calendar's.
		if got := pool.targets[i]; math.Abs(got-s.plan) > 1e-9 || dec.CapacityTargetCores != got {
			t.Fatalf("%s: plan %v (decision %v), want %v", s.rule, got, dec.CapacityTargetCores, s.plan)
		}
		o, _ := c.Decide(now)
		if o.Event != s.flagged || (o.Vector[event] == 1) != s.flagged {
			t.Fatalf("%s: time.event %v (feature %v), want %v", s.rule, o.Event, o.Vector[event], s.flagged)
		}
	}
}

func TestCalendarSurvivesAReload(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cfg := testConfig()
	sale := domains.Planned{Name: "sale", Domain: "p0", Start: start, Duration: time.Hour, Load: 2}
	cfg.Calendar.Events = []domains.Planned{sale}
	pool := &recordingPool{}
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &nopPublisher{}, nil, 1, 0)
	c.SetPool(pool)
	tick := func(at time.Duration, p0 float64) float64 {
		now := start.Add(at)
		for _, d := range []string{"p1", "p3"} {
			c.OnReport(report(cfg, d, 100, 0.05, now))
		}
		c.OnReport(report(cfg, "p0", p0, 0.05, now))
		if _, err := c.Tick(context.Background(), now); err != nil {
			t.Fatal(err)
		}
		return pool.targets[len(pool.targets)-1]
	}
	tick(-30*time.Minute, 100) // the base: 100
	// A reload that adds an event keeps the sale's base: p0's 150 now is
	// the early start of the sale, not the level before it.
	next := *cfg
	next.Calendar.Events = []domains.Planned{sale, {Name: "batch", Domain: "p3", Start: start.Add(2 * time.Hour), Duration: time.Hour, Load: 3}}
	if err := c.Reload(&next); err != nil {
		t.Fatal(err)
	}
	if got := tick(-15*time.Minute, 150); got != 200+200 {
		t.Fatalf("after the reload, plan %v, want 400: the sale's base of 100 x 2, and 200 for p1 and p3", got)
	}
	// A reload that drops the sale drops its plan.
	last := *cfg
	last.Calendar.Events = nil
	if err := c.Reload(&last); err != nil {
		t.Fatal(err)
	}
	if got := tick(-14*time.Minute, 150); got != 350 {
		t.Fatalf("the sale removed, plan %v, want the cores in use, 350", got)
	}
}

func TestPlannedProgress(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	e := domains.Planned{Start: start, Duration: time.Hour, Load: 2}
	own := e
	own.Lead = 5 * time.Minute // an event's own lead, shorter than the ramp
	if f, active := own.Progress(start.Add(-5*time.Minute), &domains.Calendar{Lead: 30 * time.Minute, Ramp: 10 * time.Minute}); f != 0 || !active {
		t.Errorf("own lead 5m, at -5m: %v, %v; want 0, true", f, active)
	}
	if f, _ := own.Progress(start, &domains.Calendar{Lead: 30 * time.Minute, Ramp: 10 * time.Minute}); f != 1 {
		t.Errorf("own lead 5m, at the start: progress %v, want 1 (the ramp within the lead)", f)
	}
	for _, s := range []struct {
		at     time.Duration
		f      float64
		active bool
	}{
		{-31 * time.Minute, 0, false},
		{-30 * time.Minute, 0, true},
		{-25 * time.Minute, 0.5, true},
		{-20 * time.Minute, 1, true},
		{59 * time.Minute, 1, true},
		{time.Hour, 0, false},
	} {
		f, active := e.Progress(start.Add(s.at), &domains.Calendar{Lead: 30 * time.Minute, Ramp: 10 * time.Minute})
		if f != s.f || active != s.active {
			t.Errorf("at %s: progress %v, %v; want %v, %v", s.at, f, active, s.f, s.active)
		}
	}
}

// TestCalendarPlansTheEventsCallees: an event on a domain raises the
// domains it calls by the part of their requests its calls are (a sale on
// payment is a sale on fraud), and no other.
func TestCalendarPlansTheEventsCallees(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	cfg := testConfig()
	cfg.Calendar.Events = []domains.Planned{{Name: "sale", Domain: "p0", Start: start, Duration: time.Hour, Load: 3}}
	c := newCalendar(cfg)
	// p0 serves 1,000 requests/s and calls p1 a quarter of a time each:
	// 250 of p1's 500 requests/s. p3 is called by nobody.
	calls := make([]float64, 9)
	calls[0*3+1] = 0.25
	o := &Observation{Domains: []DomainObs{{RPS: 1000, CoresUsed: 100, Ceiling: 1}, {RPS: 500, CoresUsed: 40, Ceiling: 1}, {RPS: 100, CoresUsed: 10, Ceiling: 1}},
		Cluster: ClusterObs{CapacityCores: 1000}}
	c.apply(o, start.Add(-15*time.Minute), calls) // the ramp done
	want := []float64{300, 80, 0}                 // p0 x 3; p1 x (1 + 2 x 0.5); p3 untouched
	for i, d := range o.Domains {
		if math.Abs(d.EventCores-want[i]) > 1e-9 {
			t.Errorf("domain %d: event cores %v, want %v", i, d.EventCores, want[i])
		}
	}
	// No domain is planned past its ceiling: p0's 0.25 of the pool's 1,000 cores.
	o.Domains[0].Ceiling = 0.25
	c.apply(o, start.Add(-15*time.Minute), calls)
	if o.Domains[0].EventCores != 250 {
		t.Fatalf("p0 at a ceiling of 250 cores: event cores %v, want 250", o.Domains[0].EventCores)
	}
	o.Domains[0].Ceiling = 1
	// p1's calls came (0.9 of its 80): the calendar lets it go; p0's did not.
	o.Domains[1].CoresUsed = 75
	c.apply(o, start.Add(-14*time.Minute), calls)
	if o.Domains[0].EventCores != 300 || o.Domains[1].EventCores != 0 {
		t.Fatalf("after p1's demand came: event cores %v and %v, want 300 and 0", o.Domains[0].EventCores, o.Domains[1].EventCores)
	}
}
