package reward

import (
	"math"
	"strings"
	"testing"
)

// term returns the value of the named term.
func term(t *testing.T, terms []Term, name string) float64 {
	t.Helper()
	for _, tm := range terms {
		if tm.Name == name {
			return tm.Value
		}
	}
	t.Fatalf("no term %q in %v", name, terms)
	return 0
}

// ok is a domain at half its SLO, no errors, well above its floor, asking
// for more than its share.
func ok() DomainOutcome {
	return DomainOutcome{P99: 0.075, SLO: 0.150, ErrorRate: 0, ErrorBudget: 0.001, Weight: 1, Share: 0.5, Floor: 0.1, Demand: 0.6}
}

// with returns ok() changed by f.
func with(f func(*DomainOutcome)) DomainOutcome {
	d := ok()
	f(&d)
	return d
}

func TestCommanderTerms(t *testing.T) {
	w := DefaultCommanderWeights()
	for _, tc := range []struct {
		name   string
		in     CommanderInput
		term   string
		want   float64
		domain int // DegradedDomain or FloorDomain when term is one of theirs
	}{
		{"adherence is the mean over domains", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 0 }),         // 1
			with(func(d *DomainOutcome) { d.P99 = 0.3 }),       // -1
			with(func(d *DomainOutcome) { d.P99 = 0.15 * .5 }), // sqrt(0.5)
		}}, "adherence", math.Sqrt(0.5) / 3, 0},
		{"adherence ignores errors", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 0; d.ErrorRate = 0.5 }),
		}}, "adherence", 1, 0},
		{"no domains score 0 adherence", CommanderInput{}, "adherence", 0, 0},
		{"no latency SLO reads as met", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.SLO = 0; d.P99 = 9 }),
		}}, "adherence", 1, 0},

		{"within SLO does not degrade", CommanderInput{Domains: []DomainOutcome{ok(), ok()}}, "degradation", 0, -1},
		{"degradation takes the worst weighted domain", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 0.21; d.Weight = 0.5 }), // 0.5 x 0.4
			with(func(d *DomainOutcome) { d.P99 = 0.18; d.Weight = 1 }),   // 1 x 0.2
			with(func(d *DomainOutcome) { d.P99 = 0.195; d.Weight = 1 }),  // 1 x 0.3
		}}, "degradation", -0.3, 2},
		{"an error budget overrun degrades", CommanderInput{Domains: []DomainOutcome{
			ok(), with(func(d *DomainOutcome) { d.ErrorRate = 0.0015 }),
		}}, "degradation", -0.5, 1},
		{"degradation clips at 1", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 0.15 * 1.6; d.Weight = 2 }),
		}}, "degradation", -1, 0},
		{"a zero weight does not degrade", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 1; d.Weight = 0 }),
		}}, "degradation", 0, -1},
		{"a ceiling-bound domain does not degrade", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 1; d.CeilingBound = true }),
			with(func(d *DomainOutcome) { d.P99 = 0.18 }), // 1 x 0.2
		}}, "degradation", -0.2, 1},
		{"a ceiling-bound domain is left out of adherence", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 1; d.CeilingBound = true }),
			with(func(d *DomainOutcome) { d.P99 = 0 }),   // 1
			with(func(d *DomainOutcome) { d.P99 = 0.3 }), // -1
		}}, "adherence", 0, 0},
		{"only ceiling-bound domains score 0 adherence", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 1; d.CeilingBound = true }),
		}}, "adherence", 0, 0},

		{"cost is relative to the reference", CommanderInput{Cost: 30, ReferenceCost: 120}, "cost", -0.25, 0},
		{"cost clips at the reference", CommanderInput{Cost: 300, ReferenceCost: 120}, "cost", -1, 0},
		{"no reference disables cost", CommanderInput{Cost: 300}, "cost", 0, 0},

		{"churn is normalised by nodes", CommanderInput{ChurnedNodes: 3, Nodes: 60}, "churn", -0.05, 0},
		{"churn clips at 1", CommanderInput{ChurnedNodes: 80, Nodes: 60}, "churn", -1, 0},
		{"no nodes read as one", CommanderInput{ChurnedNodes: 1}, "churn", -1, 0},

		{"proactivity needs both gates", CommanderInput{Proactive: true, BeatProportional: true}, "proactivity", 1, 0},
		{"acting early without beating proportional earns nothing", CommanderInput{Proactive: true}, "proactivity", 0, 0},
		{"beating proportional without acting early earns nothing", CommanderInput{BeatProportional: true}, "proactivity", 0, 0},

		{"at the floor scores -1", CommanderInput{Domains: []DomainOutcome{
			ok(), with(func(d *DomainOutcome) { d.Share = 0.1 }),
		}}, "floor_proximity", -1, 1},
		{"below the floor clips at -1", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.Share = 0.05 }),
		}}, "floor_proximity", -1, 0},
		{"half the margin above the floor scores -0.5", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.Share = 0.125 }), ok(),
		}}, "floor_proximity", -0.5, 0},
		{"the closest domain sets floor proximity", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.Share = 0.14 }),
			with(func(d *DomainOutcome) { d.Share = 0.13 }),
		}}, "floor_proximity", -0.4, 1},
		{"beyond the margin scores 0", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.Share = 0.16 }),
		}}, "floor_proximity", 0, -1},
		{"a domain whose demand fits its share does not count at its floor", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.Share, d.Demand = 0.1, 0.1 }),
			with(func(d *DomainOutcome) { d.Share, d.Demand = 0.14, 0.2 }),
		}}, "floor_proximity", -0.2, 1},
		{"a domain whose demand is unknown (NaN) counts", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.Share, d.Demand = 0.1, math.NaN() }),
		}}, "floor_proximity", -1, 0},
		{"a domain without a floor does not count", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.Share = 0; d.Floor = 0 }),
		}}, "floor_proximity", 0, -1},

		{"a NaN latency scores its domain the worst adherence", CommanderInput{Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 0 }), with(func(d *DomainOutcome) { d.P99 = math.NaN() }),
		}}, "adherence", 0, 0},
		{"a NaN latency degrades fully", CommanderInput{Domains: []DomainOutcome{
			ok(), with(func(d *DomainOutcome) { d.P99 = math.NaN() }), with(func(d *DomainOutcome) { d.P99 = 0.2 }),
		}}, "degradation", -1, 1},
		{"a NaN cost scores the worst", CommanderInput{Cost: math.NaN(), ReferenceCost: 1}, "cost", -1, 0},
		{"a NaN reference scores the worst", CommanderInput{Cost: 1, ReferenceCost: math.NaN()}, "cost", -1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Commander(tc.in, w)
			if got := term(t, b.Terms(), tc.term); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("%s = %v, want %v", tc.term, got, tc.want)
			}
			switch tc.term {
			case "degradation":
				if b.DegradedDomain != tc.domain {
					t.Errorf("DegradedDomain = %d, want %d", b.DegradedDomain, tc.domain)
				}
			case "floor_proximity":
				if b.FloorDomain != tc.domain {
					t.Errorf("FloorDomain = %d, want %d", b.FloorDomain, tc.domain)
				}
			}
		})
	}
}

