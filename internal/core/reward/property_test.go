package reward

import (
	"flag"
	"math"
	"math/rand/v2"
	"testing"
)

var seedFlag = flag.Uint64("seed", 20260101, "seed of the property tests (go test ./internal/core/reward/ -seed N)")

// ranges are the documented bounds of every term, by name.
var ranges = map[string][2]float64{
	"adherence": {-1, 1}, "degradation": {-1, 0}, "cost": {-1, 0}, "churn": {-1, 0},
	"proactivity": {0, 1}, "floor_proximity": {-1, 0}, "energy": {-1, 0},
	"utilisation": {-1, 0}, "alignment": {-1, 1}, "oscillation": {-1, 0}, "cold_start": {-1, 0},
	"sla": {-1, 0}, "errors": {-1, 0}, "cpu": {-1, 0}, "action": {-1, 0}, "downstream": {-1, 0},
}

// gen draws inputs that are mostly plausible, with a share of awkward values:
// zero, negative, huge, infinite and NaN.
type gen struct{ rng *rand.Rand }

func (g gen) float(scale float64) float64 {
	switch p := g.rng.Float64(); {
	case p < 0.70:
		return g.rng.Float64() * scale
	case p < 0.80:
		return 0
	case p < 0.85:
		return -g.rng.Float64() * scale
	case p < 0.90:
		return g.rng.Float64() * scale * 1e12
	case p < 0.93:
		return math.Inf(1)
	case p < 0.95:
		return math.Inf(-1)
	default:
		return math.NaN()
	}
}

func (g gen) count(scale int) int {
	switch p := g.rng.Float64(); {
	case p < 0.8:
		return g.rng.IntN(scale + 1)
	case p < 0.9:
		return -g.rng.IntN(scale + 1)
	default:
		return g.rng.IntN(math.MaxInt32)
	}
}

func (g gen) vector(n int, scale float64) []float64 {
	v := make([]float64, n)
	for k := range v {
		v[k] = g.float(scale)
		if g.rng.Float64() < 0.9 && !(v[k] >= 0 && v[k] <= scale) { // keep most vectors clean
			v[k] = g.rng.Float64() * scale
		}
	}
	return v
}

// weight is a default (half the time) or a random magnitude.
func (g gen) weight(def float64) float64 {
	if g.rng.IntN(2) == 0 {
		return def
	}
	return g.rng.Float64() * 10
}

func (g gen) commander() (CommanderInput, CommanderWeights) {
	in := CommanderInput{
		Cost: g.float(100), ReferenceCost: g.float(100),
		ChurnedNodes: g.count(50), Nodes: g.count(200),
		Proactive: g.rng.IntN(2) == 0, BeatProportional: g.rng.IntN(2) == 0,
		PowerWatts: g.float(1e5), ReferencePowerWatts: g.float(1e5),
	}
	for range g.rng.IntN(8) {
		in.Domains = append(in.Domains, DomainOutcome{
			P99: g.float(0.5), SLO: g.float(0.3), ErrorRate: g.float(0.01), ErrorBudget: g.float(0.002),
			Weight: g.float(2), Share: g.float(1), Floor: g.float(0.3), Demand: g.float(1),
		})
	}
	d := DefaultCommanderWeights()
	w := CommanderWeights{
		Adherence: g.weight(d.Adherence), Degradation: g.weight(d.Degradation), Cost: g.weight(d.Cost),
		Churn: g.weight(d.Churn), Proactivity: g.weight(d.Proactivity), FloorProximity: g.weight(d.FloorProximity),
		FloorMargin: g.float(0.2),
	}
	return in, w
}

func (g gen) soldier() (SoldierInput, SoldierWeights) {
	n := g.rng.IntN(12)
	in := SoldierInput{
		P99: g.float(0.5), SLO: g.float(0.3), ErrorRate: g.float(0.01), ErrorBudget: g.float(0.002),
		BudgetCores: g.float(100), UsedCores: g.float(120),
		Intended: g.vector(n, 20), Actual: g.vector(max(0, n+g.rng.IntN(3)-1), 20), // sometimes one app short or over
		Oscillations: g.count(20), Apps: g.count(20), Ready: g.count(100), Replicas: g.count(100),
	}
	d := DefaultSoldierWeights()
	w := SoldierWeights{
		Adherence: g.weight(d.Adherence), Utilisation: g.weight(d.Utilisation), Alignment: g.weight(d.Alignment),
		Oscillation: g.weight(d.Oscillation), ColdStart: g.weight(d.ColdStart), UtilisationTarget: g.float(1),
	}
	return in, w
}

