package soldier

import "testing"

// The sizing rules of Desired, by name. The app serves 100 rps per replica
// at full utilisation with 4 requests at once (4 servers per replica).
func TestDesiredSizesByStaffingWithinTheTargetAndMaxUtilisation(t *testing.T) {
	app := App{CPU: 1, Min: 1, Max: 10000, Capacity: 100, Concurrency: 4}
	in := Input{TargetUtil: 0.7, MaxUtil: 0.85, Safety: 3, SLO: 0.4}
	tests := []struct {
		name  string
		obs   AppObservation
		want  int32
		risky bool
	}{
		// 7 busy replicas, 28 servers: 28 + 3 sqrt(28) = 43.9 servers is more
		// than the target's 40, so the target utilisation sizes it: 10.
		{"a small app is sized at the target utilisation, as the HPA sizes it",
			AppObservation{RPS: 700, P99: 0.1, Ready: 10, CPUUtil: 0.7}, 10, false},
		// 100 busy replicas, 400 servers: 400 + 60 = 460 servers, 115
		// replicas (87% busy) is under the target's 143 but above MaxUtil's
		// 118: 118.
		{"a large app runs hotter, but not above the max utilisation",
			AppObservation{RPS: 10000, P99: 0.1, Ready: 143, CPUUtil: 0.7}, 118, false},
		// 1,000 busy replicas, 4,000 servers: 4,000 + 190 = 4,190 servers
		// would be 95% busy; MaxUtil caps it at 1,177.
		{"the max utilisation caps a very large app",
			AppObservation{RPS: 100000, P99: 0.1, Ready: 1200, CPUUtil: 0.83}, 1177, false},
		// Ready x CPU utilisation x capacity = 10 x 1 x 100 = 1,000 rps of work
		// against 700 arriving: the service slowed, size for the work.
		{"a slowed service is sized from its CPU, not its arrivals",
			AppObservation{RPS: 700, P99: 0.1, Ready: 10, CPUUtil: 1}, 15, false},
		{"an app at risk keeps its ready replicas but is not boosted",
			AppObservation{RPS: 700, P99: 0.5, Ready: 12, CPUUtil: 0.58}, 12, true},
		{"an app at risk with replicas on their way asks for its load only",
			AppObservation{RPS: 1400, P99: 0.9, Ready: 10, Starting: 10, Pending: 5, CPUUtil: 1}, 20, true},
		{"erroring is at risk",
			AppObservation{RPS: 700, P99: 0.1, ErrorRate: 0.05, Ready: 10, CPUUtil: 0.7}, 10, true},
		{"no load is the minimum", AppObservation{}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, risky := Desired(&app, &tt.obs, &in)
			if got != tt.want || risky != tt.risky {
				t.Errorf("Desired = %d (risky %v), want %d (risky %v)", got, risky, tt.want, tt.risky)
			}
		})
	}
	t.Run("bounds clamp", func(t *testing.T) {
		small := app
		small.Min, small.Max = 3, 50
		if got, _ := Desired(&small, &AppObservation{RPS: 1}, &in); got != 3 {
			t.Errorf("minimum: %d, want 3", got)
		}
		if got, _ := Desired(&small, &AppObservation{RPS: 100000}, &in); got != 50 {
			t.Errorf("maximum: %d, want 50", got)
		}
	})
	t.Run("zero MaxUtil and Safety size at the target utilisation", func(t *testing.T) {
		plain := Input{TargetUtil: 0.7, SLO: 0.4}
		if got, _ := Desired(&app, &AppObservation{RPS: 10000, Ready: 143}, &plain); got != 143 {
			t.Errorf("%d replicas, want 143 (10,000 rps / 70 rps per replica)", got)
		}
	})
}

func TestSLOStatus(t *testing.T) {
	const slo, budget = 0.2, 0.005
	apps := []AppObservation{
		{P99: 0.1},                            // healthy
		{P99: 0.17},                           // at risk: over 80% of the SLO
		{P99: 0.25},                           // breaching: over the SLO
		{P99: 0.05, ErrorRate: 0.008},         // breaching: errors over the budget, under 1%
		{P99: 0.05, ErrorRate: 0.02},          // breaching: errors over the budget and 1%
		{P99: 0.9, ErrorRate: 1, Blind: true}, // blind: stand-in figures count in neither
	}
	tests := []struct {
		name               string
		slo, budget        float64
		atRisk, breachingN int
	}{
		{"p99 against the SLO, errors against the budget", slo, budget, 4, 3},
		{"no SLO: only errors count", 0, budget, 2, 2},
		{"a wide error budget: errors over 1% are still at risk", slo, 0.5, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			atRisk, breaching := SLOStatus(&Observation{Apps: apps}, tt.slo, tt.budget)
			if atRisk != tt.atRisk || breaching != tt.breachingN {
				t.Errorf("at risk %d, breaching %d; want %d, %d", atRisk, breaching, tt.atRisk, tt.breachingN)
			}
		})
	}
}
