package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// maxRho caps the utilisation used for the steady-state part of an overloaded
// queue; the excess builds the backlog instead.
const maxRho = 0.98

// Sim is a deterministic simulation of one contested node pool shared by the
// config's domains, driven by a scenario. It is not safe for concurrent use.
type Sim struct {
	cfg   *domains.Config
	sc    *domains.Scenario
	apps  []app
	doms  []dom
	order []int32 // app ids, callers before callees
	// callers is order's apps with dependencies: the ones whose calls
	// arrivals adds and whose callees addCallees adds.
	callers []int32
	byPri   []int32 // app ids, highest priority (lowest tier) first: the tiers of sched, the initial eviction order
	evs     []event

	tick  time.Duration
	dt    float64 // tick, seconds
	steps int     // ticks in the scenario
	step  int     // ticks done
	r     *rand.Rand
	// nz is the arrival noise of issue 31's traffic structure (Poisson
	// counts, domain bursts), on its own stream; burstMult is each domain's
	// burst multiplier this tick.
	nz        *noise
	burstMult []float64

	// startRing[id*ringLen + k] counts replicas of app id that become ready at
	// a tick t with t % ringLen == k.
	startRing []int32
	ringLen   int

	pool    pool
	sched   scheduler // the pending replicas' queue and preemption (schedule.go)
	targets []int32

	// lagRing keeps the arrival rates of the apps whose calls lag: an app
	// with a call lag of L ticks has L+1 slots from lagAt, its rate at tick t
	// in slot t % (L+1).
	lagRing []float64

	tel    []Telemetry // ring of lag+1 snapshots
	mixes  []mixture   // tel[k].mix, the inputs of its domain p99s
	lag    int         // ticks of telemetry staleness
	terms  []mixTerm   // scratch for the domain p99s
	solved []solved    // each domain's latest p99 solve
	metric accum
	// readyCores and failing are record's per-domain sums: cores of ready
	// replicas, and arrivals that fail (1/s).
	readyCores, failing []float64

	// queues[id] is app id's steady-state queue this tick, waitProb[id] its
	// Erlang C; byServers lists the app ids by their queue's servers, for
	// erlangCs.
	queues    []Queue
	waitProb  []float64
	byServers []int32
	newtons   []pendingNewton // solveP99s's scratch, one per app
}

// app is one app's static description and dynamic state.
type app struct {
	domain       int32
	set          int32
	cpu          float64 // cores per replica
	foot         float64 // node cores a replica takes: cpu / (1 - packing_loss)
	tier         int32   // index of its domain's priority in sched.tiers
	cpuLimit     float64 // CPU limit over CPU request, >= 1
	mu           float64 // service rate per concurrency slot, 1/s
	conc         int32
	maxReplicas  int32 // its set's max_replicas
	startupTicks int32
	timeout      float64 // seconds
	callRatio    float64
	callLag      int32 // ticks its calls trail its arrivals
	lagAt        int32 // its first slot in Sim.lagRing
	deps         []int32
	demand       demand

	ready, pending int32
	starting       int32
	lastTarget     int32
	backlog        float64 // requests
	slow           float64 // service-time factor from events this tick

	// this tick
	lambda float64 // arrivals, 1/s
	p99    float64
	errs   float64 // error rate
	// util is the busy share of the ready replicas' serving capacity, in
	// [0, 1]; reqUtil is their CPU use over their CPU request, in
	// [0, cpuLimit]: the demand over the request's worth of capacity, which a
	// burstable pod's usage follows above its request up to its limit.
	util    float64
	reqUtil float64
}

// servers is how many requests the app's ready replicas serve at once.
func (a *app) servers() int32 { return a.ready * a.conc }

type dom struct {
	slo        float64 // p99 objective, seconds
	budget     float64 // error rate objective
	first, n   int32   // app ids first..first+n-1 (-1, 0 without apps); domains in id order (Config.Apps)
	prio       int
	name       string
	multiplier float64 // demand multiplier from events this tick
}

type event struct {
	ev          *domains.Event
	domain      int32 // demand events
	first, last int32 // app id range of a slow-dependency event
}

