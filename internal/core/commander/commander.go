package commander

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/reward"
	"github.com/regimentd/regiment/wire"
)

// Publisher sends the Commander's decisions to the Soldiers. An
// Allocation's Shares map is the Commander's own, refilled every tick: a
// Publisher must not keep it past PublishAllocation.
type Publisher interface {
	PublishDirective(ctx context.Context, d wire.Directive) error
	PublishAllocation(ctx context.Context, a wire.Allocation) error
}

// Recorder keeps each tick's record for inspection and retraining.
type Recorder interface {
	Record(r Record)
}

// Record is one Commander tick as kept.
type Record struct {
	At       time.Time
	Term     uint64
	Seq      uint64
	Policy   string
	Reason   string
	Features []float64 // Layout order
	Proposed Action    // the policy's output, before guards
	Final    Action    // after guards: what was published
	Guards   []Applied
	Stale    []string                  // domains without a fresh report
	Reward   reward.CommanderBreakdown // of the outcome observed at this tick
	// CapacityTarget is the capacity plan asked of the pool, cores (0: no
	// plan: no Pool, or capacity_plan off).
	CapacityTarget float64
}

// Commander allocates the pool. New starts nothing; Run ticks until its
// context ends.
type Commander struct {
	mu       sync.Mutex // held by Tick, Decide and Reload
	reloaded chan struct{}
	cfg      *domains.Config
	policy   Policy
	name     string
	rules    Rules
	builder  *Builder
	pub      Publisher
	rec      Recorder
	pool     Pool       // nil: no capacity plan
	capSrc   Capacity   // nil: the pool is capacity_cores
	hold     PlanHold   // the plan's hold (plan_hold)
	ov       *overrides // operator share pins, see override.go
	term     uint64
	seq      uint64
	prev     []float64          // shares in force; nil before the first tick
	shares   map[string]float64 // the allocation's shares, reused every tick
	proposed Action
	final    Action
	applied  []Applied
	figures  []DomainFigures // the last Decision's Domains, reused every tick
	outcomes []reward.DomainOutcome
	weights  reward.CommanderWeights
}

// New returns a Commander for cfg. term distinguishes this Commander's
// sequence numbers from an earlier one's (for example its start time in
// nanoseconds); seq continues from seq0 (0 on a fresh start).
func New(cfg *domains.Config, policy Policy, policyName string, pub Publisher, rec Recorder, term, seq0 uint64) *Commander {
	n := len(cfg.Domains)
	names := make([]string, n)
	for i, d := range cfg.Domains {
		names[i] = d.Name
	}
	return &Commander{
		cfg: cfg, policy: policy, name: policyName, rules: NewRules(cfg), builder: NewBuilder(cfg),
		pub: pub, rec: rec, ov: newOverrides(names), term: term, seq: seq0, proposed: NewAction(n), final: NewAction(n),
		weights: commanderWeights(cfg), reloaded: make(chan struct{}, 1),
	}
}

// BeginTerm starts a new term, for a Commander that has just become leader:
// from the next tick on its directives carry term, with sequence numbers from
// 1. term must exceed every earlier leader's (say max(now in nanoseconds,
// last term seen + 1)), or Soldiers reject the directives as replayed. Safe
// for concurrent use with Tick and Run.
func (c *Commander) BeginTerm(term uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.term, c.seq = term, 0
}

// SetPool makes the Commander ask p for its capacity plan (PlanCapacity)
// every tick, when the config's capacity_plan is on. Call it before Run.
func (c *Commander) SetPool(p Pool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pool = p
}

// OnReport takes a Soldier's report; false means its domain is unknown.
func (c *Commander) OnReport(r wire.DomainReport) bool { return c.builder.OnReport(r) }

// Builder exposes the observation builder (for reports received so far).
func (c *Commander) Builder() *Builder { return c.builder }

// Seq is the sequence number of the last published tick.
func (c *Commander) Seq() uint64 { return c.seq }

// Decision is one tick's outcome.
type Decision struct {
	Seq     uint64
	Shares  []float64 // final, per domain
	Reserve float64
	Guards  int
	Reason  string
	// Domains are the tick's figures per domain, in config order (for the
	// metrics); owned by the Commander until its next Tick.
	Domains []DomainFigures
	// CapacityCores is the pool the shares divide, cores: capacity_cores,
	// or the Capacity source's size when smaller. CapacityTargetCores is the
	// capacity plan asked of the pool, cores (0: no plan).
	CapacityCores, CapacityTargetCores float64
}

// Decide runs observation, policy and guards at now without publishing; the
// result is owned by the Commander until the next call.
func (c *Commander) Decide(now time.Time) (*Observation, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.decide(now)
}

