package soldier

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/reward"
	"github.com/regimentd/regiment/internal/core/stats"
	"github.com/regimentd/regiment/wire"
)

// Observer reads the domain's telemetry into obs (whose Apps slice has one
// entry per app).
type Observer interface {
	Observe(ctx context.Context, obs *Observation) error
}

// Actuator writes replica targets to the cluster. When some apps' writes
// fail and the others are made, Apply returns a WriteErrors naming them;
// any other error means none of changes is known to be written.
type Actuator interface {
	Apply(ctx context.Context, changes []Change) error
}

// Publisher sends the domain's report to the Commander.
type Publisher interface {
	PublishReport(ctx context.Context, r wire.DomainReport) error
}

// Recorder keeps each tick's record (observation features, action, guards,
// outcome) for inspection and retraining.
type Recorder interface {
	Record(r Record)
}

// Config is one domain's Soldier.
type Config struct {
	Cluster     string
	Domain      string
	Apps        []App
	SLO         float64 // p99 objective, seconds
	ErrorBudget float64
	Priority    int // the domain's tier: 0 (P0) is the most important
	Soldier     domains.Soldier
	Policy      string                // name recorded with decisions
	Ladder      LadderConfig          // rollback ladder of the domain's priority tier
	Fallback    FallbackConfig        // automatic fallback; Window 0: off
	Reward      reward.SoldierWeights // reward weights of each recorded step
	Intake      wire.IntakeBounds     // what a real Commander's directives stay within (IntakeBounds)
}

// NewConfig builds the Soldier config of domain name from a cluster config.
func NewConfig(cfg *domains.Config, name string) (Config, error) {
	di := cfg.Domain(name)
	if di < 0 {
		return Config{}, fmt.Errorf("soldier: unknown domain %q", name)
	}
	d := cfg.Domains[di]
	sc := cfg.Soldier
	if d.Mode != "" {
		sc.Mode = d.Mode // the domain's own mode overrides the soldier block's
	}
	return Config{
		Cluster: cfg.Cluster.Name, Domain: name, Apps: Apps(cfg, di),
		SLO: d.SLO.LatencyP99Seconds(), ErrorBudget: d.SLO.ErrorBudget, Priority: d.Priority,
		Soldier: sc, Policy: cfg.Soldier.Policy, Ladder: LadderFrom(cfg.Soldier.Ladder(d.Priority)),
		Fallback: FallbackFrom(cfg.Soldier.Fallback, cfg.Soldier.Tick), Reward: soldierWeights(cfg),
		Intake: IntakeBounds(cfg),
	}, nil
}

// Soldier runs one domain. New starts nothing; Run ticks until its context ends.
type Soldier struct {
	tickMu   sync.Mutex // held by Tick and Reload: cfg and exec change between ticks
	reloaded chan struct{}
	*state   // what Decide reads and advances (decide.go)
	obs      Observation
	act      Actuator
	observer Observer
	pub      Publisher
	rec      Recorder
	ov       overrides // operator pins, see override.go
	failing  []Failing // apps not written at the last tick (actuate)
	atMax    []AtMax   // apps breaching with max_replicas ready at the last tick
	limited  []Limited // apps whose sizing wanted more than their ceiling at the last tick

	mu     sync.Mutex
	intake wire.Intake

	seq     uint64
	rpsHist []float64 // domain RPS, last 15 min of ticks, oldest first
	// rpsSorted is rpsHist's values in cmp.Compare's order, kept as one
	// leaves and one enters each tick: RPSP95 is then an index.
	rpsSorted []float64
	utilP75   stats.NearKth // the report's CPUUtilP75, near the last tick's
	// learning is each app's learned service and startup times, indexed
	// like the apps; nil when no app learns (estimator.go). learned is what the
	// last tick learned, one entry per learning app.
	learning []Learning
	learned  []LearnedApp
	scratch  []float64
	weights  reward.SoldierWeights
	one, two [1]float64 // alignment inputs, domain level
}

