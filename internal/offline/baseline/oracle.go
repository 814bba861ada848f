package baseline

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// Oracle knows the future: the exact arrival rates the simulator will draw,
// noise included, and the service-time factors of its events (sim.Future).
// For every app and future tick it finds the fewest replicas that keep the
// app within its domain's SLO at that tick (need, below), and it gives nodes
// their lead time: it sets the pool's capacity target (Sim.SetCapacityTarget)
// so that nodes are ready when its replicas are scheduled, and then sizes
// each replica target only for the time a replica takes to start.
//
// Timing, in ticks, of a decision at tick k (the Decide before Step k+1),
// from the order of Step (targets applied, nodes advanced, pods scheduled,
// nodes planned):
//
//	replica:  target set at k, scheduled at k+1 on a free core, serving at k+1+S_i
//	node:     capacity target set at k, queued at k+1, started at k+2 at the earliest, ready P later
//
// with S_i app i's startup time and P the node provision time, in whole
// ticks (at least 1). With need_i(j) the need of app i at tick j (below):
//
//	near_i = 1 + S_i                                      replica look-ahead, ticks
//	r_i(k) = max_{j in [k+1, k+near_i]} need_i(j)         replica target
//	U(t)   = sum_i cpu_i max_{j in [t, t+S_i]} need_i(j)  cores its replicas take at t, = sum_i cpu_i r_i(t-1)
//	L      = 2 + P                                        node lead time, ticks
//	A(m)   = the fewest nodes the provisioner starts in m ticks of queue (sim.ProvisionerStarts;
//	         with cluster-autoscaler or karpenter the cloud's sustained rate, bursts left out, so
//	         the nodes it asks for per tick never outrun the buckets or the spare capacity: no launch
//	         of its fails, no backoff or unavailable offering holds it)
//	target = max_{t in [k+1, k+H]} U(t) - node_cores A((t - k - L)^+)   capacity target, cores
//
// A node serving at t must have started by t-P, and a node asked for at any
// later decision starts at k+3 at the earliest: of the nodes U(t) needs,
// later decisions can still bring A(t-k-L) in time, and the rest must be
// asked for now (t within the run: no demand past its end is planned for).
// So the target holds U(t) in full up to k+L (cores given up now could not
// be back in time) and beyond counts on the provisioner for
// what it can still start; it falls by at most A's rate from one tick to
// the next, so the provisioner meets every U(t) whenever any request
// schedule could, and it asks for each node as late as it can. H is L plus
// the ticks A takes to start the whole pool (at most an hour). A window as
// long as the queue the window's own peak would make misses ramps steeper
// than the provisioner: at its smallest fixed point it is just L.
//
// Nodes cost from their start, as every node does: the target moves node
// starts earlier, never around the provisioner's rate, burst or provision
// time. Replicas find their cores free when they are scheduled, so no
// replica waits for a node, nor behind another app's replicas whatever the
// scheduling order, and r_i looks no further than a replica's own startup:
// the replicas and the nodes are the fewest that serve in time. (A longer
// r_i would move the targets less often, at a cost: on the 20x-demand
// paymentscale day one more minute of look-ahead halves the scaling actions
// and costs 1.6% more.)
//
// It is the physical limit for cost at full compliance, up to the sizing
// below and what it cannot plan: the pool's capacity (a target beyond
// capacity_cores is clamped, and replicas then queue by priority) and
// backlogs it did not foresee (demand beyond max replicas); for those it
// reads the telemetry's backlog and adds the capacity to drain it within
// backlogDrain, on nodes the pool asks for when those replicas pend. No
// real policy can see the future.
//
// Need at one tick, per app i with arrivals lambda, service rate mu / slow,
// concurrency k and callees C(i), from the simulator's own latency model:
//
//	p99_i(r) = P99(M/M/(r k) at lambda, mu/slow) + sum_{c in C(i)} p99_c
//	need_i   = min { r in [min_i, max_i] : lambda <= MaxUtilisation r k mu/slow,
//	                 p99_i(r) <= T_i }
//
// The caller's SLO is split between its own queue and its callees' by a
// common stretch factor over their floors (the p99 with unlimited servers):
//
//	M_i = ln(100) slow_i / mu_i + sum_{c in C(i)} M_c   (floor of p99_i)
//	F_i = min(SLO_i / M_i, F_j for every caller j with F_j >= 1)
//	T_i = F_i M_i
//
// An app with F_i < 1, or that misses T_i even at max replicas, breaches
// whatever it runs (a slow dependency, demand beyond max replicas): it is
// then sized for its arrivals at the target utilisation and its usual
// service time, the cheapest size that is ready when the event ends.
// Decide does not allocate.
type Oracle struct {
	s        *sim.Sim
	future   *sim.Future
	near     []int   // per app: ticks of look-ahead, 1 + its startup ticks
	startup  int     // most startup ticks of any app
	nodeLead int     // L: ticks from a decision to a node ready without a queue, 2 + P
	util     float64 // sizing of apps that breach anyway

	mu, cpu, slo []float64 // per app: service rate 1/s, cores per replica, domain SLO s
	conc         []int32
	min, max     []int32
	deps         [][]int32
	order        []int32 // callers before callees

	// Rings over the horizon of future ticks, per tick and app at
	// [(tick % horizon) * n + i], or per tick at [tick % horizon]:
	ring    []int32   // need
	slows   []float32 // service-time factor
	lost    []bool    // breaches at any size
	used    []float64 // per tick t: U(t), cores of the replicas scheduled at t
	horizon int       // ticks of future kept: nodeLead + the longest queue (at most an hour) + startup

	nodeCores float64 // cores per node
	maxCores  float64 // the pool's whole nodes, cores
	starts    []int   // starts[m]: fewest node starts in m ticks of queue (sim.ProvisionerStarts), up to the whole pool's
	ahead     int     // last future tick in the ring
	start     int     // tick of the simulation when the oracle was made
	t0        time.Time
	tick      time.Duration

	floor, factor, p99 []float64 // per app, scratch for one future tick
	prev               []int32   // per app: need at the previous future tick, the search's start
	callee             []bool    // per app: some app calls it

	// now, when set, makes it the present-only oracle (NewOracleNow): it
	// sizes each app for the next tick's need times 1 + headroom and asks
	// the pool for the cores of those targets, with no look-ahead.
	now      bool
	headroom float64 // fraction >= 0
	// load, when > 0, sizes each app for its arrivals times 1 + load
	// through the queue model: the present-only oracle's next tick's
	// (NewOracleNowLoad) in place of a headroom on its replicas, or the
	// expected oracle's every future tick (NewOracleExpected).
	load   float64
	scaled []float64 // per app, scratch: arrivals times 1 + load
	// foresight, when > 0, is how many ticks ahead the oracle may look
	// (NewOracleAhead): its capacity target and replica targets read no
	// need past tick k + foresight.
	foresight int
	// perApp, when set, gives the present-only oracle a headroom per app
	// (NewOracleNowPerApp) in place of headroom.
	perApp *appHeadroom
	// hold, when > 0, is how many ticks ahead the capacity target keeps the
	// cores its replicas will take (NewOracleHold): a node freed now stays
	// if it is needed again within hold.
	hold int
	// writes, when set, holds the present-only oracle's targets as a
	// Soldier writes its own (NewOracleNowHeld).
	writes *writeDiscipline
	// seen, when set, gives the present-only oracle the needs of the tick
	// its telemetry describes rather than the next tick's (NewOracleSeen).
	seen *lagged
}

