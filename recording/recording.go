// Package recording turns Commander and Soldier records into episode steps of
// the store, so the cores stay free of bbolt and the store free of the cores.
//
// Action keys name what they act on: "share/<domain>", "cores/<domain>",
// "urgency/<domain>", "headroom/<domain>", "reserve" for the Commander;
// "replicas/<app>" for a Soldier's writes and "budget_cores" for its budget.
// Reward terms are stored as "reward.<term>" keys of Step.Reward, with "total".
package recording

import (
	"fmt"

	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/soldier"
	"github.com/regimentd/regiment/store"
)

// Appender is where steps go: a store appender.
type Appender interface {
	Append(step store.Step) error
}

// Commander records Commander ticks into episode id.
type Commander struct {
	Episode string
	Domains []string
	Out     Appender
	Err     func(error) // called when a step cannot be appended; may be nil
	Reward  func(r commander.Record) map[string]float64
}

// Record implements commander.Recorder.
func (c *Commander) Record(r commander.Record) {
	step := store.Step{Episode: c.Episode, Seq: r.Seq, At: r.At, Obs: r.Features,
		Action:  map[string]float64{"reserve": r.Final.Reserve},
		Outcome: map[string]float64{"stale_domains": float64(len(r.Stale))},
	}
	for i, d := range c.Domains {
		step.Action["share/"+d] = r.Final.Shares[i]
		step.Action["urgency/"+d] = r.Final.Urgency[i]
		step.Action["headroom/"+d] = r.Final.Headroom[i]
	}
	for _, g := range r.Guards {
		step.Guards = append(step.Guards, store.Guard{Name: g.Name, Target: "share/" + c.Domains[g.Domain], Before: g.Before, After: g.After})
	}
	if c.Reward != nil {
		step.Reward = c.Reward(r)
	}
	if err := c.Out.Append(step); err != nil && c.Err != nil {
		c.Err(fmt.Errorf("record commander step %d: %w", r.Seq, err))
	}
}

// Soldier records one domain's Soldier ticks into episode id.
type Soldier struct {
	Episode string
	Out     Appender
	Err     func(error)
	Reward  func(r soldier.Record) map[string]float64
}

// Record implements soldier.Recorder.
func (s *Soldier) Record(r soldier.Record) {
	step := store.Step{Episode: s.Episode, Seq: r.Seq, At: r.At, Obs: r.Features,
		Action: map[string]float64{"budget_cores": r.Directive.Cores, "changes": float64(len(r.Changes))},
		Outcome: map[string]float64{
			"p99_seconds": r.Outcome.P99, "error_rate": r.Outcome.ErrorRate, "cores_used": r.Outcome.CoresUsed,
			"ready": float64(r.Outcome.Ready), "replicas": float64(r.Outcome.Replicas), "slo_met": b2f(r.Outcome.SLOMet),
			"fallback": b2f(r.Fallback),
		},
	}
	for _, c := range r.Changes {
		step.Action["replicas/"+c.App] = float64(c.Replicas)
	}
	for _, g := range r.Guards {
		step.Guards = append(step.Guards, store.Guard{Name: g.Name, Target: "replicas/" + g.App, Before: float64(g.Before), After: float64(g.After)})
	}
	if s.Reward != nil {
		step.Reward = s.Reward(r)
	}
	if err := s.Out.Append(step); err != nil && s.Err != nil {
		s.Err(fmt.Errorf("record %s step %d: %w", r.Domain, r.Seq, err))
	}
}

// CommanderEpisode describes a Commander episode for cfg.
func CommanderEpisode(id string, cfg *domains.Config, policy string) store.Episode {
	return store.Episode{ID: id, Level: "commander", Cluster: cfg.Cluster.Name, Policy: policy,
		ObsLayout: commander.Layout(cfg), ObsVersion: commander.ObsVersion}
}

// SoldierEpisode describes a Soldier episode for one domain.
func SoldierEpisode(id string, cfg *domains.Config, domain, policy string) store.Episode {
	return store.Episode{ID: id, Level: "soldier", Domain: domain, Cluster: cfg.Cluster.Name, Policy: policy,
		ObsLayout: soldier.Layout, ObsVersion: soldier.ObsVersion}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
