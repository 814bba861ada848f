package reward

import (
	"math"
	"strings"
	"testing"
)

// calm is a Soldier tick at half its SLO, on its utilisation target, that
// followed its directive exactly with every replica ready.
func calm() SoldierInput {
	return SoldierInput{
		P99: 0.05, SLO: 0.1, ErrorRate: 0, ErrorBudget: 0.001,
		BudgetCores: 100, UsedCores: 85,
		Intended: []float64{40, 30, 15}, Actual: []float64{40, 30, 15},
		Apps: 3, Ready: 170, Replicas: 170,
	}
}

func soldierWith(f func(*SoldierInput)) SoldierInput {
	in := calm()
	f(&in)
	return in
}

func TestSoldierTerms(t *testing.T) {
	w := DefaultSoldierWeights()
	for _, tc := range []struct {
		name string
		in   SoldierInput
		term string
		want float64
	}{
		{"half the SLO scores sqrt(0.5)", calm(), "adherence", math.Sqrt(0.5)},
		{"the worse of latency and errors sets adherence", soldierWith(func(in *SoldierInput) { in.ErrorRate = 0.0013 }), "adherence", -0.3},
		{"errors within budget leave latency in charge", soldierWith(func(in *SoldierInput) { in.ErrorRate = 0.0002 }), "adherence", math.Sqrt(0.5)},
		{"no objectives read as met", soldierWith(func(in *SoldierInput) { in.SLO, in.ErrorBudget = 0, 0 }), "adherence", 1},

		{"on the utilisation target scores 0", calm(), "utilisation", 0},
		{"idle budget scores -1", soldierWith(func(in *SoldierInput) { in.UsedCores = 0 }), "utilisation", -1},
		{"a full budget is a small penalty", soldierWith(func(in *SoldierInput) { in.UsedCores = 100 }), "utilisation", -(0.15 / 0.85) * (0.15 / 0.85)},
		{"no budget, nothing used scores 0", soldierWith(func(in *SoldierInput) { in.BudgetCores, in.UsedCores = 0, 0 }), "utilisation", 0},
		{"no budget, something used scores -1", soldierWith(func(in *SoldierInput) { in.BudgetCores = 0 }), "utilisation", -1},
		// A NaN budget is a broken input, not "no budget": it scores the
		// worst even with nothing used, never the 0 of an idle, unbudgeted
		// Soldier.
		{"a NaN budget, nothing used scores -1", soldierWith(func(in *SoldierInput) { in.BudgetCores, in.UsedCores = math.NaN(), 0 }), "utilisation", -1},
		{"a NaN budget, something used scores -1", soldierWith(func(in *SoldierInput) { in.BudgetCores = math.NaN() }), "utilisation", -1},

		{"a followed directive aligns fully", calm(), "alignment", 1},
		{"half the directive aligns half", soldierWith(func(in *SoldierInput) { in.Actual = []float64{20, 15, 7.5} }), "alignment", 0.5},
		{"10% over the directive aligns 0.9", soldierWith(func(in *SoldierInput) { in.Actual = []float64{44, 33, 16.5} }), "alignment", 0.9},

		{"no oscillation scores 0", calm(), "oscillation", 0},
		{"oscillation is normalised by apps", soldierWith(func(in *SoldierInput) { in.Oscillations = 1 }), "oscillation", -1.0 / 3},
		{"oscillation clips at 1", soldierWith(func(in *SoldierInput) { in.Oscillations = 9 }), "oscillation", -1},

		{"all ready scores 0", calm(), "cold_start", 0},
		{"cold start is the unready share", soldierWith(func(in *SoldierInput) { in.Ready = 85 }), "cold_start", -0.5},
		{"no replicas score 0", soldierWith(func(in *SoldierInput) { in.Ready, in.Replicas = 0, 0 }), "cold_start", 0},
		{"more ready than replicas clips at 0", soldierWith(func(in *SoldierInput) { in.Ready = 200 }), "cold_start", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := term(t, Soldier(tc.in, w).Terms(), tc.term); math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("%s = %v, want %v", tc.term, got, tc.want)
			}
		})
	}
}

func TestSoldierUtilisationTarget(t *testing.T) {
	w := DefaultSoldierWeights()
	w.UtilisationTarget = 0.6
	in := soldierWith(func(in *SoldierInput) { in.UsedCores = 60 })
	if got := Soldier(in, w).Utilisation; got != 0 {
		t.Errorf("utilisation on a 0.6 target = %v, want 0", got)
	}
	if got := Soldier(calm(), w).Utilisation; got >= 0 {
		t.Errorf("0.85 on a 0.6 target = %v, want < 0", got)
	}
}

func TestSoldierTotal(t *testing.T) {
	in := soldierWith(func(in *SoldierInput) {
		in.P99 = 0.12 // r = 1.2
		in.UsedCores = 42.5
		in.Actual = []float64{20, 15, 7.5}
		in.Oscillations = 1
		in.Ready = 136
	})
	b := Soldier(in, DefaultSoldierWeights())
	// R = 1 A + 0.5 U + 0.5 L + 0.2 O + 0.1 S
	want := 1*-0.2 +
		0.5*-0.25 +
		0.5*0.5 +
		0.2*(-1.0/3) +
		0.1*-0.2
	if math.Abs(b.Total-want) > 1e-6 {
		t.Errorf("Total = %v, want %v (%+v)", b.Total, want, b)
	}
}

func TestSoldierTermOrder(t *testing.T) {
	var names []string
	for _, tm := range Soldier(calm(), DefaultSoldierWeights()).Terms() {
		names = append(names, tm.Name)
	}
	if got, want := strings.Join(names, ","), "adherence,utilisation,alignment,oscillation,cold_start"; got != want {
		t.Errorf("terms %s, want %s", got, want)
	}
}