// NewOracle builds the oracle for simulation s of cfg. It reads s's future
// from its current tick on, so it must be made before s is stepped further
// than the first Decide it will see.
func NewOracle(cfg *domains.Config, s *sim.Sim) *Oracle { return newOracle(cfg, s, 0) }

// newOracle is NewOracle with a horizon of at least minHorizon ticks.
func newOracle(cfg *domains.Config, s *sim.Sim, minHorizon int) *Oracle {
	apps := cfg.Apps()
	n := len(apps)
	o := &Oracle{
		s: s, future: s.Future(),
		near: make([]int, n),
		util: cfg.Soldier.TargetUtilisation,
		mu:   make([]float64, n), cpu: make([]float64, n), slo: make([]float64, n),
		conc: make([]int32, n), min: make([]int32, n), max: make([]int32, n),
		deps:  make([][]int32, n),
		start: s.StepsDone(), t0: s.Now(), tick: s.Tick(),
		floor: make([]float64, n), factor: make([]float64, n), p99: make([]float64, n),
		prev: make([]int32, n), callee: make([]bool, n),
		nodeCores: cfg.Cluster.NodeCores,
		nodeLead:  2 + s.ProvisionTicks(),
		maxCores:  math.Floor(cfg.Cluster.CapacityCores/cfg.Cluster.NodeCores) * cfg.Cluster.NodeCores,
	}
	for i := range n {
		o.near[i] = 1 + s.StartupTicks(i)
		o.startup = max(o.startup, s.StartupTicks(i))
	}
	o.ahead = o.start
	// The longest queue: the ticks the provisioner takes to start the whole
	// pool, up to an hour; U(t) needs the needs up to t + startup.
	o.starts = make([]int, int(time.Hour/o.tick)+1)
	s.ProvisionerStarts(o.starts)
	maxNodes := int(o.maxCores / o.nodeCores)
	for m, started := range o.starts {
		if started >= maxNodes {
			o.starts = o.starts[:m+1]
			break
		}
	}
	o.horizon = max(o.nodeLead+len(o.starts)-1+o.startup, minHorizon)
	o.ring = make([]int32, o.horizon*n)
	o.slows = make([]float32, o.horizon*n)
	o.lost = make([]bool, o.horizon*n)
	o.used = make([]float64, o.horizon)
	indeg := make([]int32, n)
	for i, a := range apps {
		o.mu[i] = s.ServiceRate(i)
		o.cpu[i] = a.CPUPerReplica
		o.slo[i] = cfg.Domains[a.Domain].SLO.LatencyP99Seconds()
		o.conc[i] = int32(a.Concurrency)
		o.min[i], o.max[i] = int32(a.MinReplicas), int32(a.MaxReplicas)
		o.prev[i] = o.min[i]
		for _, d := range a.Deps {
			o.deps[i] = append(o.deps[i], int32(d))
			o.callee[d] = true
			indeg[d]++
		}
	}
	// Kahn's order, callers first; the simulator rejects cyclic configs.
	for i := range indeg {
		if indeg[i] == 0 {
			o.order = append(o.order, int32(i))
		}
	}
	for k := 0; k < len(o.order); k++ {
		for _, d := range o.deps[o.order[k]] {
			if indeg[d]--; indeg[d] == 0 {
				o.order = append(o.order, d)
			}
		}
	}
	return o
}