// New builds a simulation of cfg driven by sc, with traces[domain] the loaded
// trace series of each traffic block (trace.Load). cfg and sc must be
// validated, with defaults applied.
func New(cfg *domains.Config, sc *domains.Scenario, traces map[string][]trace.Series) (*Sim, error) {
	if sc.Duration <= 0 {
		return nil, errors.New("scenario duration must be positive")
	}
	expanded := cfg.Apps()
	dem, err := buildDemand(cfg, expanded, sc, traces)
	if err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, sc: sc, tick: cfg.Soldier.Tick}
	s.dt = s.tick.Seconds()
	s.steps = int(sc.Duration / s.tick)
	s.r = rand.New(rand.NewPCG(sc.Seed, 0x73696d756c61746f))
	s.nz = newNoise(cfg, sc)
	s.burstMult = make([]float64, len(cfg.Domains))
	s.lag = int((cfg.Cluster.TelemetryLag + s.tick - 1) / s.tick)

	s.doms = make([]dom, len(cfg.Domains))
	for i, d := range cfg.Domains {
		s.doms[i] = dom{slo: d.SLO.LatencyP99Seconds(), budget: d.SLO.ErrorBudget, prio: d.Priority, name: d.Name, first: -1}
	}
	s.apps = make([]app, len(expanded))
	maxStartup := int32(1)
	lagSlots := 0
	for i, a := range expanded {
		x := &s.apps[i]
		x.domain, x.set = int32(a.Domain), int32(a.Set)
		x.cpu = a.CPUPerReplica
		x.foot = a.CPUPerReplica / (1 - cfg.Cluster.PackingLoss)
		x.cpuLimit = a.CPULimitRatio
		x.mu = 1 / a.ServiceTime.Seconds()
		x.conc = int32(a.Concurrency)
		x.maxReplicas = int32(a.MaxReplicas)
		x.startupTicks = int32(max(1, (a.StartupTime+s.tick-1)/s.tick))
		maxStartup = max(maxStartup, x.startupTicks)
		x.timeout = a.Timeout.Seconds()
		x.callRatio = a.CallRatio
		for _, d := range a.Deps {
			x.deps = append(x.deps, int32(d))
		}
		if len(x.deps) > 0 {
			x.callLag = int32((a.CallLag + s.tick/2) / s.tick) // nearest whole tick
		}
		if x.callLag > 0 {
			x.lagAt = int32(lagSlots)
			lagSlots += int(x.callLag) + 1
		}
		x.demand = dem[i]
		d := &s.doms[a.Domain]
		if d.first < 0 {
			d.first = int32(i)
		}
		d.n++
	}
	if s.order, err = topoOrder(s.apps); err != nil {
		return nil, err
	}
	for _, id := range s.order {
		if len(s.apps[id].deps) > 0 {
			s.callers = append(s.callers, id)
		}
	}
	s.byPri = make([]int32, len(s.apps))
	for i := range s.byPri {
		s.byPri[i] = int32(i)
	}
	slices.SortStableFunc(s.byPri, func(a, b int32) int {
		return s.doms[s.apps[a].domain].prio - s.doms[s.apps[b].domain].prio
	})
	for i := range sc.Events {
		e := &sc.Events[i]
		ev := event{ev: e, domain: -1, first: -1, last: -1}
		switch e.Kind {
		case domains.EventSlowDependency:
			for j, a := range expanded {
				if cfg.Domains[a.Domain].Name+"/"+a.AppSet.Name == e.App {
					if ev.first < 0 {
						ev.first = int32(j)
					}
					ev.last = int32(j)
				}
			}
		default:
			ev.domain = int32(cfg.Domain(e.Domain))
		}
		s.evs = append(s.evs, ev)
	}
	s.ringLen = int(maxStartup) + 1
	s.startRing = make([]int32, len(s.apps)*s.ringLen)
	s.targets = make([]int32, len(s.apps))
	s.lagRing = make([]float64, lagSlots)
	s.terms = make([]mixTerm, 0, len(s.apps))
	s.readyCores, s.failing = make([]float64, len(s.doms)), make([]float64, len(s.doms))
	s.queues = make([]Queue, len(s.apps))
	s.waitProb = make([]float64, len(s.apps))
	s.newtons = make([]pendingNewton, 0, len(s.apps))
	s.byServers = slices.Clone(s.order)
	s.tel = make([]Telemetry, s.lag+1)
	s.mixes = make([]mixture, s.lag+1)
	s.solved = make([]solved, len(s.doms))
	for di := range s.solved {
		s.solved[di].tick = -2
	}
	for i := range s.tel {
		s.mixes[i] = newMixture(s)
		s.tel[i] = Telemetry{Apps: make([]AppTelemetry, len(s.apps)), Domains: make([]DomainTelemetry, len(s.doms)), mix: &s.mixes[i]}
	}
	s.sched.init(s, &cfg.Cluster)
	s.metric.init(s)
	s.pool = newPool(&cfg.Cluster, s.dt, s.steps)
	s.initialState()
	return s, nil
}

