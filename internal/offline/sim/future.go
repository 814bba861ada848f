package sim

import (
	"math/rand/v2"
	"slices"
	"time"
)

// MaxUtilisation is the utilisation above which an app's queue stops being
// stationary in the simulator: arrivals beyond MaxUtilisation x capacity build
// the backlog. A policy that keeps lambda <= MaxUtilisation x c x mu never
// builds one.
const MaxUtilisation = maxRho

// Future replays ahead of the simulation the demand it will see: each app's
// exact arrival rate at a future tick (trace, event multipliers, the very
// noise Step will draw, and the calls of its callers) and its service-time
// factor from events. It is what an oracle knows and no real policy can.
//
// A Future draws from its own copy of the simulation's random stream, so the
// simulation's output is the same whether or not a Future reads ahead. It
// borrows the simulation's scratch state while it computes a tick and restores
// it before returning, so it must not be used concurrently with Step.
type Future struct {
	s       *Sim
	r       *rand.Rand
	nz      *noise    // its copy of the simulation's arrival noise
	noisy   bool      // the arrivals carry the noise Step draws (Future), or not (ExpectedFuture)
	next    int       // tick the next call to Next describes
	lambda  []float64 // arrivals at the last tick read, 1/s
	slow    []float64 // service-time factors at the last tick read
	saved   []float64 // the simulation's arrival rates while Next borrows them
	lagRing []float64 // as Sim.lagRing, up to the last tick read
}

// Future returns a replay of the demand from the tick after the current one:
// its first Next describes the tick the next Step runs.
func (s *Sim) Future() *Future {
	f := &Future{
		s:       s,
		r:       rand.New(rand.NewPCG(s.sc.Seed, 0x73696d756c61746f)), // the seed and stream of New
		nz:      s.nz.clone(),
		noisy:   true,
		next:    s.step + 1,
		lambda:  make([]float64, len(s.apps)),
		slow:    make([]float64, len(s.apps)),
		saved:   make([]float64, len(s.apps)),
		lagRing: slices.Clone(s.lagRing),
	}
	// Every Step with noise draws exactly one normal per app, in app order:
	// skip the draws of the steps already run.
	if s.multNoise() > 0 {
		for range s.step * len(s.apps) {
			f.r.NormFloat64()
		}
	}
	return f
}

// ExpectedFuture is Future without the noise: each app's arrivals are its
// trace demand times the events' multipliers, plus its callers' calls, as
// Step draws them with the scenario's noise at zero (calls made before the
// Future, call_lag late, arrive as they were made). The per-app noise
// (multiplicative or Poisson) is white, one independent draw per app and
// tick of mean 1; a domain's burst (burst_sigma) is of mean 1 too but
// correlated from minute to minute (burst_correlation), so a forecaster that
// reads it could know a little more than this of the next minutes. Without
// bursts this is the most any forecast can know of the demand: the scenario
// itself, events included.
func (s *Sim) ExpectedFuture() *Future {
	f := s.Future()
	f.noisy = false
	return f
}

// Next reads the next tick: its number (the simulation's step count once that
// Step has run), each app's arrival rate in 1/s and each app's service-time
// factor (1 without a slow-dependency event). The slices are owned by the
// Future and overwritten by the next call. It does not allocate.
func (f *Future) Next() (tick int, lambda, slow []float64) {
	s := f.s
	tick = f.next
	f.next++
	for i := range s.apps {
		f.saved[i] = s.apps[i].lambda
	}
	own, ownRing, ownNoise := s.r, s.lagRing, s.nz
	s.r, s.lagRing, s.nz = f.r, f.lagRing, f.nz
	s.events(time.Duration(tick) * s.tick)
	elapsed := float64(tick) * s.dt / 60 // as Step computes it
	m := int(elapsed)
	s.arrivals(tick, m, elapsed-float64(m), f.noisy)
	s.r, s.lagRing, s.nz = own, ownRing, ownNoise
	for i := range s.apps {
		a := &s.apps[i]
		f.lambda[i], f.slow[i] = a.lambda, a.slow
		a.lambda = f.saved[i]
	}
	s.events(time.Duration(s.step) * s.tick)
	return tick, f.lambda, f.slow
}

// StepsDone is the number of Steps run so far: the tick the current
// telemetry and Now describe.
func (s *Sim) StepsDone() int { return s.step }

// StartupTicks is how many ticks after it is scheduled a replica of app id
// becomes ready: the app's startup time in whole ticks, at least one.
func (s *Sim) StartupTicks(id int) int { return int(s.apps[id].startupTicks) }

// ProvisionTicks is how many ticks after the provisioner starts it a node
// becomes ready: the node provision time in whole ticks, at least one.
func (s *Sim) ProvisionTicks() int { return s.pool.provisionTicks }

// ProvisionerPerTick is the provisioner's refill per tick, in node starts:
// provisioner_rate x tick for the token bucket, the cloud's sustained launch
// rate for cluster-autoscaler and karpenter (see ProvisionerStarts); its
// long-run rate when the bucket can carry the fraction of a start from tick
// to tick. ProvisionerStarts counts the starts it actually makes.
func (s *Sim) ProvisionerPerTick() float64 {
	if s.pool.kind != kindBucket {
		return s.pool.cloud.sustainedPerTick()
	}
	return s.pool.ratePerTick
}

// ServiceRate is the service rate of one concurrency slot of app id, 1/s,
// without events: 1 / service time.
func (s *Sim) ServiceRate(id int) float64 { return s.apps[id].mu }

// Exceeds is P(T > t), the probability that a request's response time (wait
// plus service) exceeds t seconds; P99 is the t where it is 0.01. One
// evaluation is cheaper than P99's root finding, so `q.Exceeds(slo) <= 0.01`
// is the fast test of p99 <= slo.
func (q Queue) Exceeds(t float64) float64 {
	p, _ := q.sojourn().survival(t)
	return p
}
