package reward_test

import (
	"fmt"

	"github.com/regimentd/regiment/internal/core/reward"
)

// A Commander tick scored and flattened into the named values a step stores.
func ExampleCommander() {
	in := reward.CommanderInput{
		Domains: []reward.DomainOutcome{
			{P99: 0.075, SLO: 0.150, ErrorBudget: 0.001, Weight: 1, Share: 0.40, Floor: 0.20, Demand: 0.35},
			{P99: 0.240, SLO: 0.200, ErrorBudget: 0.001, Weight: 0.5, Share: 0.22, Floor: 0.20, Demand: 0.30},
		},
		Cost: 30, ReferenceCost: 120,
		ChurnedNodes: 2, Nodes: 80,
	}
	b := reward.Commander(in, reward.DefaultCommanderWeights())

	stored := map[string]float64{reward.TotalName: b.Total}
	for _, t := range b.Terms() {
		stored[t.Name] = t.Value
		fmt.Printf("%-15s %6.3f x %.1f = %6.3f\n", t.Name, t.Value, t.Weight, t.Contribution())
	}
	fmt.Printf("%-15s %6.3f (%d terms stored)\n", reward.TotalName, b.Total, len(stored)-1)
	fmt.Println("degraded domain", b.DegradedDomain, "closest to its floor", b.FloorDomain)
	// Output:
	// adherence        0.254 x 1.0 =  0.254
	// degradation     -0.100 x 1.0 = -0.100
	// cost            -0.250 x 0.5 = -0.125
	// churn           -0.025 x 0.2 = -0.005
	// proactivity      0.000 x 0.2 =  0.000
	// floor_proximity -0.600 x 0.1 = -0.060
	// energy           0.000 x 0.0 =  0.000
	// total           -0.036 (7 terms stored)
	// degraded domain 1 closest to its floor 1
}