// initialState sizes every app for its demand at the start at the Soldier's
// target utilisation, all replicas ready, on just enough nodes.
func (s *Sim) initialState() {
	s.events(0)
	s.arrivals(0, 0, 0, false)
	cores := 0.0
	for i := range s.apps {
		a := &s.apps[i]
		set := s.cfg.Domains[a.domain].AppSets[a.set]
		n := int32(math.Ceil(a.lambda / (a.mu * float64(a.conc) * s.cfg.Soldier.TargetUtilisation)))
		n = min(max(n, int32(set.MinReplicas)), int32(set.MaxReplicas))
		a.ready, a.lastTarget, s.targets[i] = n, n, n
		cores += float64(n) * a.foot
	}
	s.pool.nodes = min(int32(math.Ceil(cores/s.pool.nodeCores)), s.pool.maxNodes)
	s.pool.scheduled = cores
	if over := cores - float64(s.pool.nodes)*s.pool.nodeCores; over > 0 {
		// Evict from the lowest priority until the rest fits.
		for k := len(s.byPri) - 1; k >= 0 && over > 0; k-- {
			a := &s.apps[s.byPri[k]]
			id := s.byPri[k]
			for a.ready > 0 && over > 0 {
				a.ready--
				a.pending++
				s.enqueue(id, 1)
				over -= a.foot
				s.pool.scheduled -= a.foot
			}
		}
	}
	s.measure()
	s.record()
	for i := 1; i < len(s.tel); i++ {
		s.tel[i].copyFrom(&s.tel[0])
	}
}

// Targets is the replica target per app id that the next Step applies. A
// policy writes into it between steps; the slice is owned by the simulator.
func (s *Sim) Targets() []int32 { return s.targets }

// TelemetryLagTicks is how many ticks old Telemetry is: TelemetryLag in
// whole ticks, rounded up.
func (s *Sim) TelemetryLagTicks() int { return s.lag }

// Telemetry is the newest telemetry a policy may see: TelemetryLag old.
func (s *Sim) Telemetry() *Telemetry {
	return &s.tel[(s.step+1)%len(s.tel)]
}

// NodeCounts is the pool's ready nodes, and its nodes started or requested
// and not ready yet, as the newest telemetry a policy may see shows them
// (TelemetryLag old): what a node watcher would count.
func (s *Sim) NodeCounts() (ready, pending int) {
	c := &s.Telemetry().Cluster
	return int(c.Nodes), int(c.ProvisioningNodes + c.QueuedNodes)
}

// Now is the simulated time at the current tick.
func (s *Sim) Now() time.Time { return s.sc.Start.Add(time.Duration(s.step) * s.tick) }

// Planned is the operator's calendar the scenario announced
// (domains.Scenario.Planned), for the config of a Commander that runs on
// this simulation (Config.WithPlanned).
func (s *Sim) Planned() []domains.Planned { return s.sc.Planned() }

// Done reports whether the scenario has run to its end.
func (s *Sim) Done() bool { return s.step >= s.steps }