// Decide sets the pool's capacity target to the cores its replicas will
// take that nodes asked for later could not bring in time, and every app's
// target to its largest need over its near look-ahead (see Oracle), plus
// what an unforeseen backlog needs to drain.
func (o *Oracle) Decide(now time.Time, t *sim.Telemetry, targets []int32) {
	k := o.start + int(now.Sub(o.t0)/o.tick) // the simulation's tick
	n, h := len(targets), o.horizon
	for o.ahead < k+h {
		tick, lambda, slow := o.future.Next()
		if o.load > 0 {
			for i, l := range lambda {
				o.scaled[i] = l * (1 + o.load)
			}
			lambda = o.scaled
		}
		at := (tick % h) * n
		o.needs(o.ring[at:at+n], o.lost[at:at+n], lambda, slow)
		for i, f := range slow {
			o.slows[at+i] = float32(f)
		}
		o.ahead = tick
		if u := tick - o.startup; u > o.start { // the last tick U(u) reads has come
			o.used[u%h] = o.usedAt(u)
		}
	}

	if o.now {
		o.decideNow(k, t, targets)
		return
	}
	// The capacity target: of the cores U(t) needs, later decisions can still
	// bring node_cores A(t-k-L) in time; ask now for the rest.
	peak, last := 0.0, min(o.nodeLead+len(o.starts)-1, o.s.Steps()-k) // the queue's horizon, within the run
	if o.foresight > 0 {
		last = min(last, max(o.foresight-o.startup, 1)) // U(k+w) reads needs up to k+w+startup
	}
	for w := 1; w <= last; w++ { // tick k+w
		later := o.nodeCores * float64(o.starts[max(0, w-o.nodeLead)])
		peak = max(peak, o.used[(k+w)%h]-later)
	}
	if o.hold > 0 { // keep, never add: the nodes the pool has, up to the most it needs within hold
		c := &o.s.Current().Cluster
		kept, needed := float64(c.Nodes+c.ProvisioningNodes+c.QueuedNodes)*o.nodeCores, 0.0
		for w := 1; w <= min(o.hold, h-o.startup, o.s.Steps()-k); w++ { // no need past the run's end
			needed = max(needed, o.used[(k+w)%h])
		}
		peak = max(peak, min(kept, needed))
	}
	if err := o.s.SetCapacityTarget(peak); err != nil {
		panic(err) // peak is a finite sum of cores >= 0
	}

	for i := range targets {
		targets[i] = 0
	}
	for j := k + 1; j <= k+1+o.startup; j++ { // tick-major: the ring's rows are contiguous
		row := o.ring[(j%h)*n:][:n]
		for i, r := range row {
			if r > targets[i] && j <= k+o.near[i] && (o.foresight == 0 || j <= k+o.foresight) {
				targets[i] = r
			}
		}
	}
	o.drainBacklogs(k, t, targets)
}

