package soldier

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/regimentd/regiment/bus/wire"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/reward"
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
	utilP75   nearKth // the report's CPUUtilP75, near the last tick's
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
		utilP75: nearKth{buf: make([]float64, n)},
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
	if err := s.observer.Observe(ctx, &s.obs); err != nil {
		return TickResult{}, fmt.Errorf("observe: %w", err)
	}
	s.learn() // learned service times size their apps from this tick on
	d, have := s.Directive()
	valid := have && !d.Expired(now)
	inForce := &d
	if !valid {
		inForce = nil
	}
	s.pinOverrides(now) // operator pins rank above every policy (override.go)
	dec := Decide(s.state, &s.obs, inForce, now)
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
			if d := s.tick(); d != tick {
				tick = d
				t.Reset(d)
			}
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

func (s *Soldier) report(now time.Time, d wire.Directive, valid bool, demand float64, mode domains.Mode, fallback bool) wire.DomainReport {
	r := wire.DomainReport{
		Version: wire.Version, Cluster: s.cfg.Cluster, Domain: s.cfg.Domain, Seq: s.seq, SentAt: now,
		P99Seconds: s.obs.P99, ErrorRate: s.obs.ErrorRate, Mode: string(mode), Fallback: fallback,
		DemandCores: demand,
	}
	s.scratch = AddApps(&r, s.cfg.Apps, &s.obs, s.scratch[:0])
	r.CPUUtilP75 = s.utilP75.percentile(s.scratch, 0.75) // Percentile(s.scratch, 0.75)
	r.MemUtilP75, r.RestartRate = s.memAndRestarts()
	if len(s.rpsHist) == cap(s.rpsHist) {
		s.rpsSorted = deleteSorted(s.rpsSorted, s.rpsHist[0])
		copy(s.rpsHist, s.rpsHist[1:])
		s.rpsHist = s.rpsHist[:len(s.rpsHist)-1]
	}
	s.rpsHist = append(s.rpsHist, r.RPS)
	s.rpsSorted = insertSorted(s.rpsSorted, r.RPS)
	r.RPSP95 = s.rpsSorted[nearestRank(len(s.rpsSorted), 0.95)] // Percentile(rpsHist, 0.95)
	if valid {
		r.BudgetCores = d.Cores
		r.DirectiveTerm, r.DirectiveSeq = d.Term, d.Seq
		if d.Cores > 0 {
			r.BudgetUtilisation = r.CoresUsed / d.Cores
		}
	}
	return r
}

// memAndRestarts is the report's memory utilisation p75 (Percentile of the
// apps' at 0.75) and its restart rate (the apps' sum, in order), in one
// pass: when every app's memory utilisation has the same bits (as where
// nothing reports memory, all 0), that is the percentile, and nothing is
// gathered or selected.
func (s *Soldier) memAndRestarts() (memP75, restartRate float64) {
	apps := s.obs.Apps
	if len(apps) == 0 {
		return 0, 0
	}
	first, same := math.Float64bits(apps[0].MemUtil), true
	for i := range apps {
		restartRate += apps[i].RestartRate
		same = same && math.Float64bits(apps[i].MemUtil) == first
	}
	if same {
		return apps[0].MemUtil, restartRate
	}
	s.scratch = s.scratch[:0]
	for i := range apps {
		s.scratch = append(s.scratch, apps[i].MemUtil)
	}
	return Percentile(s.scratch, 0.75), restartRate
}

// AddApps adds the apps' telemetry in obs into r: request rate, live,
// starting and pending pods, cores used (ready and starting replicas x the
// app's CPU); it appends each app's CPU utilisation to util and returns it.
func AddApps(r *wire.DomainReport, apps []App, obs *Observation, util []float64) []float64 {
	for i := range obs.Apps {
		o, a := &obs.Apps[i], &apps[i]
		r.RPS += o.RPS
		r.LivePods += int(o.Ready)
		r.StartingPods += int(o.Starting)
		r.PendingPods += int(o.Pending)
		r.CoresUsed += float64(o.Ready+o.Starting) * a.CPU
		util = append(util, o.CPUUtil)
	}
	return util
}

// Percentile reorders xs and returns its q-quantile (nearest rank): the
// value of a domain report's CPUUtilP75 and RPSP95.
func Percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return kth(xs, nearestRank(len(xs), q))
}

// nearestRank is the index, counting from 0, of the q-quantile of n > 0
// sorted values by nearest rank.
func nearestRank(n int, q float64) int { return min(n-1, int(math.Ceil(q*float64(n)))-1) }

// nearKth is Percentile for a series of slices whose quantile moves little
// from one to the next, as a domain's utilisation p75 from tick to tick:
// one pass counts the values below a window around the last quantile and
// gathers those within it; when the quantile's rank falls within, it is
// selected among the few gathered, else among all as Percentile does.
// Either way it is the same value: the k-th smallest of the slice. The
// window's half-width doubles after a miss and halves while it gathers
// more than nearKthMany values. The zero value is ready.
type nearKth struct {
	last, halfWidth float64 // the last quantile, when known; the window's half-width
	known           bool
	buf             []float64 // the values gathered
}