// Tick is the simulation step, the Soldier tick of the config.
func (s *Sim) Tick() time.Duration { return s.tick }

// Steps is the number of ticks the scenario lasts.
func (s *Sim) Steps() int { return s.steps }

// Step advances the simulation by one tick: it applies the targets, runs the
// pods and nodes, replays the traffic, and measures latency and errors.
func (s *Sim) Step() {
	s.step++
	s.applyTargets()
	s.pool.advance(s.step)
	s.startPods()
	s.schedule()
	s.pool.plan(s.step)
	s.events(time.Duration(s.step) * s.tick)
	elapsed := float64(s.step) * s.dt / 60
	m := int(elapsed)
	s.arrivals(s.step, m, elapsed-float64(m), true)
	s.measure()
	s.record()
}

// applyTargets reconciles each app's replicas with its target: new replicas
// wait to be scheduled, queued in the tick's creation order
// (scheduler.created); removals take pending, then starting, then ready ones.
func (s *Sim) applyTargets() {
	created := false
	for i := range s.apps {
		a := &s.apps[i]
		t := max(s.targets[i], 0)
		if t != a.lastTarget {
			if s.metric.counted(s.step) {
				s.metric.actions[a.domain]++
			}
			if t > a.lastTarget {
				s.metric.rise(i, s.step)
			}
			a.lastTarget = t
		}
		have := a.ready + a.starting + a.pending
		switch {
		case t > have:
			a.pending += t - have
			s.sched.created[i] = t - have
			created = true
		case t < have:
			cut := have - t
			k := min(cut, a.pending)
			a.pending -= k
			cut -= k
			if cut > 0 && a.starting > 0 {
				cut -= s.cancelStarting(i, cut)
			}
			if cut > 0 {
				a.ready -= cut
				s.pool.scheduled -= float64(cut) * a.foot
			}
		}
	}
	if created {
		s.queueCreated()
	}
}

// cancelStarting removes up to n starting replicas of app i, newest first,
// and returns how many it removed.
func (s *Sim) cancelStarting(i int, n int32) int32 {
	a := &s.apps[i]
	ring := s.startRing[i*s.ringLen : (i+1)*s.ringLen]
	removed := int32(0)
	for back := int32(s.ringLen - 1); back >= 1 && removed < n; back-- {
		k := (s.step + int(back)) % s.ringLen
		take := min(ring[k], n-removed)
		ring[k] -= take
		removed += take
	}
	a.starting -= removed
	s.pool.scheduled -= float64(removed) * a.foot
	return removed
}

// startPods turns replicas whose startup delay has passed ready.
func (s *Sim) startPods() {
	k := s.step % s.ringLen
	for i := range s.apps {
		c := &s.startRing[i*s.ringLen+k]
		if *c != 0 {
			a := &s.apps[i]
			a.ready += *c
			a.starting -= *c
			*c = 0
		}
	}
}

// events sets each domain's demand multiplier and each app's service-time
// factor at offset t.
func (s *Sim) events(t time.Duration) {
	for i := range s.doms {
		s.doms[i].multiplier = 1
	}
	for i := range s.apps {
		s.apps[i].slow = 1
	}
	for _, e := range s.evs {
		f := e.ev.Factor(t)
		if f == 0 {
			continue
		}
		if e.domain >= 0 {
			s.doms[e.domain].multiplier *= 1 + (e.ev.Multiplier-1)*f
			continue
		}
		for j := e.first; j >= 0 && j <= e.last; j++ {
			s.apps[j].slow *= 1 + (e.ev.ServiceTimeFactor-1)*f
		}
	}
}

// noHistory is the tick PeakRPS passes to arrivals: calls arrive with the
// requests that cause them, without call lag, and lagRing is left alone.
const noHistory = -1