func TestCommanderTotal(t *testing.T) {
	in := CommanderInput{
		Domains: []DomainOutcome{
			with(func(d *DomainOutcome) { d.P99 = 0.045 }),                // r = 0.3
			with(func(d *DomainOutcome) { d.P99 = 0.18; d.Share = 0.12 }), // r = 1.2
		},
		Cost: 40, ReferenceCost: 100, ChurnedNodes: 2, Nodes: 40, Proactive: true, BeatProportional: true,
	}
	b := Commander(in, DefaultCommanderWeights())
	a := (math.Sqrt(0.7) - 0.2) / 2
	// R = 1 A + 1 D + 0.5 C + 0.2 N + 0.2 P + 0.1 F
	want := 1*a +
		1*-0.2 +
		0.5*-0.4 +
		0.2*-0.05 +
		0.2*1 +
		0.1*-0.6
	if math.Abs(b.Total-want) > 1e-12 {
		t.Errorf("Total = %v, want %v (%+v)", b.Total, want, b)
	}
}

func TestCommanderTermOrder(t *testing.T) {
	var names []string
	for _, tm := range Commander(CommanderInput{}, DefaultCommanderWeights()).Terms() {
		names = append(names, tm.Name)
	}
	if got, want := strings.Join(names, ","), "adherence,degradation,cost,churn,proactivity,floor_proximity,energy"; got != want {
		t.Errorf("terms %s, want %s", got, want)
	}
}

func TestUnpenalisedTermsArePositiveZero(t *testing.T) {
	var terms []Term
	terms = Commander(CommanderInput{Domains: []DomainOutcome{ok()}, ReferenceCost: 1, Nodes: 1}, DefaultCommanderWeights()).AppendTerms(terms)
	terms = Soldier(calm(), DefaultSoldierWeights()).AppendTerms(terms)
	terms = Service(quiet(), DefaultServiceWeights()).AppendTerms(terms)
	for _, tm := range terms {
		if tm.Value == 0 && math.Signbit(tm.Value) {
			t.Errorf("%s is -0", tm.Name)
		}
	}
}

func TestEnergyPenalisesPowerOverTheReference(t *testing.T) {
	for _, tc := range []struct {
		name             string
		power, reference float64
		want             float64
	}{
		{"half the full-load pool", 50e3, 100e3, -0.5},
		{"at or beyond the reference clips at -1", 150e3, 100e3, -1},
		{"no reference: no term", 50e3, 0, 0},
		{"a NaN power scores the worst", math.NaN(), 100e3, -1},
		{"a negative power reads as 0", -5, 100e3, 0},
	} {
		w := CommanderWeights{Energy: 0.3}
		b := Commander(CommanderInput{PowerWatts: tc.power, ReferencePowerWatts: tc.reference}, w)
		if b.Energy != tc.want || math.Abs(b.Total-0.3*tc.want) > 1e-12 {
			t.Errorf("%s: energy %v total %v, want %v and %v", tc.name, b.Energy, b.Total, tc.want, 0.3*tc.want)
		}
	}
	if DefaultCommanderWeights().Energy != 0 {
		t.Error("the energy weight is on by default; docs/configuration.md says 0")
	}
}