func (c *Commander) decide(now time.Time) (*Observation, string) {
	prevForObs := c.prev
	if prevForObs == nil {
		prevForObs = make([]float64, len(c.cfg.Domains))
	}
	c.builder.capacity = c.poolCores()
	c.builder.nodes, c.builder.pendingNodes = c.nodeCounts()
	o := c.builder.Build(now, prevForObs, c.cfg.Commander.Tick)
	reason := c.policy.Decide(o, &c.proposed)
	copyAction(&c.final, &c.proposed)
	c.applied = ApplyGuards(c.rules, c.prev, &c.final, c.applied[:0])
	c.applyOverrides(now) // operator pins, after the guards (override.go)
	return o, reason
}

// Tick decides at now and publishes one directive per domain and the
// allocation. A domain that has not reported since the Commander started
// gets no directive, unless an operator pinned its share: sized blind, its
// budget would be its floor. A failed publish does not stop the others: the
// error joins every failure, and the Decision is still the one made (and
// recorded).
func (c *Commander) Tick(ctx context.Context, now time.Time) (Decision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, reason := c.decide(now)
	c.seq++
	capacity := o.Cluster.CapacityCores // capacity_cores, or less when the cluster has less (SetCapacity)
	ttl := wire.Duration(c.cfg.Commander.DirectiveTTL)
	if c.shares == nil {
		c.shares = make(map[string]float64, len(c.cfg.Domains))
	}
	clear(c.shares) // a Reload may have renamed domains
	alloc := wire.Allocation{Version: wire.Version, Cluster: c.cfg.Cluster.Name, Term: c.term, Seq: c.seq, IssuedAt: now,
		Shares: c.shares, Reserve: c.final.Reserve}
	var errs []error
	for i, d := range c.cfg.Domains {
		dir := wire.Directive{
			Version: wire.Version, Cluster: c.cfg.Cluster.Name, Domain: d.Name, Term: c.term, Seq: c.seq,
			IssuedAt: now, TTL: ttl, Share: c.final.Shares[i], Cores: c.final.Shares[i] * capacity,
			Urgency: c.final.Urgency[i], Headroom: c.final.Headroom[i], Policy: c.name, Reason: wire.Clip(reason, 200),
		}
		alloc.Shares[d.Name] = c.final.Shares[i]
		if !c.builder.Reported(i) && c.ov.pinned[i] < 0 {
			// With no report the policy sized the domain blind, to its
			// floor, and a Soldier that obeyed (one that started late, or
			// one whose report a new leader has not had yet) would cut its
			// running apps to that floor. It keeps its last directive, or
			// its fallback, until the tick after its first report.
			continue
		}
		// One domain's failure (its directive not stored, say) must not
		// keep the others' directives from going out.
		if err := c.pub.PublishDirective(ctx, dir); err != nil {
			errs = append(errs, fmt.Errorf("publish directive for %s: %w", d.Name, err))
		}
	}
	if c.pool != nil && c.cfg.Commander.CapacityPlan == domains.PlanForecast {
		alloc.CapacityTargetCores = c.hold.Apply(PlanCapacity(o, c.cfg.Commander.PoolSpare), now, c.cfg.Commander.PlanHold)
		if err := c.pool.SetCapacityTarget(ctx, alloc.CapacityTargetCores); err != nil {
			errs = append(errs, fmt.Errorf("capacity plan: %w", err))
		}
	}
	if err := c.pub.PublishAllocation(ctx, alloc); err != nil {
		errs = append(errs, fmt.Errorf("publish allocation: %w", err))
	}
	if c.prev == nil {
		c.prev = make([]float64, len(c.cfg.Domains))
	}
	copy(c.prev, c.final.Shares)
	if c.rec != nil {
		r := Record{At: now, Term: c.term, Seq: c.seq, Policy: c.name, Reason: reason,
			Features: append([]float64(nil), o.Vector...), Guards: append([]Applied(nil), c.applied...),
			Reward: c.rewardOf(o, &c.final), CapacityTarget: alloc.CapacityTargetCores}
		r.Proposed, r.Final = NewAction(len(c.prev)), NewAction(len(c.prev))
		copyAction(&r.Proposed, &c.proposed)
		copyAction(&r.Final, &c.final)
		for _, d := range o.Domains {
			if d.Stale {
				r.Stale = append(r.Stale, d.Name)
			}
		}
		c.rec.Record(r)
	}
	c.figures = figures(c.figures, o, &c.final, capacity)
	return Decision{Seq: c.seq, Shares: c.prev, Reserve: c.final.Reserve, Guards: len(c.applied), Reason: reason,
		Domains: c.figures, CapacityCores: capacity, CapacityTargetCores: alloc.CapacityTargetCores}, errors.Join(errs...)
}

