package train

import (
	"context"
	"fmt"
	"time"

	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/rl"
	"github.com/regimentd/regiment/wire"
)

// commanderDriver is a SoldierEnv's learned Commander
// (SoldierEnvConfig.Commander): a commander.Commander on the frozen policy,
// fed the reports of the env's Soldiers, whose directives go to them.
type commanderDriver struct {
	e       *SoldierEnv
	learned *commander.Learned
	cmd     *commander.Commander
	reports []wire.DomainReport // the last report per domain
	dirs    []wire.Directive    // the last directive per domain
	at      time.Time           // the time of the last tick
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

// reset starts a fresh Commander for a new episode.
func (c *commanderDriver) reset() {
	c.cmd = commander.New(c.e.cluster, c.learned, "learned", c, nil, 1, 0)
	clear(c.reports)
	clear(c.dirs)
}

// onReport hands domain di's report to the Commander.
func (c *commanderDriver) onReport(di int, r wire.DomainReport) {
	c.reports[di] = r
	c.cmd.OnReport(r)
}

// tick runs one Commander tick at now; the directives it publishes go to
// the Soldiers (PublishDirective).
func (c *commanderDriver) tick(now time.Time) {
	c.at = now
	if _, err := c.cmd.Tick(context.Background(), now); err != nil {
		panic(fmt.Sprintf("soldier env: commander tick: %v", err))
	}
}

// PublishDirective implements commander.Publisher: the directive goes to
// its domain's Soldier, through its intake.
func (c *commanderDriver) PublishDirective(_ context.Context, dir wire.Directive) error {
	di := c.e.cluster.Domain(dir.Domain)
	c.dirs[di] = dir
	if ok, why := c.e.doms[di].sol.OnDirective(dir, dir.IssuedAt); !ok { // doms are in cluster order (every domain)
		return fmt.Errorf("directive %d for %s refused: %s", dir.Seq, dir.Domain, why)
	}
	return nil
}

// PublishAllocation implements commander.Publisher.
func (c *commanderDriver) PublishAllocation(context.Context, wire.Allocation) error { return nil }
