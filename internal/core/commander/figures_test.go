package commander

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

func TestForecastCores(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name                  string
		rps, demand, forecast float64
		want                  float64
	}{
		{"the demand scaled by the forecast over the rate now", 1000, 40, 1500, 60},
		{"a flat forecast is the demand", 200, 12, 200, 12},
		{"no traffic now: unknown", 0, 0, 300, nan},
		{"no forecast yet (NaN): unknown", 1000, 40, nan, nan},
		{"an infinite forecast: unknown", 1000, 40, math.Inf(1), nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DomainObs{RPS: tt.rps, DemandCores: tt.demand}
			got := d.ForecastCores(tt.forecast)
			if math.IsNaN(tt.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-tt.want) > 1e-9) {
				t.Errorf("ForecastCores(%g) at %g rps and %g cores = %g, want %g", tt.forecast, tt.rps, tt.demand, got, tt.want)
			}
		})
	}
}

// TestDecisionCarriesEachDomainsFigures: a tick's Decision has, per domain,
// the budget its directive carried, the demand and cores its report gave,
// its published share and urgency and its forecast in cores; a domain that
// never reported is stale with no forecast; and the pool it divided and
// the capacity plan asked of the pool.
func TestDecisionCarriesEachDomainsFigures(t *testing.T) {
	cfg := testConfig()
	cfg.Commander.CapacityPlan = domains.PlanForecast
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pub, pool := &nopPublisher{}, &recordingPool{}
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, nil, 1, 0)
	c.SetPool(pool)
	c.SetCapacity(&nodeCapacity{cores: 800, known: true})
	c.OnReport(report(cfg, "p0", 300, 0.1, now))
	c.OnReport(report(cfg, "p1", 150, 0.1, now))
	dec, err := c.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if dec.CapacityCores != 800 || len(pool.targets) != 1 || dec.CapacityTargetCores != pool.targets[0] || dec.CapacityTargetCores != 450 {
		t.Fatalf("pool %g cores, plan %g; want 800 and the plan asked of the pool %v (450: the cores in use)",
			dec.CapacityCores, dec.CapacityTargetCores, pool.targets)
	}
	if len(dec.Domains) != 3 || len(pub.directives) != 2 {
		t.Fatalf("%d domains' figures, %d directives; want 3 and 2 (p3 has not reported)", len(dec.Domains), len(pub.directives))
	}
	o, _ := c.Decide(now)
	for i, f := range dec.Domains[:2] {
		dir := pub.directives[i]
		if f.Name != dir.Domain || f.Budget != dir.Cores || f.Share != dir.Share || f.Urgency != dir.Urgency {
			t.Errorf("%s: budget %g, share %g, urgency %g; the directive says %s %g, %g, %g",
				f.Name, f.Budget, f.Share, f.Urgency, dir.Domain, dir.Cores, dir.Share, dir.Urgency)
		}
		d := &o.Domains[i]
		if want := d.ForecastCores(d.ForecastP50[forecastHorizon]); !sameFloat(f.ForecastP50, want) {
			t.Errorf("%s: forecast p50 %g cores, want %g", f.Name, f.ForecastP50, want)
		}
		if want := d.ForecastCores(d.ForecastP80[forecastHorizon]); !sameFloat(f.ForecastP80, want) {
			t.Errorf("%s: forecast p80 %g cores, want %g", f.Name, f.ForecastP80, want)
		}
	}
	p0, p3 := dec.Domains[0], dec.Domains[2]
	if p0.Demand != 300 || p0.Used != 300 || p0.Stale || math.IsNaN(p0.ForecastP50) {
		t.Errorf("p0: %+v; want demand and used 300 as reported, fresh, with a forecast", p0)
	}
	if p3.Demand != 0 || !p3.Stale || !math.IsNaN(p3.ForecastP50) || !math.IsNaN(p3.ForecastP80) {
		t.Errorf("p3 never reported: %+v; want no demand, stale, no forecast", p3)
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