// drainBacklogs raises targets where an unforeseen backlog needs capacity
// to drain (see Oracle).
func (o *Oracle) drainBacklogs(k int, t *sim.Telemetry, targets []int32) {
	next := ((k + 1) % o.horizon) * len(targets)
	for i := range targets {
		// A backlog (only where demand outran max replicas or pods waited for
		// nodes) needs capacity beyond the arrivals to drain.
		if a := &t.Apps[i]; a.Backlog > 0 && !o.lost[next+i] {
			perReplica := float64(o.conc[i]) * o.mu[i] / float64(o.slows[next+i]) // requests/s at full use
			drain := int32(math.Ceil((a.RPS + a.Backlog/backlogDrain.Seconds()) / (sim.MaxUtilisation * perReplica)))
			targets[i] = max(targets[i], min(drain, o.max[i]))
		}
	}
}

// NewOracleNow is the present-only oracle: it knows each app's exact need
// at the next tick (the arrivals and service times the simulator will
// draw, 10 s ahead) and nothing later. Each app gets that need times
// 1 + headroom, and the pool is asked for those targets' cores: nodes come
// the provision time later, replicas their startup later, as for any
// policy that reacts to what it sees. It bounds what a policy without
// foresight can do with perfect measurement, a perfect latency model and
// instant decisions, at a uniform headroom: sweeping the headroom traces
// its cost-for-breaches curve (docs/experiments.md). Not a policy to run.
func NewOracleNow(cfg *domains.Config, s *sim.Sim, headroom float64) *Oracle {
	o := NewOracle(cfg, s)
	o.now, o.headroom = true, headroom
	return o
}

// NewOracleNowLoad is the present-only oracle (NewOracleNow) with its
// headroom on the load rather than on the replicas: each app gets the
// fewest replicas whose queue keeps the SLO at its next tick's arrivals
// times 1 + load. A replica headroom rounds up by a whole replica on
// every small app (ceil(2 x 1.1) = 3); a load headroom buys only the
// capacity the extra arrivals need, with the pooling of a larger queue,
// so it is the cheaper bound where apps run a few replicas each.
func NewOracleNowLoad(cfg *domains.Config, s *sim.Sim, load float64) *Oracle {
	o := NewOracleNow(cfg, s, 0)
	o.load, o.scaled = load, make([]float64, len(o.mu))
	return o
}

