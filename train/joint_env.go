package train

import (
	"context"
	"math"

	"github.com/regimentd/regiment/bus/wire"
	"github.com/regimentd/regiment/commander"
	"github.com/regimentd/regiment/rl"
	"github.com/regimentd/regiment/soldier"
)

// commanderDriver is a SoldierEnv's learned Commander
// (SoldierEnvConfig.Commander): a commander.Commander on the frozen policy,
// fed the env's domain reports, whose directives set the env's budgets.
type commanderDriver struct {
	e       *SoldierEnv
	learned *commander.Learned
	cmd     *commander.Commander
	seq     uint64
	reports []wire.DomainReport // the last report sent per domain
	dirs    []wire.Directive    // the last directive received per domain
}

// newCommanderDriver wraps p (owned by the driver from now on) for e's
// cluster; it fails when p's layouts do not fit the cluster's domains.
func newCommanderDriver(e *SoldierEnv, p *rl.Policy) (*commanderDriver, error) {
	p.Norm.Frozen = true
	l, err := commander.NewLearned(p, e.cluster)
	if err != nil {
		return nil, err
	}
	n := len(e.cluster.Domains)
	return &commanderDriver{e: e, learned: l, reports: make([]wire.DomainReport, n), dirs: make([]wire.Directive, n)}, nil
}

// reset starts a fresh Commander for a new episode and sends it the
// episode's first reports.
func (c *commanderDriver) reset() {
	c.cmd = commander.New(c.e.cluster, c.learned, "learned", c, nil, 1, 0)
	c.seq = 0
	clear(c.dirs)
	c.report()
}

// report sends every domain's report of the env's current observation, as
// soldier.Soldier's report builds it (the budget of the directive in force,
// the RPS p95 over the last 15 min of Soldier ticks).
func (c *commanderDriver) report() {
	c.seq++
	for _, d := range c.e.doms {
		r := wire.DomainReport{
			Version: wire.Version, Cluster: d.cfg.Cluster, Domain: d.cfg.Domain, Seq: c.seq, SentAt: d.in.Now,
			P99Seconds: d.obs.P99, ErrorRate: d.obs.ErrorRate, Mode: string(d.cfg.Soldier.Mode),
		}
		in := d.in
		in.BudgetCores, in.Headroom = math.Inf(1), 0
		r.DemandCores = soldier.DemandCores(in)
		util := soldier.AddApps(&r, d.cfg.Apps, &d.obs, d.scratch[:0])
		r.CPUUtilP75 = soldier.Percentile(util, 0.75)
		if d.rpsN == len(d.rpsHist) {
			copy(d.rpsHist, d.rpsHist[1:])
			d.rpsN--
		}
		d.rpsHist[d.rpsN] = r.RPS
		d.rpsN++
		r.RPSP95 = soldier.Percentile(append(d.scratch[:0], d.rpsHist[:d.rpsN]...), 0.95)
		if dir := c.dirs[d.di]; dir.Seq > 0 {
			r.BudgetCores = dir.Cores
			r.DirectiveTerm, r.DirectiveSeq = dir.Term, dir.Seq
			if dir.Cores > 0 {
				r.BudgetUtilisation = r.CoresUsed / dir.Cores
			}
		}
		c.reports[d.di] = r
		c.cmd.OnReport(r)
	}
}

// tick runs one Commander tick at the simulator's time; the directives it
// publishes set the budgets (PublishDirective).
func (c *commanderDriver) tick() {
	// The Publisher below never fails; no other error is possible.
	c.cmd.Tick(context.Background(), c.e.s.Now())
}

// PublishDirective implements commander.Publisher: the directive becomes
// its domain's budget and headroom.
func (c *commanderDriver) PublishDirective(_ context.Context, dir wire.Directive) error {
	di := c.e.cluster.Domain(dir.Domain)
	c.dirs[di] = dir
	d := c.e.doms[di] // doms are in cluster order (every domain)
	d.budget, d.headroom = dir.Cores, dir.Headroom
	d.in.BudgetCores, d.in.Headroom = dir.Cores, dir.Headroom
	return nil
}

// PublishAllocation implements commander.Publisher.
func (c *commanderDriver) PublishAllocation(context.Context, wire.Allocation) error { return nil }
