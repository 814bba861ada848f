package reward

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

const benchSeed = 7

// benchCommander is a seeded Commander tick with n domains.
func benchCommander(n int) CommanderInput {
	rng := rand.New(rand.NewPCG(benchSeed, uint64(n)))
	in := CommanderInput{Cost: 80, ReferenceCost: 120, ChurnedNodes: 3, Nodes: 400, Proactive: true, BeatProportional: true}
	for range n {
		in.Domains = append(in.Domains, DomainOutcome{
			P99: rng.Float64() * 0.3, SLO: 0.15, ErrorRate: rng.Float64() * 0.002, ErrorBudget: 0.001,
			Weight: 0.5 + rng.Float64(), Share: rng.Float64() * 0.4, Floor: 0.05,
		})
	}
	return in
}

// benchSoldier is a seeded Soldier tick with n apps.
func benchSoldier(n int) SoldierInput {
	rng := rand.New(rand.NewPCG(benchSeed, uint64(n)))
	in := SoldierInput{P99: 0.09, SLO: 0.15, ErrorRate: 0.0004, ErrorBudget: 0.001,
		BudgetCores: float64(n), UsedCores: 0.8 * float64(n),
		Intended: make([]float64, n), Actual: make([]float64, n),
		Oscillations: n / 20, Apps: n, Ready: 9 * n, Replicas: 10 * n}
	for k := range n {
		in.Intended[k] = 1 + rng.Float64()*10
		in.Actual[k] = in.Intended[k] * (0.8 + 0.4*rng.Float64())
	}
	return in
}

func BenchmarkCommander(b *testing.B) {
	w := DefaultCommanderWeights()
	for _, n := range []int{5, 50} {
		in := benchCommander(n)
		b.Run(fmt.Sprintf("domains=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Commander(in, w)
			}
		})
	}
}

func BenchmarkSoldier(b *testing.B) {
	w := DefaultSoldierWeights()
	for _, n := range []int{10, 1000} {
		in := benchSoldier(n)
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Soldier(in, w)
			}
		})
	}
}

func BenchmarkService(b *testing.B) {
	w := DefaultServiceWeights()
	in := ServiceInput{P99: 0.12, SLA: 0.1, ErrorRate: 0.02, CPUCores: 3, MaxCPUCores: 8,
		CPUUtilDownstream: 0.9, DownstreamThreshold: 0.8, Acted: true, ScaledUp: true}
	b.ReportAllocs()
	for b.Loop() {
		Service(in, w)
	}
}

// TestNoAllocs pins what the benchmarks show: scoring a step allocates
// nothing, nor does AppendTerms into a buffer with room.
func TestNoAllocs(t *testing.T) {
	cin, cw := benchCommander(50), DefaultCommanderWeights()
	sin, sw := benchSoldier(100), DefaultSoldierWeights()
	vin, vw := ServiceInput{P99: 0.12, SLA: 0.1, Acted: true}, DefaultServiceWeights()
	buf := make([]Term, 0, 8)
	for name, f := range map[string]func(){
		"Commander": func() { buf = Commander(cin, cw).AppendTerms(buf[:0]) },
		"Soldier":   func() { buf = Soldier(sin, sw).AppendTerms(buf[:0]) },
		"Service":   func() { buf = Service(vin, vw).AppendTerms(buf[:0]) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
	}
}