// NewOracleNowHeld is the present-only load bound (NewOracleNowLoad)
// writing as the Soldiers and the HPA write (soldier.Hold): a scale-up
// within the Soldier's tolerance of the target in force is not written,
// and a scale-down goes to the largest target proposed over the last 5
// minutes (the HPA's scale-down window; the Soldier's stabiliser). It
// bounds what a policy that knows only the present, and writes no more
// often than a Soldier, can do: the write bars' side of the present-only
// frontier (docs/experiments.md). Not a policy to run.
func NewOracleNowHeld(cfg *domains.Config, s *sim.Sim, load float64) *Oracle {
	o := NewOracleNowLoad(cfg, s, load)
	o.writes = newWriteDiscipline(len(o.mu), max(1, int(scaleDownWindow/s.Tick())), cfg.Soldier.Tolerance)
	return o
}

// NewOracleSeen is NewOracleNowHeld sizing each app from the need the
// telemetry shows a Soldier: the exact need of the tick the telemetry
// describes, telemetry_lag and one tick older than the next tick's, which
// the present-only oracle reads. It bounds a Soldier that measures
// perfectly through the cluster's metrics pipeline and writes as Soldiers
// write (docs/experiments.md). Not a policy to run.
func NewOracleSeen(cfg *domains.Config, s *sim.Sim, load float64) *Oracle {
	o := NewOracleNowHeld(cfg, s, load)
	o.seen = newLagged(len(o.mu), s.TelemetryLagTicks()+1)
	return o
}

// lagged delays rows of per-app needs by a fixed number of ticks: a ring of
// the last delay+1 rows. Before delay ticks have passed it returns the first
// row it was given, the oldest need there is. It does not allocate after it
// is made.
type lagged struct {
	delay  int
	rows   []int32 // [(tick % (delay + 1)) * n + i]
	filled bool
}

func newLagged(n, delay int) *lagged {
	return &lagged{delay: delay, rows: make([]int32, (delay+1)*n)}
}

// at records row as tick's and returns the row of tick - delay.
func (l *lagged) at(tick int, row []int32) []int32 {
	n, d := len(row), l.delay+1
	if !l.filled {
		for j := range d {
			copy(l.rows[j*n:][:n], row)
		}
		l.filled = true
	}
	copy(l.rows[(tick%d)*n:][:n], row)
	return l.rows[(((tick-l.delay)%d+d)%d)*n:][:n]
}

// scaleDownWindow is the HPA's default scale-down stabilisation window, the
// Soldier's stabiliser's.
const scaleDownWindow = 5 * time.Minute

// writeDiscipline holds a bound's targets as a Soldier holds its proposals
// (soldier.Hold): per app, the proposals of the last window ticks and the
// target in force. It does not allocate after it is made.
type writeDiscipline struct {
	tol    float64
	window int
	recent []int32 // a ring of window ticks of proposals, [(k % window) * n + i]
	most   []int32 // per app, scratch: the largest proposal in the window
	cur    []int32 // per app, the target in force at this tick (Decide's targets on entry)
	ticks  int     // ticks applied
}

func newWriteDiscipline(n, window int, tol float64) *writeDiscipline {
	return &writeDiscipline{tol: tol, window: window, recent: make([]int32, window*n), most: make([]int32, n), cur: make([]int32, n)}
}

// apply replaces each proposal in targets by its Hold against the target
// in force, cur.
func (w *writeDiscipline) apply(targets []int32) {
	n := len(targets)
	copy(w.recent[(w.ticks%w.window)*n:][:n], targets)
	w.ticks++
	most := w.most[:n]
	copy(most, targets)
	for j := range min(w.ticks, w.window) { // tick-major: the ring's rows are contiguous
		for i, r := range w.recent[j*n:][:n] {
			most[i] = max(most[i], r)
		}
	}
	for i, p := range targets {
		targets[i] = soldier.Hold(p, most[i], w.cur[i], float64(p), w.tol)
	}
}

