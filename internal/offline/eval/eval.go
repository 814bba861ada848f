package eval

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/baseline"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/simcluster"
)

// Regiment is the policy name of Regiment itself (simcluster.Policy); every
// other name is a baseline.
const Regiment = "regiment"

// Independent is the ablation of Regiment without its Commander
// (simcluster.NewIndependent): its Soldiers as shipped, no budget, no
// headroom directive, no node plan. Beside Regiment it prices the hierarchy.
const Independent = simcluster.IndependentPolicy

// Options says what Run evaluates.
type Options struct {
	Config    *domains.Config // validated, defaults applied
	Scenarios []sim.Scenario  // names must differ
	Policies  []string        // names from Policies(), in report order
	Seeds     int             // runs per scenario x policy, >= 1; run k uses scenario seed + k
	// Workers is the number of runs simulated at once; <= 0 means
	// runtime.NumCPU().
	Workers int
	// Duration, when > 0, replaces every scenario's duration.
	Duration time.Duration
	// Progress, when not nil, is called after every finished run with the
	// number done and the total, from one goroutine at a time.
	Progress func(done, total int)
}

// Policies lists the policy names Run knows: every baseline (baseline.Names,
// in its order), then Regiment and its ablation Independent.
func Policies() []string { return append(slices.Clone(baseline.Names), Regiment, Independent) }

// WithAblation returns policies with Independent right after Regiment when
// Regiment is among them and Independent is not, so that the hierarchy's
// worth is one ratio; otherwise policies as they are.
func WithAblation(policies []string) []string {
	i := slices.Index(policies, Regiment)
	if i < 0 || slices.Contains(policies, Independent) {
		return policies
	}
	return slices.Insert(slices.Clone(policies), i+1, Independent)
}

// NewPolicy builds the named policy for simulation s of cfg; build s from
// baseline.World(name, cfg), the world the policy runs in. Regiment's
// Commander plans for the events the scenario announced (Sim.Planned) on
// top of cfg's calendar.
func NewPolicy(name string, cfg *domains.Config, s *sim.Sim) (sim.Policy, error) {
	switch name {
	case Regiment:
		return simcluster.NewPolicy(cfg.WithPlanned(s.Planned()), nil, nil, simcluster.WithPool(s))
	case Independent:
		return simcluster.NewIndependent(cfg, nil)
	}
	if !baseline.Known(name) {
		return nil, UnknownPolicy(name, Policies())
	}
	return baseline.New(name, cfg, s)
}

// UnknownPolicy is the error of a policy name that is none of known nor a
// bound: a malformed bound's own (oracle-expected+x: the form it wants),
// else one that lists known and the bounds' forms.
func UnknownPolicy(name string, known []string) error {
	if err := baseline.Malformed(name); err != nil {
		return err
	}
	hint := ""
	if s, ok := cli.Suggest(name, known); ok {
		hint = "; did you mean " + s + "?"
	}
	return fmt.Errorf("unknown policy %q%s (known: %s; for experiments, the bounds %s)", name, hint, strings.Join(known, ", "), baseline.Bounds)
}

// Validate reports every problem with the options at once.
func (o *Options) Validate() error {
	var errs []error
	if o.Config == nil {
		errs = append(errs, errors.New("no config"))
	}
	if len(o.Scenarios) == 0 {
		errs = append(errs, errors.New("no scenario"))
	}
	seen := map[string]bool{}
	for _, sc := range o.Scenarios {
		if sc.Scenario == nil {
			errs = append(errs, errors.New("nil scenario"))
			continue
		}
		if seen[sc.Name] {
			errs = append(errs, fmt.Errorf("scenario %q given twice", sc.Name))
		}
		seen[sc.Name] = true
	}
	if len(o.Policies) == 0 {
		errs = append(errs, errors.New("no policy"))
	}
	known := Policies()
	seenPol := map[string]bool{}
	for _, p := range o.Policies {
		if !slices.Contains(known, p) && !baseline.Known(p) {
			errs = append(errs, UnknownPolicy(p, known))
		}
		if seenPol[p] {
			errs = append(errs, fmt.Errorf("policy %q given twice", p))
		}
		seenPol[p] = true
	}
	if o.Seeds < 1 {
		errs = append(errs, fmt.Errorf("seeds = %d: want >= 1", o.Seeds))
	}
	if o.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration = %s: want >= 0", o.Duration))
	}
	return errors.Join(errs...)
}

// job is one run: indexes into Options.Scenarios and Options.Policies, and
// the seed index.
type job struct{ sc, pol, seed int }

// Run simulates every scenario x policy x seed on o.Workers goroutines and
// returns the report. It stops at the first failed run, or when ctx ends,
// and returns that error.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("evaluation options: %w", err)
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	var jobs []job
	for si := range o.Scenarios {
		for pi := range o.Policies {
			for k := range o.Seeds {
				jobs = append(jobs, job{si, pi, k})
			}
		}
	}
	workers = min(workers, len(jobs))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	results := make([]RunResult, len(jobs))
	next := make(chan int)
	done := make(chan error)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				r, err := runOne(ctx, &o, o.Scenarios[j.sc], o.Policies[j.pol], j.seed)
				if err == nil {
					results[i] = r
				}
				done <- err
			}
		})
	}
	go func() {
		defer close(next)
		for i := range jobs {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(done) }()

	var first error
	finished := 0
	for err := range done {
		if err != nil {
			if first == nil {
				first = err
				cancel()
			}
			continue
		}
		finished++
		if o.Progress != nil && first == nil {
			o.Progress(finished, len(jobs))
		}
	}
	if first == nil && finished < len(jobs) {
		first = ctx.Err()
	}
	if first != nil {
		return nil, first
	}
	return newReport(&o, results, time.Since(start).Seconds()), nil
}

// runOne simulates scenario sc with the named policy at seed index k.
func runOne(ctx context.Context, o *Options, sc sim.Scenario, policy string, k int) (RunResult, error) {
	scn := *sc.Scenario
	scn.Seed += uint64(k)
	if o.Duration > 0 {
		scn.Duration = o.Duration
	}
	fail := func(err error) (RunResult, error) {
		return RunResult{}, fmt.Errorf("run %s/%s/seed %d: %w", sc.Name, policy, scn.Seed, err)
	}
	if scn.Warmup >= scn.Duration {
		return fail(fmt.Errorf("the duration %s is within the scenario's warm-up (%s): no tick would be accounted", scn.Duration, scn.Warmup))
	}
	cfg := baseline.World(policy, o.Config) // hpa-priority's world has PriorityClasses
	s, err := sim.New(cfg, &scn, sc.Traces)
	if err != nil {
		return fail(err)
	}
	p, err := NewPolicy(policy, cfg, s)
	if err != nil {
		return fail(err)
	}
	m := newMeter(cfg, s, k == 0)
	start := time.Now()
	for i := 0; !s.Done(); i++ {
		if i%256 == 0 && ctx.Err() != nil {
			return fail(ctx.Err())
		}
		p.Decide(s.Now(), s.Telemetry(), s.Targets())
		s.Step()
		m.observe(s)
	}
	wall := time.Since(start).Seconds()
	if e, ok := p.(interface{ Err() error }); ok && e.Err() != nil {
		return fail(e.Err())
	}
	r := m.result(s)
	r.Scenario, r.Policy, r.SeedIndex, r.Seed = sc.Name, policy, k, scn.Seed
	r.WallSeconds = wall
	return r, nil
}
