package commander

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/wire"
)

func testConfig() *domains.Config {
	mk := func(name string, prio int, floor, ceil float64) domains.Domain {
		return domains.Domain{Name: name, Priority: prio, Floor: floor, Ceiling: ceil, Weight: 1,
			SLO:     domains.SLO{LatencyP99: 200 * time.Millisecond},
			AppSets: []domains.AppSet{{Name: "a", Count: 2, CPUPerReplica: 1, ServiceTime: 10 * time.Millisecond}}}
	}
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "c", CapacityCores: 1000},
		Domains: []domains.Domain{mk("p0", 0, 0.2, 0.7), mk("p1", 1, 0.1, 0.6), mk("p3", 3, 0.05, 0.5)},
	}
	cfg.Defaults()
	return cfg
}

func report(cfg *domains.Config, domain string, demandCores, p99 float64, at time.Time) wire.DomainReport {
	return wire.DomainReport{Version: wire.Version, Cluster: cfg.Cluster.Name, Domain: domain, Seq: 1, SentAt: at,
		RPS: 1000, RPSP95: 1000, P99Seconds: p99, DemandCores: demandCores, CoresUsed: demandCores, Mode: wire.ModeActive}
}

// nopPublisher accepts everything.
type nopPublisher struct{ directives []wire.Directive }

func (p *nopPublisher) PublishDirective(_ context.Context, d wire.Directive) error {
	p.directives = append(p.directives, d)
	return nil
}
func (p *nopPublisher) PublishAllocation(context.Context, wire.Allocation) error { return nil }

func TestForecastPolicyServesPriorityFirstUnderContention(t *testing.T) {
	cfg := testConfig()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pub := &nopPublisher{}
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, nil, 1, 0)
	// Everyone wants 500 cores of a 1000-core pool.
	for _, d := range []string{"p0", "p1", "p3"} {
		c.OnReport(report(cfg, d, 500, 0.1, now))
	}
	dec, err := c.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if dec.Shares[0] < 0.5 {
		t.Fatalf("P0 got %.3f of the pool, wants 0.5+", dec.Shares[0])
	}
	if dec.Shares[2] > dec.Shares[1] || math.Abs(dec.Shares[2]-0.05) > 1e-9 {
		t.Fatalf("P3 got %.3f, P1 %.3f: the lowest tier should be held at its floor 0.05", dec.Shares[2], dec.Shares[1])
	}
	if len(pub.directives) != 3 || pub.directives[0].Cores != dec.Shares[0]*1000 || pub.directives[0].Seq != 1 {
		t.Fatalf("directives %+v", pub.directives)
	}
}

func TestForecastPolicyKeepsInvariants(t *testing.T) {
	const seed = 42
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	cfg := testConfig()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &nopPublisher{}, nil, 1, 0)
	for tick := range 500 {
		now = now.Add(time.Minute)
		for _, d := range []string{"p0", "p1", "p3"} {
			if r.Float64() < 0.9 { // sometimes a report goes missing
				c.OnReport(report(cfg, d, r.Float64()*900, r.Float64()*0.5, now))
			}
		}
		dec, err := c.Tick(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		sum := dec.Reserve
		for i, s := range dec.Shares {
			d := cfg.Domains[i]
			if s < d.Floor-1e-9 || s > d.Ceiling+1e-9 {
				t.Fatalf("tick %d: %s share %.4f outside [%.2f, %.2f]", tick, d.Name, s, d.Floor, d.Ceiling)
			}
			sum += s
		}
		if math.Abs(sum-1) > 1e-9 || dec.Reserve < cfg.Commander.ReserveMin-1e-9 {
			t.Fatalf("tick %d: shares + reserve = %.6f, reserve %.4f", tick, sum, dec.Reserve)
		}
	}
}

// BenchmarkDecide is one Commander decision (observation + policy + guards)
// for the five-domain example sizes.
// BenchmarkDecide is one Commander tick (observation, policy, guards), with
// and without a calendar event in force (its pass over events x domains
// must not allocate either).
func BenchmarkDecide(b *testing.B) {
	for _, calendar := range []bool{false, true} {
		b.Run(map[bool]string{false: "forecast", true: "calendar"}[calendar], func(b *testing.B) {
			cfg := testConfig()
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if calendar { // a sale from the first tick's lead to past the benchmark's end
				cfg.Calendar.Events = []domains.Planned{{Name: "sale", Domain: "p0", Start: now.Add(10 * time.Minute), Duration: 100 * 365 * 24 * time.Hour, Load: 2}}
			}
			c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &nopPublisher{}, nil, 1, 0)
			for _, d := range []string{"p0", "p1", "p3"} {
				c.OnReport(report(cfg, d, 300, 0.1, now))
			}
			b.ReportAllocs()
			var o *Observation
			for b.Loop() {
				now = now.Add(time.Minute)
				o, _ = c.Decide(now)
			}
			if o.Event != calendar {
				b.Fatalf("at %s time.event is %v, want %v", now, o.Event, calendar)
			}
		})
	}
}

func TestForecastPolicyHeadroom(t *testing.T) {
	// Three domains whose forecasts are unsure by 0, 0.2 and 2 (relative
	// p10-p90 spread at +15 min).
	obs := func() *Observation {
		o := &Observation{Cluster: ClusterObs{CapacityCores: 1000}}
		for i, u := range []float64{0, 0.2, 2} {
			o.Domains = append(o.Domains, DomainObs{Name: string(rune('a' + i)), Priority: i, Weight: 1,
				Ceiling: 0.5, DemandCores: 100, RPS: 100, Uncertainty: u})
		}
		return o
	}
	for _, tc := range []struct {
		name  string
		fixed float64 // commander { headroom }
		own   float64 // domain c's domain { headroom }
		want  []float64
	}{
		{"the spread rule: a quarter of the spread within [0.01, 0.15]", 0, 0, []float64{0.01, 0.05, 0.15}},
		{"a fixed headroom replaces the spread rule for every domain", 0.06, 0, []float64{0.06, 0.06, 0.06}},
		{"a domain's own headroom replaces the spread rule", 0, 0.02, []float64{0.01, 0.05, 0.02}},
		{"and the fixed headroom", 0.06, 0.02, []float64{0.06, 0.06, 0.02}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Forecast{ReserveMin: 0.02, Headroom: tc.fixed}
			a := NewAction(3)
			o := obs()
			o.Domains[2].FixedHeadroom = tc.own
			p.Decide(o, &a)
			for i, w := range tc.want {
				if math.Abs(a.Headroom[i]-w) > 1e-12 {
					t.Fatalf("headroom %v, want %v", a.Headroom, tc.want)
				}
			}
		})
	}
}

func TestForecastPolicyNeverDividesAnEmptyTier(t *testing.T) {
	// Floors that use the whole pool but for a rounding error, and a tier
	// that wants nothing above its floor: shares must stay finite.
	cfg := testConfig()
	cfg.Commander.ReserveMin = 0.1
	cfg.Domains[0].Floor, cfg.Domains[1].Floor, cfg.Domains[2].Floor = 0.7, 0.1, 0.1
	cfg.Domains[0].Ceiling = 0.7
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c := New(cfg, &Forecast{ReserveMin: 0.1}, "forecast", &nopPublisher{}, nil, 1, 0)
	c.OnReport(report(cfg, "p0", 900, 0.1, now))
	c.OnReport(report(cfg, "p1", 900, 0.1, now))
	c.OnReport(report(cfg, "p3", 0, 0.1, now))
	dec, err := c.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range dec.Shares {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			t.Fatalf("share %d is %v", i, s)
		}
	}
}