// arrivals sets every app's arrival rate at tick t, minute m + frac: its
// trace demand times event multipliers and noise, plus calls from its
// callers, each call_lag late. Ticks must come in order from 0 (or from a
// copy of lagRing, as Future's); before tick 0, an app's rate was its rate at
// tick 0. The noise (noisy) is the scenario's: its domain bursts, then per
// app either the multiplicative draw or the tick's Poisson count.
func (s *Sim) arrivals(t, m int, frac float64, noisy bool) {
	sigma := s.multNoise()
	bursts := noisy && s.nz.bursty
	if bursts {
		s.nz.advance(m, frac, s.burstMult)
	}
	poisson := noisy && s.nz.poisson
	for i := range s.apps {
		a := &s.apps[i]
		l := a.demand.rps(m, frac) * s.doms[a.domain].multiplier
		if bursts {
			l *= s.burstMult[a.domain]
		}
		if noisy && sigma > 0 {
			l *= max(0, 1+sigma*s.r.NormFloat64())
		}
		if poisson {
			l = s.nz.count(l, s.dt)
		}
		a.lambda = l
	}
	for _, id := range s.callers {
		a := &s.apps[id]
		calls := a.lambda
		if a.callLag > 0 && t != noHistory {
			calls = s.lagged(a, t)
		}
		for _, d := range a.deps {
			s.apps[d].lambda += a.callRatio * calls
		}
	}
}

// multNoise is the sigma of the multiplicative per-app noise: the
// scenario's Noise, or 0 under Poisson arrivals.
func (s *Sim) multNoise() float64 {
	if s.sc.ArrivalNoise == domains.NoisePoisson {
		return 0
	}
	return s.sc.Noise
}

// lagged records app a's arrival rate at tick t, complete with its callers'
// calls, and returns its rate at tick t - a.callLag.
func (s *Sim) lagged(a *app, t int) float64 {
	ring := s.lagRing[a.lagAt : a.lagAt+a.callLag+1]
	if t == 0 {
		for k := range ring {
			ring[k] = a.lambda
		}
		return a.lambda
	}
	ring[t%len(ring)] = a.lambda
	return ring[(t+1)%len(ring)] // t - callLag, modulo callLag + 1
}

// measure runs every app's queue for one tick; record sums the domains and
// the cluster. Each app's own queue comes first (steadyQueues, queue,
// solveP99s: independent of the other apps, so batched), then its callees'
// share, callees before callers.
func (s *Sim) measure() {
	mix := s.mixNow().apps
	s.steadyQueues()
	em := newExpMemo() // apps of one app set share e^{-mu timeout}
	for i := range s.apps {
		s.queue(int32(i), &em, &mix[i])
	}
	s.solveP99s(mix)
	for k := len(s.callers) - 1; k >= 0; k-- {
		id := s.callers[k]
		s.addCallees(&s.apps[id], &mix[id])
	}
}

// mixNow is the mixture of the telemetry this tick records: measure writes
// each app's sojourn and shift there, which the domain p99 and
// AddCascades read.
func (s *Sim) mixNow() *mixture { return s.tel[s.step%len(s.tel)].mix }

// steadyQueues sets every app's steady-state queue and its Erlang C, the
// probability that a request waits; see queue. The Erlang C recursions, one
// step per server, run four at a time (erlangCs).
func (s *Sim) steadyQueues() {
	for i := range s.apps {
		a := &s.apps[i]
		mu := a.mu
		if a.slow != 1 {
			mu /= a.slow
		}
		c := a.servers()
		s.queues[i] = Queue{}
		if c > 0 {
			capacity := float64(c) * mu
			s.queues[i] = Queue{Lambda: min(a.lambda, maxRho*capacity), Mu: mu, C: int(c)}
		}
	}
	// Servers change little from tick to tick: an insertion sort of last
	// tick's order is nearly linear.
	for k := 1; k < len(s.byServers); k++ {
		id := s.byServers[k]
		j := k
		for ; j > 0 && s.queues[s.byServers[j-1]].C > s.queues[id].C; j-- {
			s.byServers[j] = s.byServers[j-1]
		}
		s.byServers[j] = id
	}
	erlangCs(s.queues, s.byServers, s.waitProb)
}

