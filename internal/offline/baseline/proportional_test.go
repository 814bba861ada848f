package baseline

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// twoDomains is a 100-core pool shared by domains "a" and "b" with the given
// floors and ceilings, each with two apps of one core per replica.
func twoDomains(floorA, ceilA, floorB, ceilB float64) *domains.Config {
	set := domains.AppSet{Name: "x", Count: 2, CPUPerReplica: 1, MinReplicas: 1, MaxReplicas: 100, ServiceTime: 20 * time.Millisecond, Concurrency: 2}
	cfg := &domains.Config{
		Cluster: domains.Cluster{Name: "t", CapacityCores: 100},
		Domains: []domains.Domain{
			{Name: "a", Floor: floorA, Ceiling: ceilA, SLO: domains.SLO{LatencyP99: time.Second}, AppSets: []domains.AppSet{set}},
			{Name: "b", Floor: floorB, Ceiling: ceilB, SLO: domains.SLO{LatencyP99: time.Second}, AppSets: []domains.AppSet{set}},
		},
	}
	cfg.Defaults()
	return cfg
}

// domainTelemetry is telemetry of the two-domain config with the given
// domain request rates and every app at ready replicas and util.
func domainTelemetry(rpsA, rpsB float64, ready int32, util float64) *sim.Telemetry {
	t := flat(4, ready, util)
	t.Domains = []sim.DomainTelemetry{{RPS: rpsA}, {RPS: rpsB}}
	return t
}

func TestProportionalShares(t *testing.T) {
	tests := []struct {
		name       string
		cfg        *domains.Config
		rpsA, rpsB float64
		want       [2]float64
	}{
		{"shares follow request rates", twoDomains(0, 1, 0, 1), 300, 100, [2]float64{0.75, 0.25}},
		{"a floor lifts a quiet domain, the rest goes by rate", twoDomains(0, 1, 0.2, 1), 990, 10, [2]float64{0.8, 0.2}},
		{"a ceiling caps a busy domain", twoDomains(0, 0.6, 0, 1), 990, 10, [2]float64{0.6, 0.4}},
		{"no traffic splits evenly", twoDomains(0, 1, 0, 1), 0, 0, [2]float64{0.5, 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProportional(tt.cfg, 0.7)
			p.shares(domainTelemetry(tt.rpsA, tt.rpsB, 1, 0.7))
			for d := range 2 {
				if math.Abs(p.share[d]-tt.want[d]) > 1e-12 {
					t.Fatalf("shares %v, want %v", p.share, tt.want)
				}
			}
		})
	}
}

func TestProportionalDecide(t *testing.T) {
	tests := []struct {
		name    string
		cfg     *domains.Config
		tel     *sim.Telemetry
		targets []int32
		want    []int32
	}{
		{"apps scale by the utilisation ratio within budget",
			twoDomains(0, 1, 0, 1), domainTelemetry(100, 100, 10, 0.98), []int32{10, 10, 10, 10}, []int32{14, 14, 14, 14}},
		{"a ratio within tolerance keeps the target",
			twoDomains(0, 1, 0, 1), domainTelemetry(100, 100, 10, 0.75), []int32{10, 10, 10, 10}, []int32{10, 10, 10, 10}},
		{"starting replicas are not cut while the ratio is above one",
			twoDomains(0, 1, 0, 1), domainTelemetry(100, 100, 6, 0.84), []int32{10, 10, 10, 10}, []int32{10, 10, 10, 10}},
		{"apps over the domain budget are scaled down proportionally",
			// a's share is its floor, 0.2: 20 cores for wants of 2 x 43; b's 80 for the same.
			twoDomains(0.2, 1, 0, 1), domainTelemetry(1, 999, 30, 1.0), []int32{30, 30, 30, 30}, []int32{10, 10, 40, 40}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProportional(tt.cfg, 0.7)
			p.Decide(t0, tt.tel, tt.targets)
			if fmt.Sprint(tt.targets) != fmt.Sprint(tt.want) {
				t.Fatalf("targets %v, want %v", tt.targets, tt.want)
			}
		})
	}
}

func TestProportionalDecideDoesNotAllocate(t *testing.T) {
	p := NewProportional(twoDomains(0.2, 1, 0, 1), 0.7)
	tel := domainTelemetry(1, 999, 30, 1.0)
	targets := []int32{30, 30, 30, 30}
	if allocs := testing.AllocsPerRun(100, func() { p.Decide(t0, tel, targets) }); allocs != 0 {
		t.Fatalf("%.1f allocations per Decide, want 0", allocs)
	}
}