// NewOracleAhead is the oracle with foresight ticks of look-ahead (>= 1):
// it plans nodes and replicas as Oracle does, but sees no need past
// k + foresight. With a foresight shorter than node lead time plus replica
// startup it learns of a spike too late to have its capacity ready: how
// much foresight the seed's spikes call for (docs/experiments.md). Not a
// policy to run.
func NewOracleAhead(cfg *domains.Config, s *sim.Sim, foresight int) *Oracle {
	o := NewOracle(cfg, s)
	o.foresight = max(foresight, 1)
	return o
}

// NewOracleExpected is the oracle that foresees the expected demand: the
// scenario's trace and events exactly, from now to its end, but not the
// noise (sim.ExpectedFuture). It plans nodes and replicas as Oracle does,
// each app sized for its expected arrivals times 1 + load through the queue
// model, so the load headroom is all it holds against a noise no forecast
// can know. It bounds every policy that forecasts: no forecast knows more
// than the scenario itself, unannounced events included. Not a policy to
// run.
func NewOracleExpected(cfg *domains.Config, s *sim.Sim, load float64) *Oracle {
	o := NewOracle(cfg, s)
	o.future = s.ExpectedFuture()
	o.load, o.scaled = load, make([]float64, len(o.mu))
	return o
}

// NewOracleHold is the oracle whose capacity target also keeps, at every
// decision, as many of the pool's nodes as its replicas will take over the
// next hold ticks (>= 1): it never lets a node go that it will need again
// within hold, and asks for no node sooner than the oracle does, so its
// node churn is what following the day's demand costs at least when idle
// nodes may be held that long. Sweeping hold traces the cost of fewer
// node starts and removals with perfect foresight (docs/experiments.md).
// Not a policy to run.
func NewOracleHold(cfg *domains.Config, s *sim.Sim, hold int) *Oracle {
	hold = max(hold, 1)
	startup := 0
	for i := range cfg.Apps() {
		startup = max(startup, s.StartupTicks(i))
	}
	o := newOracle(cfg, s, hold+startup+1) // U(k+hold) reads needs up to k+hold+startup
	o.hold = hold
	return o
}

// decideNow is Decide of the present-only oracle at tick k.
func (o *Oracle) decideNow(k int, t *sim.Telemetry, targets []int32) {
	n := len(targets)
	row := o.ring[((k+1)%o.horizon)*n:][:n]
	if o.seen != nil {
		row = o.seen.at(k+1, row)
	}
	if o.writes != nil {
		copy(o.writes.cur, targets) // the targets in force (sim.Policy)
	}
	if o.perApp != nil {
		o.perApp.observe(row)
	}
	cores := 0.0
	for i, r := range row {
		headroom := o.headroom
		if o.perApp != nil {
			headroom = o.perApp.headroom(i)
		}
		r = int32(math.Ceil(float64(r) * (1 + headroom)))
		targets[i] = min(max(r, o.min[i]), o.max[i])
	}
	if o.writes != nil {
		o.writes.apply(targets)
	}
	for i, r := range targets {
		cores += float64(r) * o.cpu[i]
	}
	if err := o.s.SetCapacityTarget(cores); err != nil {
		panic(err) // a finite sum of cores >= 0
	}
	o.drainBacklogs(k, t, targets)
}

// usedAt is U(u): the cores of the replicas scheduled at tick u, each app's
// largest need over [u, u + S_i], the replica targets of the decision at
// tick u-1. The ring must hold ticks u to u + startup.
func (o *Oracle) usedAt(u int) float64 {
	n, h := len(o.near), o.horizon
	cores := 0.0
	for i, near := range o.near {
		r := int32(0)
		for j := u; j < u+near; j++ {
			r = max(r, o.ring[(j%h)*n+i])
		}
		cores += float64(r) * o.cpu[i]
	}
	return cores
}