// solveP99s adds each serving app's steady-state p99 to its backlog wait:
// sojourn.quantile, in two passes. The first settles the apps that need no
// Newton step and takes the others' first exponential (newtonFrom.first),
// one independent of the next, so the processor overlaps them; the second
// runs their Newton steps. The same operations on the same values as
// quantile: the same bits.
func (s *Sim) solveP99s(mix []mixApp) {
	work := s.newtons[:0]
	for i := range s.apps {
		a := &s.apps[i]
		if a.servers() == 0 {
			continue
		}
		soj := &mix[i].soj
		if soj.c < negligibleWait {
			a.p99 += p99Tail.log1P / soj.mu
			continue
		}
		n, ok := soj.newtonStart(&p99Tail)
		switch {
		case !ok:
			a.p99 += soj.quantile(&p99Tail)
		case n.done:
			a.p99 += n.t0
		default:
			work = append(work, pendingNewton{id: int32(i), from: n, r0: n.first()})
		}
	}
	for k := range work {
		w := &work[k]
		s.apps[w.id].p99 += mix[w.id].soj.newton(w.from, w.r0)
	}
}

// pendingNewton is an app's p99 solve between solveP99s's passes.
type pendingNewton struct {
	id   int32
	from newtonFrom
	r0   float64 // from.first()
}

// queue advances app id's own queue by a tick, all but the steady-state p99
// (solveP99s) and its callees' share (addCallees); em is the timeout check's
// e^{-mu t}, shared along a run of apps, and m receives the app's sojourn
// and shift (its backlog wait; addCallees adds its callees' p99s), in the
// telemetry this tick records (mixNow). The steady state is an
// M/M/c queue with c = ready x concurrency; demand beyond maxRho of capacity
// builds a backlog that carries over and delays every request by
// backlog/capacity; requests that would wait longer than the timeout fail,
// as do calls whose callee failed. With capacity = c x mu, the request's
// worth of service,
//
//	util    = min(lambda / capacity, 1)          busy share of the capacity
//	reqUtil = min(lambda / capacity, cpuLimit)   CPU used over CPU requested
//
// reqUtil is what metrics-server reports for a burstable pod: demand beyond
// the request shows as usage above 100% of it, up to the limit. The service
// capacity stays the request's (see doc.go): bursting changes what the
// metrics show, not how fast requests are served.
func (s *Sim) queue(id int32, em *expMemo, m *mixApp) {
	a := &s.apps[id]
	dt := s.dt
	mu := a.mu
	if a.slow != 1 { // divisions only where they change something
		mu /= a.slow
	}
	c := a.servers()
	arrived := a.lambda * dt
	dropped := 0.0
	if c == 0 {
		// Nobody serves: every request times out.
		a.backlog = min(a.backlog+arrived, a.lambda*a.timeout)
		*m = mixApp{soj: sojourn{c: 0, mu: 1e6, theta: 1e6}, shift: a.timeout}
		a.p99 = a.timeout
		a.util, a.reqUtil = 0, 0
		a.errs = 0
		if a.lambda > 0 {
			a.errs = 1
		}
	} else {
		capacity := float64(c) * mu
		a.backlog = max(0, a.backlog+(a.lambda-maxRho*capacity)*dt)
		wait := 0.0
		if a.backlog > 0 {
			wait = a.backlog / capacity
		}
		if wait > a.timeout {
			dropped = (wait - a.timeout) * capacity
			a.backlog = a.timeout * capacity
			wait = a.timeout
		}
		soj := s.queues[id].sojournWaiting(s.waitProb[id])
		*m = mixApp{soj: soj, shift: wait}
		a.p99 = wait // solveP99s adds the sojourn's p99
		load := a.lambda / capacity
		a.util, a.reqUtil = min(load, 1), min(load, a.cpuLimit)
		a.errs = 0
		if arrived > 0 {
			late, _ := soj.survivalMemo(a.timeout-wait, em)
			timedOut := 0.0
			if dropped > 0 {
				timedOut = dropped / arrived
			}
			a.errs = min(1, timedOut+late)
		}
	}
}

