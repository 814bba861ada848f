package baseline

import (
	"math"
	"slices"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim"
)

// Oracle knows the future: the exact arrival rates the simulator will draw,
// noise included, and the service-time factors of its events (sim.Future).
// For every app and future tick it finds the fewest replicas that keep the
// app within its domain's SLO at that tick, and sets each app's target to the
// most it will need over its look-ahead, the time a replica requested now may
// take to serve:
//
//	near  = 1 (target applied) + 1 (provisioner starts a node)
//	      + node provision time + startup time                    (ticks)
//	ahead = near + node provision time + queue
//
// where queue is the time the provisioner (provisioner_rate) takes to start
// the nodes that the look-ahead's peak needs beyond those the pool has or has
// asked for. The simulator's pool asks for nodes only for pending replicas,
// and its scheduler places pending replicas by priority then app id rather
// than by when they are needed, so a replica needed soon can wait behind
// replicas requested later for later needs. The second provision time in
// ahead absorbs most of that; the rest is done by timing: when a pending
// replica is already late (needed within near), every app ahead of it in the
// scheduling order looks only near ahead, and gives back the replicas it
// requested for later needs, until the late replica is placed. On the
// 1,550-app example this costs 0.25% over a look-ahead of near alone on the
// diurnal day and holds the SLO where near alone breaches for 159 (diurnal)
// and 2,173 (flash sale) app-minutes. The targets move more often than a real
// policy's would.
//
// It is the physical limit for cost at full compliance, up to the
// heuristics below; no real policy can see the future. It also reads the
// telemetry's backlog, which it did not foresee (demand beyond max replicas,
// replicas that waited for nodes), and adds the capacity to drain it within
// backlogDrain.
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
	future *sim.Future
	lead   int     // ticks of look-ahead, most of any app
	leads  []int   // per app: ticks of look-ahead
	near   []int   // per app: ticks a replica requested now takes to serve on a fresh node
	rank   []int   // per app: place in the simulator's scheduling order
	util   float64 // sizing of apps that breach anyway

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
	cores   []float64 // per tick: cores of every app's need
	horizon int       // ticks of future kept: lead plus the longest provisioner queue (at most an hour)

	nodeCores float64 // cores per node
	perTick   float64 // node starts per tick
	ahead     int     // last future tick in the ring
	start     int     // tick of the simulation when the oracle was made
	t0        time.Time
	tick      time.Duration

	floor, factor, p99 []float64 // per app, scratch for one future tick
	prev               []int32   // per app: need at the previous future tick, the search's start
	callee             []bool    // per app: some app calls it
	end                []int     // per app, scratch: last tick of its window
}

