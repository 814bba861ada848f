package simcluster

import (
	"context"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Option changes how NewPolicy builds the hierarchy.
type Option func(*options)

type options struct {
	pool      commander.Pool // WithPool
	commander commander.Policy
	soldier   func(scfg soldier.Config) (soldier.Policy, error)
	edit      func(scfg *soldier.Config) // WithSoldierConfig
}

// WithCommander makes the hierarchy's Commander run p instead of the
// configured policy (training drives the Commander through it).
func WithCommander(p commander.Policy) Option {
	return func(o *options) { o.commander = p }
}

// WithPool gives the Commander s's node pool to plan (Commander.SetPool):
// without it, nodes come only for pending pods, whatever capacity_plan says.
func WithPool(s *sim.Sim) Option {
	return func(o *options) { o.pool = simPool{s} }
}

// simPool is a simulation's node pool as a commander.Pool.
type simPool struct{ s *sim.Sim }

// NodeCounts implements commander.NodeCounter (Sim.NodeCounts).
func (p simPool) NodeCounts() (ready, pending int, ok bool) {
	ready, pending = p.s.NodeCounts()
	return ready, pending, true
}

func (p simPool) SetCapacityTarget(_ context.Context, cores float64) error {
	return p.s.SetCapacityTarget(cores)
}

// WithSoldiers makes every domain's Soldier run the policy newPolicy returns
// for its config instead of the configured one.
func WithSoldiers(newPolicy func(scfg soldier.Config) (soldier.Policy, error)) Option {
	return func(o *options) { o.soldier = newPolicy }
}

// WithSoldierConfig lets edit change every Soldier's config before the
// Soldier and its policy are built: for example, turn the rollback ladder off
// (Ladder.Alert = 0) or the automatic fallback (Fallback.Window = 0).
func WithSoldierConfig(edit func(scfg *soldier.Config)) Option {
	return func(o *options) { o.edit = edit }
}

// resolve applies opts over the configured policies.
func resolve(cfg *domains.Config, opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.commander == nil {
		p, err := commander.NewPolicy(cfg)
		if err != nil {
			return o, err
		}
		o.commander = p
	}
	if o.soldier == nil {
		o.soldier = func(scfg soldier.Config) (soldier.Policy, error) { return soldier.NewPolicy(cfg, scfg) }
	}
	return o, nil
}

// Commander returns the hierarchy's Commander, for a trainer that builds an
// observation (Commander.Decide) before the tick that acts on it.
func (p *Policy) Commander() *commander.Commander { return p.cmd }