// addCallees adds app a's callees' p99s to its p99 and their errors to its
// own: a call waits for its callee and fails with it. Callees come first.
func (s *Sim) addCallees(a *app, m *mixApp) {
	for _, d := range a.deps {
		callee := &s.apps[d]
		a.p99 += callee.p99
		m.shift += callee.p99
		a.errs = 1 - (1-a.errs)*(1-callee.errs)
	}
}

// record accumulates metrics and writes this tick's telemetry. It walks
// the apps domain by domain (a domain's apps are a range of ids, the
// domains in id order: the apps in id order), summing in locals, each sum
// in the apps' order as ever.
func (s *Sim) record() {
	tel := &s.tel[s.step%len(s.tel)]
	tel.At = s.Now()
	tel.mix.forget()
	tel.mix.tick = s.step
	pending := int32(0)
	mix := tel.mix.apps // this tick's sojourns and shifts (measure)
	em := newExpMemo()  // badShare's e^{-mu t}, along a run of apps
	for di := range s.doms {
		d := &s.doms[di]
		first := int(d.first)
		if d.n == 0 {
			first = 0
		}
		dt := DomainTelemetry{}
		readyCores, failing := 0.0, 0.0
		m := s.metric.domain(di)
		for i := first; i < first+int(d.n); i++ {
			a := &s.apps[i]
			tel.Apps[i] = AppTelemetry{
				RPS: a.lambda, P99: a.p99, ErrorRate: a.errs, CPUUtil: a.util, CPURequestUtil: a.reqUtil, Backlog: a.backlog,
				Ready: a.ready, Starting: a.starting, Pending: a.pending, Target: a.lastTarget,
			}
			cores := float64(a.ready+a.starting) * a.cpu
			busy := a.util * float64(a.ready) * a.cpu
			dt.RPS += a.lambda
			dt.CoresUsed += cores
			dt.CPUUtil += busy // busy cores, divided below
			dt.Ready += a.ready
			dt.Starting += a.starting
			dt.Pending += a.pending
			readyCores += float64(a.ready) * a.cpu
			failing += a.lambda * a.errs
			pending += a.pending
			breach := a.lambda > 0 && (a.p99 > d.slo || a.errs > d.budget)
			if breach {
				dt.BreachedApps++
				if a.ready >= a.maxReplicas {
					dt.BreachedAtMax++
				}
			}
			bad := 0.0
			if a.lambda > 0 && s.step > 0 {
				bad = badShare(a, &mix[i], d.slo, &em)
			}
			m.app(i, a, cores, busy, bad, breach, s.step)
		}
		s.metric.endDomain(di, &m)
		if readyCores > 0 {
			dt.CPUUtil /= readyCores
		}
		if dt.RPS > 0 {
			dt.ErrorRate = failing / dt.RPS // arrival-weighted
		}
		tel.Domains[di] = dt
	}
	p := &s.pool
	tel.Cluster = ClusterTelemetry{
		Nodes: p.nodes, ProvisioningNodes: p.provisioning, QueuedNodes: p.outstanding(),
		FreeCores:           (float64(p.nodes)*p.nodeCores - p.scheduled) * s.sched.packing, // what pods may still take
		PendingPods:         pending,
		CostPerHour:         float64(p.nodes+p.provisioning) * p.nodeCores * p.costPerCoreHour,
		CapacityTargetCores: p.targetCores * s.sched.packing,
	}
	s.metric.tick(p, pending, s.step)
}

// topoOrder orders app ids so that every caller comes before its callees.
func topoOrder(apps []app) ([]int32, error) {
	indeg := make([]int32, len(apps))
	for i := range apps {
		for _, d := range apps[i].deps {
			indeg[d]++
		}
	}
	order := make([]int32, 0, len(apps))
	for i := range apps {
		if indeg[i] == 0 {
			order = append(order, int32(i))
		}
	}
	for k := 0; k < len(order); k++ {
		for _, d := range apps[order[k]].deps {
			if indeg[d]--; indeg[d] == 0 {
				order = append(order, d)
			}
		}
	}
	if len(order) != len(apps) {
		return nil, fmt.Errorf("app dependencies form a cycle")
	}
	return order, nil
}