// backlogDrain is how fast the oracle plans to drain a backlog it did not
// foresee.
const backlogDrain = 30 * time.Second

// needs writes into need each app's fewest replicas within the SLO at one
// tick's arrivals and service-time factors, and into lost whether the app
// breaches at any size.
func (o *Oracle) needs(need []int32, lost []bool, lambda, slow []float64) {
	ln100 := math.Log(100)
	for k := len(o.order) - 1; k >= 0; k-- { // callees first
		i := o.order[k]
		o.floor[i] = ln100 * slow[i] / o.mu[i]
		for _, d := range o.deps[i] {
			o.floor[i] += o.floor[d]
		}
		o.factor[i] = o.slo[i] / o.floor[i]
	}
	for _, i := range o.order { // callers first: pass their factor down
		if o.factor[i] < 1 {
			continue
		}
		for _, d := range o.deps[i] {
			o.factor[d] = min(o.factor[d], o.factor[i])
		}
	}
	for k := len(o.order) - 1; k >= 0; k-- { // callees first
		i := o.order[k]
		mu := o.mu[i] / slow[i]
		callees := 0.0
		for _, d := range o.deps[i] {
			callees += o.p99[d]
		}
		r, ok := o.min[i], true
		if lambda[i] > 0 {
			r, ok = o.size(int(i), lambda[i], mu, o.factor[i]*o.floor[i]-callees)
		}
		if !ok {
			// It breaches at any size: more replicas cannot buy the SLO back,
			// so hold what its arrivals need at its usual service time.
			c := float64(o.conc[i]) * o.mu[i]
			r = min(max(int32(math.Ceil(lambda[i]/(o.util*c))), o.min[i]), o.max[i])
		}
		o.prev[i] = r
		need[i], lost[i] = r, !ok
		if o.callee[i] { // its callers wait for it: the simulator's p99 of its queue
			c := float64(r*o.conc[i]) * mu
			o.p99[i] = sim.Queue{Lambda: min(lambda[i], sim.MaxUtilisation*c), Mu: mu, C: int(r * o.conc[i])}.P99() + callees
		}
	}
}

// size is the fewest replicas of app i, in its bounds, whose own queue keeps
// its p99 within budget seconds at arrivals lambda and service rate mu; ok is
// false if even max replicas miss it (or budget is not above the service
// time's own p99). The p99 falls as replicas grow, so the search gallops from
// the previous tick's answer (demand moves little from one tick to the next)
// and then bisects; each probe is one evaluation of P(T > budget) <= 0.01.
func (o *Oracle) size(i int, lambda, mu, budget float64) (r int32, ok bool) {
	conc := o.conc[i]
	lo := max(o.min[i], int32(math.Ceil(lambda/(sim.MaxUtilisation*mu*float64(conc)))))
	hi := o.max[i]
	if lo > hi || budget <= 0 {
		return 0, false
	}
	fits := func(r int32) bool {
		return sim.Queue{Lambda: lambda, Mu: mu, C: int(r * conc)}.Exceeds(budget) <= 0.01
	}
	good := min(max(o.prev[i], lo), hi)
	bad := lo - 1 // fits(bad) is false, fits(good) true
	if fits(good) {
		for step := int32(1); good > lo; step *= 2 {
			c := max(lo, good-step)
			if !fits(c) {
				bad = c
				break
			}
			good = c
		}
	} else {
		bad = good
		for step := int32(1); ; step *= 2 {
			c := min(hi, bad+step)
			if fits(c) {
				good = c
				break
			}
			if c == hi {
				return 0, false
			}
			bad = c
		}
	}
	for good-bad > 1 {
		if m := bad + (good-bad)/2; fits(m) {
			good = m
		} else {
			bad = m
		}
	}
	return good, true
}
