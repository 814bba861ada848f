package simcluster

import (
	"fmt"

	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/soldier"
)

// Built-in policy names. Any other value of commander.policy or
// soldier.policy is the path of a checkpoint (config.Parse has made a
// relative path relative to the config file's directory).
const (
	ForecastPolicy     = "forecast"     // commander.Forecast
	ProportionalPolicy = "proportional" // soldier.Proportional
)

// CommanderPolicy resolves cfg.Commander.Policy: "forecast" is the Forecast
// heuristic with the configured reserve_min; anything else is a checkpoint
// path loaded with commander.LoadLearned. Every place that runs a Commander
// (NewPolicy, the commander daemon, `regiment run`) resolves through it.
func CommanderPolicy(cfg *domains.Config) (commander.Policy, error) {
	switch name := cfg.Commander.Policy; name {
	case ForecastPolicy, "":
		return &commander.Forecast{ReserveMin: cfg.Commander.ReserveMin}, nil
	default:
		p, err := commander.LoadLearned(name, cfg)
		if err != nil {
			return nil, fmt.Errorf("commander policy: %w", err)
		}
		return p, nil
	}
}

// SoldierPolicy resolves cfg.Soldier.Policy for the Soldier of scfg's
// domain: "proportional" is the Proportional heuristic; anything else is a
// checkpoint path loaded with soldier.LoadLearned. Every place that runs a
// Soldier (NewPolicy, the soldier daemon, `regiment run`) resolves through
// it. Each call returns a new policy: policies keep scratch state and are
// not shared between Soldiers.
func SoldierPolicy(cfg *domains.Config, scfg soldier.Config) (soldier.Policy, error) {
	switch name := cfg.Soldier.Policy; name {
	case ProportionalPolicy, "":
		return &soldier.Proportional{}, nil
	default:
		p, err := soldier.LoadLearned(name, scfg)
		if err != nil {
			return nil, fmt.Errorf("soldier policy for %s: %w", scfg.Domain, err)
		}
		return p, nil
	}
}

// Option changes how NewPolicy builds the hierarchy.
type Option func(*options)

type options struct {
	commander commander.Policy
	soldier   func(scfg soldier.Config) (soldier.Policy, error)
	edit      func(scfg *soldier.Config) // WithSoldierConfig
}

// WithCommander makes the hierarchy's Commander run p instead of the
// configured policy (training drives the Commander through it).
func WithCommander(p commander.Policy) Option {
	return func(o *options) { o.commander = p }
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
		p, err := CommanderPolicy(cfg)
		if err != nil {
			return o, err
		}
		o.commander = p
	}
	if o.soldier == nil {
		o.soldier = func(scfg soldier.Config) (soldier.Policy, error) { return SoldierPolicy(cfg, scfg) }
	}
	return o, nil
}

// Commander returns the hierarchy's Commander, for a trainer that builds an
// observation (Commander.Decide) before the tick that acts on it.
func (p *Policy) Commander() *commander.Commander { return p.cmd }