// New returns a Soldier for cfg acting through act, observing through obs,
// reporting through pub and recording through rec (rec may be nil).
func New(cfg Config, policy Policy, observer Observer, act Actuator, pub Publisher, rec Recorder) *Soldier {
	n := len(cfg.Apps)
	if cfg.Reward == (reward.SoldierWeights{}) {
		cfg.Reward = reward.DefaultSoldierWeights()
	}
	hist := max(1, int(15*time.Minute/max(cfg.Soldier.Tick, time.Second))) // ticks over 15m keep one
	return &Soldier{
		state: NewState(cfg, policy, rec == nil),
		obs:   Observation{Apps: make([]AppObservation, n)},
		act:   act, observer: observer, pub: pub, rec: rec, ov: newOverrides(cfg), learning: newLearning(cfg.Apps),
		intake:  wire.Intake{Domain: cfg.Domain, MaxSkew: time.Minute, Bounds: cfg.Intake},
		rpsHist: make([]float64, 0, hist), rpsSorted: make([]float64, 0, hist),
		utilP75: stats.NewNearKth(n),
		weights: cfg.Reward, reloaded: make(chan struct{}, 1),
	}
}

// OnDirective offers a directive received from the Commander. It is kept if
// valid and newer than the last one; otherwise the last good one stays and the
// reason is returned. Safe for concurrent use with Tick.
func (s *Soldier) OnDirective(d wire.Directive, now time.Time) (ok bool, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.intake.Accept(d, now)
}

// Directive is the last accepted directive.
func (s *Soldier) Directive() (wire.Directive, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.intake.Last()
}

// observe reads the domain into s.obs through the Observer and returns the
// last accepted directive and whether it is in force at now (accepted and
// not expired). The caller holds tickMu.
func (s *Soldier) observe(ctx context.Context, now time.Time) (d wire.Directive, valid bool, err error) {
	if err := s.observer.Observe(ctx, &s.obs); err != nil {
		return wire.Directive{}, false, fmt.Errorf("observe: %w", err)
	}
	d, have := s.Directive()
	return d, have && !d.Expired(now), nil
}

// inForce is d when valid, else nil: Decide's directive in force.
func inForce(d *wire.Directive, valid bool) *wire.Directive {
	if valid {
		return d
	}
	return nil
}

// PolicyInput observes the domain and returns the Input the policy would be
// given were the Soldier to tick at now: the observation, the budget and
// headroom of the directive in force, the time. A caller that chooses the
// policy's action outside the Soldier (the trainer, train.SoldierEnv, which
// computes the learned policy's features from it and hands the action to a
// Policy for the next Tick) sees what Decide will. It decides nothing and
// advances no decision state (nor a learning app's service time: the next
// Tick learns from what it observes); the next Tick observes again. The Input's
// slices belong to the Soldier and hold until its next tick.
func (s *Soldier) PolicyInput(ctx context.Context, now time.Time) (Input, error) {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	var in Input
	d, valid, err := s.observe(ctx, now)
	if err == nil {
		in, _ = s.input(&s.obs, inForce(&d, valid), now)
	}
	return in, err
}

// TickResult is what one tick did, for the shell's metrics and logs.
type TickResult struct {
	Writes   int
	Guards   int
	Fallback bool // the baseline acts: no valid directive, or the ladder reverted
	Rung     Rung // the rollback ladder's rung
	// AutoFallback is true while the automatic fallback holds the domain on
	// the baseline; Switch is its switch at this tick, if any.
	AutoFallback bool
	Switch       FallbackEvent
	Report       wire.DomainReport
	// SLOSeconds is the domain's p99 objective, seconds (0: none); of its
	// apps, AppsAtRisk are at risk and AppsBreaching over their SLO now
	// (AppendSLOStatus).
	SLOSeconds                float64
	AppsAtRisk, AppsBreaching int
	// BreachingAtMax is the apps, in domain order, that breach with their
	// max_replicas ready (AppendSLOStatus): the ceiling, not the
	// autoscaler, holds them. It belongs to the Soldier and holds until its
	// next tick.
	BreachingAtMax []AtMax
	// LimitedByMax is the apps, in domain order, whose sizing wanted more
	// replicas than their ceiling this tick (AppendLimited), breaching or
	// not yet: the ones to raise max_replicas for. It belongs to the Soldier
	// and holds until its next tick.
	LimitedByMax []Limited
	// Failing is the apps not written, and why (Executor.AppendFailing):
	// each tick, every app whose workload is missing and every app in a run
	// of failed writes, in domain order; it belongs to the Soldier and
	// holds until its next tick.
	Failing []Failing
	// Recommendation is what a recommend-mode tick recommended; nil in
	// other modes.
	Recommendation *Recommendation
	// Learned is what the Soldier learned of each app whose service time
	// it learns (App.Learn), in domain order; nil when none does. It
	// belongs to the Soldier and holds until its next tick.
	Learned []LearnedApp
}

