package live

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/simtest"
)

// world is the small example on a training day, an hour long.
func world(t *testing.T, recommend ...string) (*domains.Config, *Cluster) {
	t.Helper()
	cfg, s := simtest.WorldFor(t, "../../../examples/small.hcl", "../../../examples/scenarios/train/small-day.hcl", 0)
	for _, name := range recommend {
		cfg.Domains[cfg.Domain(name)].Mode = domains.ModeRecommend
	}
	return cfg, New(s, cfg)
}

// appsOf are domain di's apps, in its order.
func appsOf(cfg *domains.Config, di int) []domains.App {
	var out []domains.App
	for _, a := range cfg.Apps() {
		if a.Domain == di {
			out = append(out, a)
		}
	}
	return out
}

func observe(t *testing.T, c *Cluster, cfg *domains.Config, di int) *soldier.Observation {
	t.Helper()
	obs := &soldier.Observation{Apps: make([]soldier.AppObservation, len(appsOf(cfg, di)))}
	if err := c.Domain(di).Observe(context.Background(), obs); err != nil {
		t.Fatal(err)
	}
	return obs
}

// A domain's Observer reads the simulation's lagged telemetry of its own
// apps, the targets in force now, and the calls its callers send its apps.
func TestObserveReadsTheDomainsTelemetry(t *testing.T) {
	cfg, c := world(t)
	for range 30 {
		c.Step()
	}
	for di := range cfg.Domains {
		obs := observe(t, c, cfg, di)
		c.Sim(func(s *sim.Sim) {
			tel, targets := s.Telemetry(), s.Targets()
			for i, a := range appsOf(cfg, di) {
				want, got := tel.Apps[a.ID], obs.Apps[i]
				if got.RPS != want.RPS || got.P99 != want.P99 || got.CPUUtil != want.CPURequestUtil || got.Ready != want.Ready ||
					got.Replicas != targets[a.ID] {
					t.Errorf("%s: observed %+v, telemetry %+v, target %d", a.Name, got, want, targets[a.ID])
				}
			}
		})
	}
	// fraud's apps are called by payment's checkout; payment's by nobody.
	fraud, payment := observe(t, c, cfg, cfg.Domain("fraud")), observe(t, c, cfg, cfg.Domain("payment"))
	if fraud.Apps[0].CallerRPS <= 0 || payment.Apps[0].CallerRPS != 0 {
		t.Errorf("caller rates: fraud's first app %v, payment's %v; want the checkout's calls and none", fraud.Apps[0].CallerRPS, payment.Apps[0].CallerRPS)
	}
	short := &soldier.Observation{Apps: make([]soldier.AppObservation, 1)}
	if err := c.Domain(0).Observe(context.Background(), short); err == nil || !strings.Contains(err.Error(), "has 1 apps") {
		t.Errorf("an observation of the wrong size: %v", err)
	}
}

// NodeCounts counts the simulated pool's nodes as the telemetry the
// policies see shows them: ready, and provisioning or queued.
func TestNodeCountsReadsThePoolsTelemetry(t *testing.T) {
	_, c := world(t)
	for range 30 {
		c.Step()
	}
	ready, pending, ok := c.NodeCounts()
	c.Sim(func(s *sim.Sim) {
		cl := s.Telemetry().Cluster
		if !ok || ready == 0 || ready != int(cl.Nodes) || pending != int(cl.ProvisioningNodes+cl.QueuedNodes) {
			t.Errorf("NodeCounts = %d, %d, %v; the telemetry shows %d ready, %d provisioning, %d queued",
				ready, pending, ok, cl.Nodes, cl.ProvisioningNodes, cl.QueuedNodes)
		}
	})
}

// Apply writes the targets of its own domain's apps, all of them or, when
// one change names an app the domain does not have, none.
func TestApplyWritesItsDomainOrNothing(t *testing.T) {
	cfg, c := world(t)
	di := cfg.Domain("fraud")
	first := appsOf(cfg, di)[0].ID
	var before []int32
	c.Sim(func(s *sim.Sim) { before = slices.Clone(s.Targets()) })
	if err := c.Domain(di).Apply(context.Background(), []soldier.Change{{App: 0, Replicas: 9}, {App: 1, Replicas: 7}}); err != nil {
		t.Fatal(err)
	}
	c.Sim(func(s *sim.Sim) {
		after := s.Targets()
		for id := range after {
			want := before[id]
			switch id {
			case first:
				want = 9
			case first + 1:
				want = 7
			}
			if after[id] != want {
				t.Errorf("app %d: target %d, want %d", id, after[id], want)
			}
		}
	})
	bad := []soldier.Change{{App: 0, Replicas: 3}, {App: len(appsOf(cfg, di)), Replicas: 3}}
	if err := c.Domain(di).Apply(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "nothing applied") {
		t.Errorf("a change to an app the domain does not have: %v", err)
	}
	c.Sim(func(s *sim.Sim) {
		if got := s.Targets()[first]; got != 9 {
			t.Errorf("a refused Apply wrote app 0: target %d, want 9", got)
		}
	})
	if c.Writes() != 2 {
		t.Errorf("%d writes counted, want 2", c.Writes())
	}
}

// The apps of a recommend-mode domain, whose Soldier writes nothing, are
// scaled by the cluster's own HPAs as the simulation steps, and observed
// with their HPAs' bounds; the other domains' targets hold.
func TestRecommendDomainsFollowTheClustersHPAs(t *testing.T) {
	cfg, c := world(t, "payment")
	var start []int32
	c.Sim(func(s *sim.Sim) { start = slices.Clone(s.Targets()) })
	for range 720 { // two hours of a night's decline
		c.Step()
	}
	moved := false
	c.Sim(func(s *sim.Sim) {
		for _, a := range cfg.Apps() {
			changed := s.Targets()[a.ID] != start[a.ID]
			switch {
			case cfg.Domains[a.Domain].Name == "payment":
				moved = moved || changed
			case changed:
				t.Errorf("%s of an active domain moved without a write: %d -> %d", a.Name, start[a.ID], s.Targets()[a.ID])
			}
		}
	})
	if !moved {
		t.Error("no payment app moved in two hours under the cluster's HPAs")
	}
	for di := range cfg.Domains {
		for i, o := range observe(t, c, cfg, di).Apps {
			a := appsOf(cfg, di)[i]
			scaled := cfg.Domains[di].Name == "payment"
			if scaled != (o.HPAMax > 0) || (scaled && (o.HPAMin != int32(a.MinReplicas) || o.HPAMax != int32(a.MaxReplicas))) {
				t.Errorf("%s: HPA bounds %d-%d observed; want its own %d-%d only when the cluster's HPAs scale it", a.Name, o.HPAMin, o.HPAMax, a.MinReplicas, a.MaxReplicas)
			}
		}
	}
}