// Run ticks every Commander tick until ctx ends; clock gives the time.
// onTick, if not nil, sees every tick's decision or error.
// A Reload that changes the tick resets the ticker.
//
// The first tick does not wait a whole tick: it comes as soon as every
// domain has reported, or firstTickWait after start at the latest (and never
// later than a tick), so that fresh Soldiers leave their fallback within
// seconds instead of a minute. Later ticks are a tick apart.
func (c *Commander) Run(ctx context.Context, clock func() time.Time, onTick func(Decision, error)) error {
	tick, wait, ndomains := c.runTiming()
	if wait <= 0 {
		wait = tick
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	first := time.NewTimer(min(tick, wait))
	defer first.Stop()
	poll := time.NewTicker(firstTickPoll)
	defer poll.Stop()
	waiting := true
	run := func() {
		d, err := c.Tick(ctx, clock())
		if onTick != nil {
			onTick(d, err)
		}
		if waiting {
			waiting = false
			first.Stop()
			poll.Stop()
			t.Reset(tick)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.reloaded:
			tick = domains.Retick(t, tick, c.tick())
		case <-t.C:
			run()
		case <-first.C:
			run()
		case <-poll.C:
			if n, _ := c.builder.Reports(); waiting && n >= ndomains {
				run()
			}
		}
	}
}

// firstTickPoll is how often Run checks, before its first tick, whether
// every domain has reported.
const firstTickPoll = 100 * time.Millisecond

// runTiming is the tick, the longest wait for the first tick (two Soldier
// ticks: every live Soldier has reported by then) and the number of domains.
func (c *Commander) runTiming() (tick, firstWait time.Duration, domains int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Commander.Tick, 2 * c.cfg.Soldier.Tick, len(c.cfg.Domains)
}

// Reload applies cfg's rules and timing from the next tick on: each domain's
// floor, ceiling, headroom, priority, weight and SLO, dead_zone, max_share_change,
// reserve_min and headroom (the Forecast policy's), tick and directive_ttl. It refuses,
// changing nothing, a cfg whose cluster block, domains, apps or dependencies
// differ: those need a restart. cfg must be validated. Safe for concurrent use
// with Tick and Run.
func (c *Commander) Reload(cfg *domains.Config) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case cfg.Cluster != c.cfg.Cluster:
		return fmt.Errorf("commander: reload: the cluster block changed: restart to apply")
	case !slices.EqualFunc(cfg.Domains, c.cfg.Domains, func(a, b domains.Domain) bool { return a.Name == b.Name }):
		return fmt.Errorf("commander: reload: the set of domains changed: restart to apply")
	case !slices.EqualFunc(cfg.Apps(), c.cfg.Apps(), func(a, b domains.App) bool { return a.Name == b.Name }):
		return fmt.Errorf("commander: reload: the set of apps changed: restart to apply")
	case !slices.Equal(callMatrix(cfg), c.builder.calls):
		return fmt.Errorf("commander: reload: dependencies between domains changed: restart to apply")
	}
	c.cfg, c.rules = cfg, NewRules(cfg)
	c.builder.cal = c.builder.cal.reloaded(cfg)
	for i, d := range cfg.Domains {
		o := &c.builder.obs.Domains[i]
		o.Priority, o.Weight, o.Floor, o.Ceiling, o.FixedHeadroom = d.Priority, d.Weight, d.Floor, d.Ceiling, d.Headroom
		o.SLO, o.ErrorBudget = d.SLO.LatencyP99Seconds(), d.SLO.ErrorBudget
	}
	switch p := c.policy.(type) {
	case *Forecast:
		p.ReserveMin, p.Headroom = cfg.Commander.ReserveMin, cfg.Commander.Headroom
	case *Learned:
		p.base.ReserveMin, p.base.Headroom = cfg.Commander.ReserveMin, cfg.Commander.Headroom // the heuristic under the residual
	}
	select {
	case c.reloaded <- struct{}{}:
	default:
	}
	return nil
}

func (c *Commander) tick() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Commander.Tick
}

func copyAction(dst, src *Action) {
	copy(dst.Shares, src.Shares)
	copy(dst.Urgency, src.Urgency)
	copy(dst.Headroom, src.Headroom)
	dst.Reserve = src.Reserve
}

// commanderWeights are the default Commander reward weights with the config's
// reward block laid over them (validated with the config).
func commanderWeights(cfg *domains.Config) reward.CommanderWeights {
	w := reward.DefaultCommanderWeights()
	for n, v := range cfg.Reward.Commander {
		_ = w.Set(n, v)
	}
	return w
}