// Tick runs one control step at now: observe, decide (Decide), actuate,
// report, record. Apps whose writes fail (a WriteErrors) are noted for a
// retry with backoff and listed in TickResult.Failing; the tick goes on and
// returns no error for them. Any other Actuator error is returned after the
// tick has reported and recorded.
func (s *Soldier) Tick(ctx context.Context, now time.Time) (TickResult, error) {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	d, valid, err := s.observe(ctx, now)
	if err != nil {
		return TickResult{}, err
	}
	s.learn()           // learned service times size their apps from this tick on
	s.pinOverrides(now) // operator pins rank above every policy (override.go)
	dec := Decide(s.state, &s.obs, inForce(&d, valid), now)
	if dec.Mode != domains.ModeOff {
		s.overridesApplied(now)
	}
	// Only active mode writes: the Actuator is never called otherwise.
	actErr := s.actuate(ctx, dec)
	var atRisk, breaching int
	atRisk, breaching, s.atMax = AppendSLOStatus(s.atMax[:0], s.cfg.Apps, &s.obs, s.cfg.SLO, s.cfg.ErrorBudget)
	s.limited = AppendLimited(s.limited[:0], s.cfg.Apps, &s.obs, s.state.need)
	s.seq++
	r := s.report(now, d, valid, dec.DemandCores, dec.Mode, dec.Fallback)
	if s.pub != nil {
		if err := s.pub.PublishReport(ctx, r); err != nil {
			return TickResult{}, fmt.Errorf("publish report: %w", err)
		}
	}
	if s.rec != nil {
		rec := s.record(now, d, valid, r, dec.Reason, dec.Fallback)
		rec.Rung = dec.Rung
		rec.Learned = slices.Clone(s.learned)
		rec.AutoFallback, rec.Switch = dec.AutoFallback, dec.Switch
		if dec.PolicyTargets != nil {
			rec.PolicyTargets, rec.BaselineTargets = slices.Clone(dec.PolicyTargets), slices.Clone(dec.BaselineTargets)
		}
		s.rec.Record(rec)
	}
	res := TickResult{Writes: len(s.writes), Guards: len(dec.Guards), Fallback: dec.Fallback, Rung: dec.Rung,
		AutoFallback: dec.AutoFallback, Switch: dec.Switch, Report: r, SLOSeconds: s.cfg.SLO, Failing: s.failing,
		AppsAtRisk: atRisk, AppsBreaching: breaching, BreachingAtMax: s.atMax, LimitedByMax: s.limited, Learned: s.learned}
	if dec.Mode.Recommends() {
		res.Recommendation = &Recommendation{Apps: s.cfg.Apps, Recommended: dec.PolicyTargets, Baseline: dec.BaselineTargets, Live: s.obs.Apps}
	}
	if actErr != nil {
		return res, fmt.Errorf("actuate %d apps: %w", len(dec.Writes), actErr)
	}
	return res, nil
}

// actuate makes dec's writes, in a mode that writes, and notes each app's
// outcome in the executor: a failed app is retried with backoff and the
// others go on. It leaves in s.writes the writes made and in s.failing the
// apps not written (Executor.AppendFailing). It returns an Actuator error
// other than a WriteErrors, after noting every change as failed.
func (s *Soldier) actuate(ctx context.Context, dec Decision) error {
	var err error
	if dec.Mode.Writes() && len(dec.Writes) > 0 {
		var failed []AppFailure
		failed, err = splitFailures(s.act.Apply(ctx, dec.Writes), dec.Writes)
		made := s.writes[:0]
		for _, w := range dec.Writes { // s.writes is dec.Writes: compacted in place
			if k := slices.IndexFunc(failed, func(f AppFailure) bool { return f.App == w.App }); k >= 0 {
				s.exec.Failed(w.App, w.Replicas, failed[k].Reason, oneLine(failed[k].Err))
				continue
			}
			s.exec.Written(w.App)
			made = append(made, w)
		}
		s.writes = made
	}
	s.failing = s.exec.AppendFailing(&s.obs, s.failing[:0])
	return err
}

