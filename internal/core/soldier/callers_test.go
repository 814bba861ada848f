package soldier

import (
	"slices"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
)

// TestCallers maps depends_on to each callee's callers: app i of a caller set
// calls app i mod n of a callee set of n apps, from any domain, with the
// caller set's call ratio.
func TestCallers(t *testing.T) {
	cfg := &domains.Config{Domains: []domains.Domain{
		{Name: "payment", AppSets: []domains.AppSet{
			{Name: "checkout", Count: 3, DependsOn: []string{"fraud/scoring", "payment/ledger"}, CallRatio: 2},
			{Name: "ledger", Count: 1},
		}},
		{Name: "fraud", AppSets: []domains.AppSet{
			{Name: "rules", Count: 1},
			{Name: "scoring", Count: 2},
		}},
	}}
	// Ids: payment/checkout-0..2 are 0-2, payment/ledger 3, fraud/rules 4,
	// fraud/scoring-0..1 5-6.
	fraud := Callers(cfg, 1)
	want := [][]Caller{nil, {{0, 2}, {2, 2}}, {{1, 2}}}
	if !slices.EqualFunc(fraud, want, slices.Equal) {
		t.Errorf("fraud's callers %v, want %v (nobody calls rules; checkout-0 and -2 call scoring-0, checkout-1 scoring-1)", fraud, want)
	}
	payment := Callers(cfg, 0)
	if want := [][]Caller{nil, nil, nil, {{0, 2}, {1, 2}, {2, 2}}}; !slices.EqualFunc(payment, want, slices.Equal) {
		t.Errorf("payment's callers %v, want %v (a caller in the same domain)", payment, want)
	}
	rps := []float64{100, 10, 1, 0, 0, 0, 0}
	if got := CallerRPS(fraud[1], func(id int) float64 { return rps[id] }); got != 2*100+2*1 {
		t.Errorf("scoring-0's calls %g, want 202", got)
	}
	if got := CallerRPS(fraud[0], func(id int) float64 { return rps[id] }); got != 0 {
		t.Errorf("rules' calls %g, want 0", got)
	}
}