// NewOracle builds the oracle for simulation s of cfg. It reads s's future
// from its current tick on, so it must be made before s is stepped further
// than the first Decide it will see.
func NewOracle(cfg *domains.Config, s *sim.Sim) *Oracle {
	apps := cfg.Apps()
	n := len(apps)
	o := &Oracle{
		future: s.Future(),
		leads:  make([]int, n), near: make([]int, n), rank: make([]int, n),
		util: cfg.Soldier.TargetUtilisation,
		mu:   make([]float64, n), cpu: make([]float64, n), slo: make([]float64, n),
		conc: make([]int32, n), min: make([]int32, n), max: make([]int32, n),
		deps:  make([][]int32, n),
		start: s.StepsDone(), t0: s.Now(), tick: s.Tick(),
		floor: make([]float64, n), factor: make([]float64, n), p99: make([]float64, n),
		prev: make([]int32, n), callee: make([]bool, n), end: make([]int, n),
		nodeCores: cfg.Cluster.NodeCores, perTick: s.ProvisionerPerTick(),
	}
	// The simulator places pending replicas by priority, then app id.
	byPri := make([]int, n)
	for i := range byPri {
		byPri[i] = i
	}
	slices.SortStableFunc(byPri, func(a, b int) int { return cfg.Domains[apps[a].Domain].Priority - cfg.Domains[apps[b].Domain].Priority })
	for pos, i := range byPri {
		o.rank[i] = pos
		o.leads[i] = 2 + 2*s.ProvisionTicks() + s.StartupTicks(i)
		o.near[i] = 2 + s.ProvisionTicks() + s.StartupTicks(i)
		o.lead = max(o.lead, o.leads[i])
	}
	o.ahead = o.start
	maxNodes := math.Floor(cfg.Cluster.CapacityCores / cfg.Cluster.NodeCores)
	// The longest queue, the whole pool's nodes, up to an hour of ticks.
	o.horizon = o.lead + int(min(math.Ceil(maxNodes/o.perTick), float64(time.Hour/o.tick)))
	o.ring = make([]int32, o.horizon*n)
	o.slows = make([]float32, o.horizon*n)
	o.lost = make([]bool, o.horizon*n)
	o.cores = make([]float64, o.horizon)
	indeg := make([]int32, n)
	for i, a := range apps {
		o.mu[i] = s.ServiceRate(i)
		o.cpu[i] = a.CPUPerReplica
		o.slo[i] = cfg.Domains[a.Domain].SLO.LatencyP99.Seconds()
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

// Decide sets every app's target to its largest need over the lead time,
// lengthened by the time the provisioner needs to start the nodes that need
// calls for beyond those the pool has or has asked for.
func (o *Oracle) Decide(now time.Time, t *sim.Telemetry, targets []int32) {
	k := o.start + int(now.Sub(o.t0)/o.tick) // the simulation's tick
	n, h := len(targets), o.horizon
	for o.ahead < k+h {
		tick, lambda, slow := o.future.Next()
		at := (tick % h) * n
		o.needs(o.ring[at:at+n], o.lost[at:at+n], lambda, slow)
		cores := 0.0
		for i, f := range slow {
			o.slows[at+i] = float32(f)
			cores += float64(o.ring[at+i]) * o.cpu[i]
		}
		o.cores[tick%h] = cores
		o.ahead = tick
	}

	// The window: lead ticks, plus the provisioner's queue for the shortfall
	// at the window's peak, to a fixed point.
	c := &t.Cluster
	have := float64(c.Nodes+c.ProvisioningNodes+c.QueuedNodes) * o.nodeCores
	w, peak, queue := 0, 0.0, 0
	for want := o.lead; want > w; {
		for ; w < want; w++ {
			peak = max(peak, o.cores[(k+w+1)%h])
		}
		if short := peak - have; short > 0 {
			queue = int(min(math.Ceil(math.Ceil(short/o.nodeCores)/o.perTick), float64(h)))
		}
		want = min(o.lead+queue, h)
	}

	// A replica already too late (pending, needed before a node asked for
	// now could serve it) goes first: apps ahead of it in the scheduling
	// order hold back replicas they need only later, so that the next nodes
	// are its.
	urgent := -1
	if c.PendingPods > 0 {
		for i := range targets {
			a := &t.Apps[i]
			if a.Pending == 0 || o.rank[i] <= urgent {
				continue
			}
			for j := k + 1; j <= k+o.near[i]; j++ {
				if o.ring[(j%h)*n+i] > a.Ready+a.Starting {
					urgent = o.rank[i]
					break
				}
			}
		}
	}
	last := 0
	for i := range targets {
		end := k + min(o.leads[i]+queue, h)
		if o.rank[i] < urgent {
			end = k + o.near[i]
		}
		o.end[i] = end
		last = max(last, end)
		targets[i] = 0
	}
	for j := k + 1; j <= last; j++ { // tick-major: the ring's rows are contiguous
		row := o.ring[(j%h)*n:][:n]
		for i, r := range row {
			if r > targets[i] && j <= o.end[i] {
				targets[i] = r
			}
		}
	}
	next := ((k + 1) % h) * n
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
			o.p99[i] = sim.Queue{Lambda: math.Min(lambda[i], sim.MaxUtilisation*c), Mu: mu, C: int(r * o.conc[i])}.P99() + callees
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