// Recommendation is a recommend-mode tick's figures per app, in domain
// order: what the Soldier would set (its policy after the stabiliser and the
// guards), what its baseline would (without a budget) and what the cluster
// runs (the observation: Replicas, HPAMin, HPAMax). Its slices belong to the
// Soldier and hold until its next tick.
type Recommendation struct {
	Apps                  []App
	Recommended, Baseline []int32 // replicas
	Live                  []AppObservation
}

// Run ticks every Soldier tick until ctx ends; clock gives the time. onTick,
// if not nil, sees every tick's result or error.
// A Reload that changes the tick resets the ticker.
func (s *Soldier) Run(ctx context.Context, clock func() time.Time, onTick func(TickResult, error)) error {
	tick := s.tick()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.reloaded:
			tick = domains.Retick(t, tick, s.tick())
		case <-t.C:
			res, err := s.Tick(ctx, clock())
			if onTick != nil {
				onTick(res, err)
			}
		}
	}
}

// Reload applies the domain's settings in cfg from the next tick on: the
// executor's rules (overage_cap, scale_down_cooldown, error_rate_veto,
// max_writes_per_tick), target_utilisation, mode (the domain's own, else the
// soldier block's), tick, the automatic fallback (a changed one starts a new
// window), the rollback ladder of the domain's tier (the rung in force stays),
// the domain's SLO and its apps' replica bounds and sizes. It refuses, changing nothing, a cfg
// without the domain or whose cluster name, set of apps, policy or actuation
// differ: those need a restart. cfg must be validated. Safe for concurrent
// use with Tick and Run.
func (s *Soldier) Reload(cfg *domains.Config) error {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	next, err := NewConfig(cfg, s.cfg.Domain)
	if err != nil {
		return fmt.Errorf("soldier: reload: domain %q is not in the new config: restart to apply", s.cfg.Domain)
	}
	if err := s.checkReload(next, false); err != nil {
		return err
	}
	s.apply(next)
	return nil
}

// checkReload says why next cannot be applied without a restart; a changed
// set of apps only when appsMayChange is false (ReloadApps).
func (s *Soldier) checkReload(next Config, appsMayChange bool) error {
	switch {
	case next.Cluster != s.cfg.Cluster:
		return fmt.Errorf("soldier: reload: the cluster name changed: restart to apply")
	case !appsMayChange && !slices.EqualFunc(next.Apps, s.cfg.Apps, func(a, b App) bool { return a.Name == b.Name }):
		return fmt.Errorf("soldier: reload: the set of apps of %s changed: restart to apply", s.cfg.Domain)
	case next.Policy != s.cfg.Policy:
		return fmt.Errorf("soldier: reload: the policy changed: restart to apply")
	case next.Soldier.Actuation != s.cfg.Soldier.Actuation:
		return fmt.Errorf("soldier: reload: the actuation changed: restart to apply")
	}
	return nil
}

// apply makes next the config in force from the next tick on.
func (s *Soldier) apply(next Config) {
	if next.Fallback != s.cfg.Fallback {
		s.auto = NewFallback(next.Fallback) // a new window and hold: the old ones were counted in other ticks
	}
	s.ladder.SetConfig(next.Ladder) // new thresholds; the rung in force stays until they move it
	s.setIntakeBounds(next.Intake)
	s.cfg = next
	s.exec.cfg = ExecutorConfig{
		OverageCap: next.Soldier.OverageCap, ScaleDownCooldown: next.Soldier.ScaleDownCooldown,
		ErrorRateVeto: next.Soldier.ErrorRateVeto, MaxWritesPerTick: next.Soldier.MaxWritesPerTick,
		RetryLimit: retryLimit(next.Soldier.Tick),
	}
	select {
	case s.reloaded <- struct{}{}:
	default:
	}
}

func (s *Soldier) tick() time.Duration {
	s.tickMu.Lock()
	defer s.tickMu.Unlock()
	return s.cfg.Soldier.Tick
}

// soldierWeights are the default Soldier reward weights with the config's
// reward block laid over them (validated with the config).
func soldierWeights(cfg *domains.Config) reward.SoldierWeights {
	w := reward.DefaultSoldierWeights()
	for n, v := range cfg.Reward.Soldier {
		_ = w.Set(n, v)
	}
	return w
}