// nearKthMany is how many values a window gathers before it narrows.
const nearKthMany = 24

// percentile is Percentile(xs, q), reordering xs or not.
func (w *nearKth) percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	k := nearestRank(len(xs), q)
	if w.known {
		if len(w.buf) < len(xs) {
			w.buf = make([]float64, len(xs))
		}
		lo, hi := w.last-w.halfWidth, w.last+w.halfWidth
		below, in, nan := 0, 0, false
		buf := w.buf[:len(xs)]
		for _, x := range xs {
			nan = nan || x != x
			below += b2i(x < lo)
			buf[in] = x
			in += b2i(lo <= x && x <= hi)
		}
		if !nan && below <= k && k < below+in {
			v := kth(buf[:in], k-below)
			if v == 0 {
				v = kth(xs, k) // the sign Percentile's zero has (see below)
			}
			if in > nearKthMany {
				w.halfWidth /= 2
			}
			w.last = v
			return v
		}
		w.halfWidth *= 2
		if !nan {
			// The rank fell outside the window: select among the values on
			// its side only. Zeros of both signs compare equal, and which one
			// a selection returns depends on the values it partitions: a
			// zero is selected again among all, here as in the window.
			side, j := 0, k
			if k < below {
				for _, x := range xs {
					buf[side] = x
					side += b2i(x < lo)
				}
			} else {
				for _, x := range xs {
					buf[side] = x
					side += b2i(x > hi)
				}
				j = k - below - in
			}
			if v := kth(buf[:side], j); v != 0 {
				return w.missed(v)
			}
		}
	}
	return w.missed(kth(xs, k))
}

// missed notes v, the quantile selected outside the window (or with no
// window yet), and returns it.
func (w *nearKth) missed(v float64) float64 {
	if !w.known || !(w.halfWidth > 0) || math.IsInf(w.halfWidth, 0) {
		w.halfWidth = max(0.01*math.Abs(v), 1e-9)
	}
	w.last, w.known = v, !math.IsNaN(v) && !math.IsInf(v, 0)
	return v
}

// b2i is 1 for true, 0 for false: the compiler makes it a flag, no branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// insertSorted inserts x into xs, sorted in cmp.Compare's order (NaNs
// first), and returns it; it does not allocate while len(xs) < cap(xs).
func insertSorted(xs []float64, x float64) []float64 {
	i, _ := slices.BinarySearch(xs, x)
	return slices.Insert(xs, i, x)
}

// deleteSorted removes one value equal to x in cmp.Compare's order from xs,
// sorted in that order, and returns it; xs must hold one.
func deleteSorted(xs []float64, x float64) []float64 {
	i, _ := slices.BinarySearch(xs, x)
	return slices.Delete(xs, i, i+1)
}

// kth is the k-th smallest of xs, counting from 0, in cmp.Compare's order:
// the xs[k] sorting xs would give. It reorders xs. Quickselect with a
// three-way partition, so runs of equal values cost nothing extra: expected
// O(len(xs)), where sorting a domain's 500 utilisations every tick was a
// tenth of a seed-scale tick.
func kth(xs []float64, k int) float64 {
	for _, x := range xs {
		if x != x {
			return kthNaN(xs, k)
		}
	}
	// Without NaNs, cmp.Compare is < and >: the same partitions, cheaper.
	for len(xs) > 16 {
		a, b, c := xs[0], xs[len(xs)/2], xs[len(xs)-1]
		if b < a {
			a, b = b, a
		}
		if c < b {
			b = c
			if c < a {
				b = a
			}
		}
		pivot := b
		lt, i, gt := 0, 0, len(xs)
		for i < gt {
			switch x := xs[i]; {
			case x < pivot:
				xs[lt], xs[i] = x, xs[lt]
				lt++
				i++
			case x > pivot:
				gt--
				xs[i], xs[gt] = xs[gt], x
			default:
				i++
			}
		}
		switch {
		case k < lt:
			xs = xs[:lt]
		case k >= gt:
			xs, k = xs[gt:], k-gt
		default:
			return xs[k]
		}
	}
	slices.Sort(xs)
	return xs[k]
}

// kthNaN is kth for xs holding NaNs, which cmp.Compare orders first.
func kthNaN(xs []float64, k int) float64 {
	for len(xs) > 16 {
		a, b, c := xs[0], xs[len(xs)/2], xs[len(xs)-1]
		if cmp.Less(b, a) {
			a, b = b, a
		}
		if cmp.Less(c, b) {
			b = c
			if cmp.Less(c, a) {
				b = a
			}
		}
		pivot := b // the median of the first, middle and last
		// xs[:lt] < pivot, xs[lt:i] == pivot, xs[gt:] > pivot.
		lt, i, gt := 0, 0, len(xs)
		for i < gt {
			switch cmp.Compare(xs[i], pivot) {
			case -1:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case 1:
				gt--
				xs[i], xs[gt] = xs[gt], xs[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			xs = xs[:lt]
		case k >= gt:
			xs, k = xs[gt:], k-gt
		default:
			return xs[k]
		}
	}
	slices.Sort(xs)
	return xs[k]
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
