package train

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
)

func TestPerturbScalesTrafficAddsOneEventAndLeavesTheBaseAlone(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	base := domains.Scenario{Name: "b", Duration: 3 * time.Hour, Noise: 0.05,
		Traffic: []domains.Traffic{{Domain: "payment", PeakRPS: 1000}, {Domain: "data", PeakRPS: 100}},
		Events:  []domains.Event{{Kind: domains.EventFlashSale, Domain: "payment", Hold: time.Minute, Multiplier: 2}}}
	r := rand.New(rand.NewPCG(11, 12))
	withEvent := 0
	for range 200 {
		sc := base
		Perturb(&sc, cfg, r)
		for i, tr := range sc.Traffic {
			if f := tr.PeakRPS / base.Traffic[i].PeakRPS; f < 0.7 || f > 1.3 {
				t.Fatalf("traffic %s scaled by %v, want [0.7, 1.3]", tr.Domain, f)
			}
		}
		if sc.Noise < 0.03 || sc.Noise > 0.1 {
			t.Fatalf("noise %v, want [0.03, 0.10]", sc.Noise)
		}
		switch n := len(sc.Events) - len(base.Events); n {
		case 0:
		case 1:
			withEvent++
			if e := sc.Events[len(sc.Events)-1]; e.At < 0 || e.At >= sc.Duration {
				t.Fatalf("random event at %s, outside the %s episode", e.At, sc.Duration)
			}
		default:
			t.Fatalf("%d events added, want 0 or 1", n)
		}
	}
	if base.Traffic[0].PeakRPS != 1000 || len(base.Events) != 1 {
		t.Fatalf("the base scenario changed: %+v", base)
	}
	if withEvent < 70 || withEvent > 130 {
		t.Fatalf("%d of 200 episodes got a random event, want about half", withEvent)
	}
}

func TestSingleDomainEnvHasOnlyThatDomainsGroups(t *testing.T) {
	one, err := NewSoldierEnv(smallEnv(t, []string{"fraud"}, false, "small-base.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := NewSoldierEnv(smallEnv(t, nil, false, "small-base.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if one.Spec().Agents != 2 || all.Spec().Agents != 7 {
		t.Fatalf("agents: fraud alone %d (want 2 groups), whole cluster %d (want 7)", one.Spec().Agents, all.Spec().Agents)
	}
}