func (g gen) service() (ServiceInput, ServiceWeights) {
	in := ServiceInput{
		P99: g.float(0.5), SLA: g.float(0.3), ErrorRate: g.float(0.1),
		CPUCores: g.float(16), MaxCPUCores: g.float(16),
		CPUUtilDownstream: g.float(1), DownstreamThreshold: g.float(1),
		Acted: g.rng.IntN(2) == 0, ScaledUp: g.rng.IntN(2) == 0,
	}
	d := DefaultServiceWeights()
	w := ServiceWeights{
		SLA: g.weight(d.SLA), Errors: g.weight(d.Errors), CPU: g.weight(d.CPU),
		Action: g.weight(d.Action), Downstream: g.weight(d.Downstream), ErrorThreshold: g.float(0.05),
	}
	return in, w
}

// checkBreakdown checks that every term is finite and within its range and
// that total is the weighted sum of the terms.
func checkBreakdown(t *testing.T, i int, terms []Term, total float64, in any) {
	t.Helper()
	var sum, abs float64
	for _, tm := range terms {
		r, ok := ranges[tm.Name]
		if !ok {
			t.Fatalf("case %d: term %q has no documented range", i, tm.Name)
		}
		if !(tm.Value >= r[0] && tm.Value <= r[1]) {
			t.Fatalf("case %d: %s = %v outside [%v, %v]\ninput %+v", i, tm.Name, tm.Value, r[0], r[1], in)
		}
		sum += tm.Contribution()
		abs += math.Abs(tm.Contribution())
	}
	if math.IsNaN(total) || math.IsInf(total, 0) {
		t.Fatalf("case %d: total %v\ninput %+v", i, total, in)
	}
	if math.Abs(total-sum) > 1e-12*(1+abs) {
		t.Fatalf("case %d: total %v, weighted sum of terms %v\nterms %+v", i, total, sum, terms)
	}
}

func TestBreakdownProperties(t *testing.T) {
	seed := *seedFlag
	t.Logf("seed %d", seed)
	g := gen{rand.New(rand.NewPCG(seed, seed))}
	buf := make([]Term, 0, 8)
	for i := range 20000 {
		cin, cw := g.commander()
		c := Commander(cin, cw)
		checkBreakdown(t, i, c.AppendTerms(buf[:0]), c.Total, cin)
		if c.DegradedDomain < -1 || c.DegradedDomain >= len(cin.Domains) ||
			c.FloorDomain < -1 || c.FloorDomain >= len(cin.Domains) {
			t.Fatalf("case %d: domain indices %d, %d for %d domains", i, c.DegradedDomain, c.FloorDomain, len(cin.Domains))
		}

		sin, sw := g.soldier()
		s := Soldier(sin, sw)
		checkBreakdown(t, i, s.AppendTerms(buf[:0]), s.Total, sin)

		vin, vw := g.service()
		v := Service(vin, vw)
		checkBreakdown(t, i, v.AppendTerms(buf[:0]), v.Total, vin)
	}
}

func TestAlignmentProperties(t *testing.T) {
	seed := *seedFlag
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	for i := range 5000 {
		n := 1 + rng.IntN(10)
		a, in := make([]float64, n), make([]float64, n)
		for k := range n {
			a[k], in[k] = rng.Float64()*20, 0.1+rng.Float64()*20
		}
		base := Alignment(a, in)
		// Scaling both allocations (replicas vs cores) changes nothing, up to
		// the cosine's epsilon (at most eps / |i|^2 = 1e-7 here).
		c := 0.5 + rng.Float64()*10
		as, is := make([]float64, n), make([]float64, n)
		for k := range n {
			as[k], is[k] = a[k]*c, in[k]*c
		}
		if got := Alignment(as, is); math.Abs(got-base) > 1e-6 {
			t.Fatalf("case %d: scaled by %v: %v, unscaled %v", i, c, got, base)
		}
		// Over and under by the same fraction score the same (symmetric L1
		// factor), up to the cosine's epsilon.
		x := rng.Float64()
		over, under := make([]float64, n), make([]float64, n)
		for k := range n {
			over[k], under[k] = in[k]*(1+x), in[k]*(1-x)
		}
		if o, u := Alignment(over, in), Alignment(under, in); math.Abs(o-u) > 1e-6 || math.Abs(o-(1-x)) > 1e-6 {
			t.Fatalf("case %d: %v over scores %v, under %v, want %v", i, x, o, u, 1-x)
		}
		if base < 0 || base > 1 {
			t.Fatalf("case %d: non-negative allocations score %v", i, base)
		}
	}
}
