package simcluster_test

import (
	"math"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// starveP0 is a sabotaged stand-in for a learned Soldier policy: on a P0
// domain it proposes share of the replicas each app's demand needs (never
// below the app's minimum; share 0 is the minimum); elsewhere it is the
// Proportional policy.
type starveP0 struct {
	p0    bool
	share float64
	base  soldier.SqrtStaffing
}

func (s *starveP0) Decide(in soldier.Input, out []int32) string {
	reason := s.base.Decide(in, out)
	if !s.p0 {
		return reason
	}
	for i := range in.Apps {
		a, o := &in.Apps[i], &in.Obs.Apps[i]
		need := o.RPS / (a.Capacity * in.TargetUtil)
		out[i] = min(a.Max, max(a.Min, int32(math.Ceil(s.share*need))))
	}
	return "sabotaged: P0 starved"
}

// switchLog keeps the automatic fallback's switches of one domain.
type switchLog struct {
	domain string
	to     map[string][]string
}

func (l switchLog) Record(r soldier.Record) {
	if r.Switch.Reason != "" {
		l.to[l.domain] = append(l.to[l.domain], r.Switch.Reason+" at "+r.At.Format("15:04")+" "+r.Switch.Detail)
	}
}

// p0Breach is the breach app-minutes of the P0 domains of m.
func p0Breach(m sim.Metrics) float64 {
	b := 0.0
	for _, d := range m.Domains {
		if d.Priority == 0 {
			b += d.BreachAppMinutes
		}
	}
	return b
}

// TestSabotagedPolicyIsContainedByTheSafetyNet runs a policy that starves P0
// on a day of the small example with the rollback ladder and the automatic
// fallback on: P0 breach app-minutes stay within 1.2x of the HPA baseline
// alone on the same traffic and seed. Without the ladder and the fallback the
// same policy is far worse, so the safety net is what holds.
//
// The pods are Guaranteed (cpu_limit_ratio 1), the HPA the bound was set
// against: one that sees usage capped at the request. With the default 2x
// limit the HPA sees bursts and breaches less (25.5 P0 app-minutes against
// 63.8), and the guarded policy's 49.7 is 1.95x that.
func TestSabotagedPolicyIsContainedByTheSafetyNet(t *testing.T) {
	cfg, err := config.LoadFile("../../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for di := range cfg.Domains {
		for si := range cfg.Domains[di].AppSets {
			cfg.Domains[di].AppSets[si].CPULimitRatio = 1
		}
	}
	sc, err := config.LoadScenarioFile("../../../examples/scenarios/small-day.hcl", cfg)
	if err != nil {
		t.Fatal(err)
	}
	traces, err := trace.Load(sc)
	if err != nil {
		t.Fatal(err)
	}
	newSim := func() *sim.Sim {
		s, err := sim.New(cfg, sc, traces)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	switches := map[string][]string{} // domain -> reasons, in order
	sabotaged := func(share float64, ladder, fallback bool) sim.Metrics {
		clear(switches)
		rec := func(domain string) soldier.Recorder { return switchLog{domain, switches} }
		p, err := simcluster.NewPolicy(cfg, nil, rec,
			simcluster.WithSoldiers(func(scfg soldier.Config) (soldier.Policy, error) {
				return &starveP0{p0: cfg.Domains[cfg.Domain(scfg.Domain)].Priority == 0, share: share}, nil
			}),
			simcluster.WithSoldierConfig(func(scfg *soldier.Config) {
				if !ladder {
					scfg.Ladder = soldier.LadderConfig{}
				}
				if !fallback {
					scfg.Fallback = soldier.FallbackConfig{}
				}
			}))
		if err != nil {
			t.Fatal(err)
		}
		m := newSim().Run(p)
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
		return m
	}
	s := newSim()
	hpa, err := baseline.New("hpa", cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	ref := p0Breach(s.Run(hpa))
	for _, tc := range []struct {
		name  string
		share float64
	}{{"P0 at 30% of demand", 0.3}} {
		t.Run(tc.name, func(t *testing.T) {
			guarded := p0Breach(sabotaged(tc.share, true, true))
			for _, d := range cfg.Domains {
				// The starved P0 domains go to the baseline on the slo rule (they may
				// be handed back when 30% of demand is the apps' minimum anyway, at
				// night); the others, where the policy is the baseline, never switch.
				got := switches[d.Name]
				if (d.Priority == 0) != (len(got) > 0) || len(got) > 0 && !strings.HasPrefix(got[0], soldier.FallbackSLO+" ") {
					t.Errorf("%s (P%d): automatic fallback switches %q", d.Name, d.Priority, got)
				}
				t.Logf("%s (P%d) switches: %q", d.Name, d.Priority, got)
			}
			unguarded := p0Breach(sabotaged(tc.share, false, false))
			t.Logf("P0 breach app-minutes: hpa %.1f, sabotaged with ladder and fallback %.1f (%.2fx), without %.1f (%.2fx)",
				ref, guarded, guarded/ref, unguarded, unguarded/ref)
			if guarded > 1.2*ref {
				t.Errorf("with the ladder and the fallback, P0 breach %.1f app-minutes is over 1.2x the HPA's %.1f", guarded, ref)
			}
			if unguarded < 5*ref {
				t.Errorf("without the ladder and the fallback, P0 breach %.1f app-minutes is under 5x the HPA's %.1f: the sabotage does not bite", unguarded, ref)
			}
		})
	}
}
