package baseline

import (
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/offline/sim"
)

func TestHPAPriorityIsTheHPAInAWorldWithPriorityClasses(t *testing.T) {
	cfg, sc, traces := smallSample(t)
	t.Run("World sets PriorityClasses on a copy, for hpa-priority only", func(t *testing.T) {
		w := World(HPAPriority, cfg)
		if !w.Cluster.PriorityClasses || cfg.Cluster.PriorityClasses {
			t.Fatalf("World: copy %v, original %v; want true on the copy only", w.Cluster.PriorityClasses, cfg.Cluster.PriorityClasses)
		}
		for _, name := range Names {
			if name != HPAPriority && World(name, cfg) != cfg {
				t.Errorf("World(%q) is not the config itself", name)
			}
		}
	})
	t.Run("hpa-priority refuses a simulation without PriorityClasses", func(t *testing.T) {
		s, err := sim.New(cfg, sc, traces)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(HPAPriority, cfg, s); err == nil || !strings.Contains(err.Error(), "baseline.World") {
			t.Fatalf("New(hpa-priority) on a world without PriorityClasses: %v, want an error naming baseline.World", err)
		}
	})
}

// On the seed's postmortem (a flash sale on the checkout path while the
// pool is contested) the same HPAs with PriorityClasses make P0 wait less,
// by preempting the lower tiers, P3 most; without them nothing is
// preempted and P3 replicas are placed while P0 ones wait.
func TestHPAPriorityProtectsP0AtTheLowerTiersExpense(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the 1,550-app seed-scale postmortem twice")
	}
	const cfgPath, scPath = "../../../examples/seedscale.hcl", "../../../examples/scenarios/seed/eval/postmortem.hcl"
	hpa, prio := runWorld(t, cfgPath, scPath, "hpa"), runWorld(t, cfgPath, scPath, HPAPriority)
	t.Logf("hpa: P0 pending %.1f pod-hours, %d inversions (%d P3 while P0 waits), %d preemptions; hpa-priority: %.1f, %d (%d), %d (P3 %d)",
		hpa.Tiers[0].PendingPodHours, hpa.PriorityInversions, hpa.P3WhileP0Waits, hpa.Preemptions,
		prio.Tiers[0].PendingPodHours, prio.PriorityInversions, prio.P3WhileP0Waits, prio.Preemptions, prio.Tiers[len(prio.Tiers)-1].Preempted)
	if hpa.Preemptions != 0 || hpa.P3WhileP0Waits == 0 {
		t.Errorf("hpa: %d preemptions, %d P3 replicas placed while P0 waited; want none and some (arrival order)", hpa.Preemptions, hpa.P3WhileP0Waits)
	}
	if prio.Preemptions == 0 || prio.Tiers[len(prio.Tiers)-1].Preempted == 0 {
		t.Errorf("hpa-priority: %d preemptions, %d of P3; want the lowest tier preempted", prio.Preemptions, prio.Tiers[len(prio.Tiers)-1].Preempted)
	}
	if prio.Tiers[0].PendingPodHours >= hpa.Tiers[0].PendingPodHours/2 {
		t.Errorf("P0 pending pod-hours %.1f with PriorityClasses, %.1f without; want at most half", prio.Tiers[0].PendingPodHours, hpa.Tiers[0].PendingPodHours)
	}
	if prio.PriorityInversions >= hpa.PriorityInversions {
		t.Errorf("priority inversions %d with PriorityClasses, %d without; want fewer", prio.PriorityInversions, hpa.PriorityInversions)
	}
}
