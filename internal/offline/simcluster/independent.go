package simcluster

import (
	"context"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/wire"
)

// IndependentPolicy is the name of the ablation NewIndependent builds:
// Regiment's Soldiers without their Commander.
const IndependentPolicy = "regiment-independent"

// independent stands in for the Commander in the ablation: every Commander
// tick it hands each Soldier a directive for the whole pool.
type independent struct {
	seq uint64
}

// NewIndependent builds the ablation regiment-independent: Regiment's
// Soldiers exactly as NewPolicy builds them (the configured Soldier policy,
// stabiliser, guards, ladder and fallback; opts WithSoldiers and
// WithSoldierConfig apply), with no Commander. No budget binds: every
// Commander tick each Soldier is handed a directive for the whole pool
// (share 1, cores = capacity_cores, the most a Soldier's intake accepts),
// so a domain's budget is never below its demand. No headroom: the
// directive's is 0, the Soldier's own default without a Commander. No node
// plan: nothing sets the pool's capacity target, so nodes come only for
// pending pods, as under the HPA baselines. The directive keeps the
// Soldiers out of their no-directive fallback, which is the baseline
// policy, not the one shipped. Against NewPolicy it measures what the
// hierarchy is worth: budgets, headroom and node plan together.
//
// It coincides with NewPolicy when the Commander's shares never bind, its
// headroom is 0 and capacity_plan is off; otherwise the two differ.
func NewIndependent(cfg *domains.Config, srec func(domain string) soldier.Recorder, opts ...Option) (*Policy, error) {
	// A pool option would give the Commander a pool to plan; there is none.
	var kept []Option
	for _, o := range opts {
		var probe options
		o(&probe)
		if probe.pool == nil && probe.commander == nil {
			kept = append(kept, o)
		}
	}
	p, err := NewPolicy(cfg, nil, srec, kept...)
	if err != nil {
		return nil, err
	}
	p.cmd = nil
	p.independent = &independent{}
	return p, nil
}

// decideIndependent is Decide without a Commander: every Commander tick,
// from the first, each Soldier gets its whole-pool directive; then every
// Soldier ticks; then the cluster's own HPAs act on recommend-mode domains.
func (p *Policy) decideIndependent(ctx context.Context, now time.Time, t *sim.Telemetry, targets []int32) {
	if p.tick%p.ratio == 0 {
		if err := p.independent.issue(ctx, p, now); err != nil {
			p.err = err
			return
		}
	}
	p.tick++
	if p.err = p.tickSoldiers(ctx, now, t, targets); p.err != nil {
		return
	}
	p.hpa.Act(now, t, targets)
}

// issue hands every Soldier a directive for the whole pool, with no
// headroom, valid for the configured directive_ttl.
func (in *independent) issue(ctx context.Context, p *Policy, now time.Time) error {
	in.seq++
	pub := &handover{p: p}
	for _, d := range p.cfg.Domains {
		dir := wire.Directive{
			Version: wire.Version, Cluster: p.cfg.Cluster.Name, Domain: d.Name, Term: 1, Seq: in.seq,
			IssuedAt: now, TTL: wire.Duration(p.cfg.Commander.DirectiveTTL),
			Share: 1, Cores: p.cfg.Cluster.CapacityCores, Urgency: 0, Headroom: 0,
			Policy: IndependentPolicy, Reason: "no commander: the whole pool, no headroom",
		}
		if err := pub.PublishDirective(ctx, dir); err != nil {
			return err
		}
	}
	return nil
}
