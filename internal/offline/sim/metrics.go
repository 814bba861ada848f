package sim

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Metrics summarises a run. Every field is a pure function of the config,
// scenario and policy: two runs with the same inputs give equal Metrics.
// Ticks count from 1: the initial state (tick 0) sets the scene and is not
// accounted, nor are the ticks of the scenario's warm-up (offsets <=
// Scenario.Warmup), which run as the initial state does: NodeProvisions and
// NodeRemovals count from its end, and an app short at its end starts no
// scale-out episode until it has been covered once.
type Metrics struct {
	CostCoreHours    float64 `json:"cost_core_hours"`    // provisioned node cores x hours
	Cost             float64 `json:"cost"`               // CostCoreHours x cost_per_core_hour
	SLOCompliance    float64 `json:"slo_compliance"`     // compliant share of app-ticks with traffic, [0, 1]
	BreachAppMinutes float64 `json:"breach_app_minutes"` // app-minutes over the SLO latency or error budget
	// BreachAppMinutesAtMax is the part of BreachAppMinutes spent with
	// max_replicas replicas ready: breaches the ceiling bound, which no
	// policy could have answered with more replicas (the HPA's
	// ScalingLimited). It is the same for every policy where demand sits
	// beyond what max_replicas serve.
	BreachAppMinutesAtMax float64 `json:"breach_app_minutes_at_max"`
	// CeilingBound lists the apps with breach app-minutes at max_replicas,
	// most first: the app sets whose max_replicas to raise.
	CeilingBound    []CeilingBound `json:"ceiling_bound"`
	ScalingActions  int            `json:"scaling_actions"`   // replica target changes
	PeakNodes       int32          `json:"peak_nodes"`        // most ready and provisioning nodes at once
	PendingPodHours float64        `json:"pending_pod_hours"` // replica-hours spent waiting for a node

	NodeProvisions   int     `json:"node_provisions"`     // nodes the provisioner started
	NodeRemovals     int     `json:"node_removals"`       // idle nodes scaled down
	NodeChurn        int     `json:"node_churn"`          // NodeProvisions + NodeRemovals
	NodeChurnPerHour float64 `json:"node_churn_per_hour"` // NodeChurn / simulated hours

	// ScaleOut is the scale-out time of correlated spikes: the correlated
	// scale-out episodes (see ScaleOut); ScaleOutAll is every episode.
	ScaleOut    ScaleOut `json:"scale_out"`
	ScaleOutAll ScaleOut `json:"scale_out_all"`
	// MaxScaleUps30s is the most apps whose replica target rose within one
	// 30 s window: the largest, over ticks t, number of distinct apps whose
	// target rose at a tick in [t - 30 s, t].
	MaxScaleUps30s int `json:"max_scale_ups_30s"`
	// Scheduling (issue 31, item 2; Sim.schedule).
	//
	// PriorityInversions counts the replicas scheduled at a tick while a
	// replica of a more important tier (lower priority number) was still
	// pending at the end of it. Without PriorityClasses (arrival order) it
	// is every replica that went ahead of a more important one queued after
	// it or that did not fit; with them, a smaller replica that fit a core
	// fragment the waiting one did not, or one placed while a preemptor
	// waited for its victims to terminate.
	PriorityInversions int `json:"priority_inversions"`
	// P3WhileP0Waits is, of PriorityInversions, the replicas of a domain of
	// priority 3 or less important scheduled while a priority-0 replica
	// waited for a node: the lowest tier placed ahead of the first.
	P3WhileP0Waits int `json:"p3_while_p0_waits"`
	// Preemptions counts the replicas the scheduler evicted to place a
	// replica of a more important tier (priority_classes = true only); each
	// was recreated pending. TierMetrics.Preempted splits it by the
	// victims' tier.
	Preemptions int `json:"preemptions"`

	// AvgCPUUtilisation is busy core-hours over provisioned node core-hours
	// (CostCoreHours), [0, 1]. An app's busy cores at a tick are its ready
	// replicas' cores x its utilisation, min(arrivals / capacity, 1).
	AvgCPUUtilisation float64 `json:"avg_cpu_utilisation"`
	PeakPods          int32   `json:"peak_pods"` // most ready, starting and pending replicas at once
	// FloorCoreHours is what min_replicas alone would cost: the sum over
	// apps of min_replicas x cpu_per_replica, x simulated hours.
	FloorCoreHours float64 `json:"floor_core_hours"`

	// Request-weighted SLO and energy (issue 31). Requests counts the
	// requests that arrived at the apps (external and calls); BadRequests
	// those that failed or took longer than their domain's p99 target
	// (badShare); BadRequestRatio is BadRequests / Requests, 0 without
	// requests. EnergyKWh is the nodes' energy under the cluster's power
	// model (energyKWh).
	Requests        float64 `json:"requests"`
	BadRequests     float64 `json:"bad_requests"`
	BadRequestRatio float64 `json:"bad_request_ratio"`
	EnergyKWh       float64 `json:"energy_kwh"`
	// The node provisioner (issue 31; internal/offline/sim/provisioner.go, docs/evaluation.md#metrics).
	// A node request is a node the pool asked for at a tick (for pending
	// replicas or a capacity target); node starts are matched to requests
	// in request order, and a request's wait runs from the tick it was made
	// to the tick its node is ready, requests still open at the end
	// counting their wait so far.
	//
	// LaunchFailures counts instance launches that failed, each retry
	// again: throttled by the cloud's API buckets, or short of the region's
	// spare capacity (InsufficientCapacityFailures, of them). Always 0 with
	// provisioner = "token-bucket".
	LaunchFailures               int `json:"launch_failures"`
	InsufficientCapacityFailures int `json:"insufficient_capacity_failures"`
	// ProvisionerStalls counts the failed scale-ups that held requests
	// back: node-group backoffs (cluster-autoscaler) and offerings marked
	// unavailable (karpenter).
	ProvisionerStalls int `json:"provisioner_stalls"`
	// LongestStallMinutes is the longest wait, request to ready node, of
	// the node requests outstanding at a failed launch: how long a burst's
	// new capacity took when the provisioner stalled; 0 when no launch
	// failed.
	LongestStallMinutes float64 `json:"longest_stall_minutes"`
	// NodeWaitP95Seconds and NodeWaitMaxSeconds are the nearest-rank 95th
	// percentile and the largest wait over every requested node.
	NodeWaitP95Seconds float64 `json:"node_wait_p95_seconds"`
	NodeWaitMaxSeconds float64 `json:"node_wait_max_seconds"`
	// MaxNodeQueue is the most nodes requested and not yet started at once.
	MaxNodeQueue int32 `json:"max_node_queue"`
	// MaxNodeRequests2m is the most nodes requested within any two minutes
	// (12 ticks of 10 s): the largest burst of node requests.
	MaxNodeRequests2m int32 `json:"max_node_requests_2m"`

	SimSeconds float64         `json:"sim_seconds"` // simulated time
	Tiers      []TierMetrics   `json:"tiers"`       // priority tiers, most important (lowest priority number) first
	Domains    []DomainMetrics `json:"domains"`
}

// CeilingBound is one app's breaches with max_replicas ready (Metrics).
type CeilingBound struct {
	App              string  `json:"app"` // domain/set-k, as the config expands it
	MaxReplicas      int     `json:"max_replicas"`
	BreachAppMinutes float64 `json:"breach_app_minutes"`
}

// DomainMetrics summarises one domain over a run.
type DomainMetrics struct {
	Name             string  `json:"name"`
	Priority         int     `json:"priority"`
	CoreHours        float64 `json:"core_hours"` // cores of scheduled replicas x hours
	SLOCompliance    float64 `json:"slo_compliance"`
	BreachAppMinutes float64 `json:"breach_app_minutes"`
	// BreachAppMinutesAtMax: of BreachAppMinutes, with max_replicas ready (Metrics).
	BreachAppMinutesAtMax float64  `json:"breach_app_minutes_at_max"`
	ScalingActions        int      `json:"scaling_actions"`
	PendingPodHours       float64  `json:"pending_pod_hours"` // the domain's replica-hours waiting for a node
	FloorCoreHours        float64  `json:"floor_core_hours"`  // the domain's min_replicas x cpu_per_replica x hours
	ScaleOut              ScaleOut `json:"scale_out"`         // the domain's apps' correlated episodes
	ScaleOutAll           ScaleOut `json:"scale_out_all"`     // all of the domain's apps' episodes

	// Request-weighted SLO and energy (issue 31; Metrics). EnergyKWh is the
	// domain's share: its busy cores' power, and the nodes' idle power in
	// proportion to the domain's scheduled core-hours (CoreHours); the
	// domains' shares sum to Metrics.EnergyKWh when any core was scheduled.
	Requests        float64 `json:"requests"`
	BadRequests     float64 `json:"bad_requests"`
	BadRequestRatio float64 `json:"bad_request_ratio"`
	EnergyKWh       float64 `json:"energy_kwh"`
}

// TierMetrics summarises the domains of one priority. Its percentiles are
// over the tier's episodes, not averages of the domains'.
type TierMetrics struct {
	Priority        int      `json:"priority"` // 0 is P0
	Domains         []string `json:"domains"`  // in config order
	PendingPodHours float64  `json:"pending_pod_hours"`
	FloorCoreHours  float64  `json:"floor_core_hours"`
	ScaleOut        ScaleOut `json:"scale_out"`
	ScaleOutAll     ScaleOut `json:"scale_out_all"`

	// Request-weighted SLO and energy (issue 31): the tier's domains' sums
	// (DomainMetrics), the ratio of the sums.
	Requests        float64 `json:"requests"`
	BadRequests     float64 `json:"bad_requests"`
	BadRequestRatio float64 `json:"bad_request_ratio"`
	EnergyKWh       float64 `json:"energy_kwh"`
	Preempted       int     `json:"preempted"` // the tier's replicas preempted (Metrics.Preemptions)
}

// ScaleOut summarises scale-out episodes: how long apps went without the
// ready capacity their demand needed.
//
// An app's ready capacity is ready replicas x concurrency / service_time,
// requests/s, at full utilisation and without events' service-time factors:
// it depends on the config alone, not on a policy's target. The app is short
// at a tick when its arrival rate (external plus calls, noise included)
// exceeds its ready capacity. A scale-out episode starts at the first short
// tick after a tick that was not short, and ends at the next tick that is not
// short: its duration is its number of short ticks x the tick, so it runs
// from the demand step to the capacity being ready. An app short in the
// initial state (tick 0) starts no episode until it has been covered once.
// Episodes still open at the end of the run count with their duration so far
// (a lower bound) and are counted in Open.
//
// An episode is correlated when at least max(2, ceil(5% of the cluster's
// apps)) distinct apps, its own included, start an episode at a tick within
// 30 s of its start (|t - start| <= 30 s; the window is cut at the run's
// ends): a spike that hit many apps at once. An app that flaps in and out
// of shortfall counts once in a window, so it is not correlated with itself. P50Seconds and P95Seconds are
// nearest-rank percentiles (the smallest duration that at least 50% or 95%
// of the episodes do not exceed), 0 when there is no episode.
type ScaleOut struct {
	Episodes   int     `json:"episodes"`
	Open       int     `json:"open"` // of Episodes, still short at the end of the run
	P50Seconds float64 `json:"p50_seconds"`
	P95Seconds float64 `json:"p95_seconds"`
}

// burstWindow is the "within 30 s" of correlated episodes and of
// MaxScaleUps30s.
const burstWindow = 30 * time.Second

// correlatedPercent is the share of the cluster's apps, in percent, that
// must start an episode within burstWindow for it to count as correlated.
const correlatedPercent = 5

// accum gathers metrics tick by tick without allocating.
type accum struct {
	appTicks, breaches []float64 // per domain: app-ticks with traffic, breached ones
	breachesAtMax      []float64 // per app: breached ticks with max_replicas ready
	coreSeconds        []float64 // per domain
	pendingSeconds     []float64 // per domain: pending replica-seconds
	actions            []int     // per domain
	nodeCoreSeconds    float64
	busyCoreSeconds    float64
	pendingPodSeconds  float64
	peakNodes          int32
	peakPods           int32
	inversions         int   // replicas scheduled while a more important tier's waited (Sim.schedule)
	p3WhileP0          int   // of inversions, priority >= 3 while priority 0 waited
	preempted          []int // per domain: replicas preempted (Sim.evict)
	seconds            float64
	dt                 float64 // tick, seconds

	pods int32   // this tick so far: ready, starting and pending replicas
	busy float64 // this tick so far: busy cores

	// Request-weighted SLO and energy (issue 31), per domain: requests
	// arrived, the bad ones among them (badShare), busy core-seconds.
	requests, badRequests, busyCoreSecs []float64

	out episodes
	ups scaleUps

	// Warm-up gate (issue 31, traffic): ticks t <= warm are not accounted;
	// the pool's counters at tick warm are subtracted from the run's.
	warm                         int
	startedAtWarm, removedAtWarm int
}

// counted is whether tick t is accounted: after the initial state and the
// warm-up.
func (m *accum) counted(t int) bool { return t > m.warm }

func (m *accum) init(s *Sim) {
	domains := len(s.doms)
	m.appTicks = make([]float64, domains)
	m.breaches = make([]float64, domains)
	m.breachesAtMax = make([]float64, len(s.apps))
	m.coreSeconds = make([]float64, domains)
	m.pendingSeconds = make([]float64, domains)
	m.actions = make([]int, domains)
	// Request-weighted SLO and energy (issue 31).
	m.requests, m.badRequests, m.busyCoreSecs = make([]float64, domains), make([]float64, domains), make([]float64, domains)
	m.preempted = make([]int, domains)
	m.dt = s.dt
	w := int(burstWindow / s.tick)
	m.out.init(s.apps, domains, s.steps, w)
	m.ups.init(len(s.apps), w)
	m.warm = int(s.sc.Warmup / s.tick)
}

// domainAccum is accum's sums over one domain's apps, kept in locals
// while Sim.record walks them (accum.domain, domainAccum.app,
// accum.endDomain): each sum adds the apps in the order it always did.
type domainAccum struct {
	out                      *episodes
	dt                       float64
	coreSeconds, pendingSecs float64
	appTicks, breaches       float64
	breachesAtMax            []float64 // accum's, per app
	pods                     int32
	busy                     float64
	// Request-weighted SLO and energy (issue 31).
	requests, badRequests, busyCoreSecs float64
	warm                                int // accum's
}

// domain starts the sums of domain di's apps.
func (m *accum) domain(di int) domainAccum {
	return domainAccum{
		out: &m.out, dt: m.dt,
		coreSeconds: m.coreSeconds[di], pendingSecs: m.pendingSeconds[di],
		appTicks: m.appTicks[di], breaches: m.breaches[di], breachesAtMax: m.breachesAtMax,
		pods: m.pods, busy: m.busy, warm: m.warm,
		requests: m.requests[di], badRequests: m.badRequests[di], busyCoreSecs: m.busyCoreSecs[di],
	}
}

// endDomain keeps the sums of domain di's apps.
func (m *accum) endDomain(di int, d *domainAccum) {
	m.coreSeconds[di], m.pendingSeconds[di] = d.coreSeconds, d.pendingSecs
	m.appTicks[di], m.breaches[di] = d.appTicks, d.breaches
	m.pods, m.busy = d.pods, d.busy
	m.requests[di], m.badRequests[di], m.busyCoreSecs[di] = d.requests, d.badRequests, d.busyCoreSecs
}

// app accounts app i at tick t, with cores its ready and starting
// replicas' cores, busy its busy cores and bad the share of its requests
// that are bad (badShare); at tick 0 and in the warm-up it only notes the
// initial state.
func (m *domainAccum) app(i int, a *app, cores, busy, bad float64, breach bool, t int) {
	short := a.lambda > float64(a.ready*a.conc)*a.mu
	if t <= m.warm {
		m.out.initial(i, short)
		return
	}
	m.out.app(i, short, t)
	m.coreSeconds += cores * m.dt
	m.pendingSecs += float64(a.pending) * m.dt
	if a.lambda > 0 {
		m.appTicks++
	}
	if breach {
		m.breaches++
		if a.ready >= a.maxReplicas {
			m.breachesAtMax[i]++
		}
	}
	m.pods += a.ready + a.starting + a.pending
	m.busy += busy
	// Request-weighted SLO and energy (issue 31).
	arrived := a.lambda * m.dt
	m.requests += arrived
	m.badRequests += arrived * bad
	m.busyCoreSecs += busy * m.dt
}

// badShare is the share of app a's requests at this tick that are bad: that
// fail or take longer than slo, the domain's p99 target, seconds. With e the
// app's error rate (its own timeouts and its callees' failures) and
// P(T > slo) the survival of its response time at the target (its sojourn m,
// shifted by its backlog wait and its callees' p99s, as its p99 is),
//
//	bad = 1 - (1 - e) (1 - P(T > slo))
//
// counts a request that is both slow and failed once, taking the two as
// independent. They are not quite: a request that timed out waited past the
// timeout, and so past the target when the timeout is longer. The product
// then counts at most e P(T > slo) too many, a share below either term;
// and its true value lies in [max(e, P(T > slo)), e + P(T > slo)]. Callees
// enter as a fixed shift of their p99, as they do in the app's p99: an
// upper bound of their response time for 99% of calls. em memoises
// e^{-mu t} along a run of apps of one service rate and shift (survivalMemo).
func badShare(a *app, m *mixApp, slo float64, em *expMemo) float64 {
	if a.errs >= 1 {
		return 1
	}
	slow, _ := m.soj.survivalMemo(slo-m.shift, em)
	return 1 - (1-a.errs)*(1-slow)
}

// energyKWh is the energy of nodeSeconds node-seconds of provisioned nodes
// (booting or ready) and busyCoreSeconds busy core-seconds under the power
// model of cl (domains.Cluster):
//
//	E = (nodeSeconds x NodeIdleWatts + busyCoreSeconds x BusyCoreWatts) / 3.6e6
//
// in kWh (3.6e6 joules a kWh): node power is linear in its busy cores.
func energyKWh(nodeSeconds, busyCoreSeconds float64, cl *domains.Cluster) float64 {
	return (nodeSeconds*cl.NodeIdleWatts + busyCoreSeconds*cl.BusyCoreWatts) / 3.6e6
}

// tick accounts the cluster at tick t, after every app.
func (m *accum) tick(p *pool, pendingPods int32, t int) {
	pods, busy := m.pods, m.busy
	m.pods, m.busy = 0, 0
	if t == m.warm {
		m.startedAtWarm, m.removedAtWarm = p.started, p.removed
	}
	if !m.counted(t) {
		return
	}
	dt := m.dt
	m.nodeCoreSeconds += float64(p.nodes+p.provisioning) * p.nodeCores * dt
	m.busyCoreSeconds += busy * dt
	m.pendingPodSeconds += float64(pendingPods) * dt
	m.peakNodes = max(m.peakNodes, p.nodes+p.provisioning)
	m.peakPods = max(m.peakPods, pods)
	m.seconds += dt
	m.out.endTick(t)
	m.ups.endTick(t)
}

// rise notes that app i's replica target rose at tick t.
func (m *accum) rise(i, t int) {
	if m.counted(t) {
		m.ups.rise(i, t)
	}
}

// Episode states of an app (episodes.since), besides the start tick of an
// open episode.
const (
	covered   = -1 // not short
	uncounted = -2 // short since the initial state: no episode yet
)

// Correlation of an app's open episode (episodes.corr).
const (
	corrUnknown int8 = iota // its 30 s window has not passed yet
	corrYes
	corrNo
)

// episodes tracks scale-out episodes (ScaleOut) tick by tick in buffers
// sized by init. Whether an episode is correlated is known w ticks after it
// starts, once every start within 30 s has happened: until then it waits in
// the bucket of its start tick, one of w+1, each with room for every app.
type episodes struct {
	w         int   // ticks within burstWindow
	minStarts int32 // starts within the window that make an episode correlated
	apps      int
	bins      int     // histogram bins per domain: durations 0..bins-1 ticks
	domain    []int32 // per app
	since     []int32 // per app: start tick of its open episode, covered or uncounted
	corr      []int8  // per app: correlation of its open episode
	entry     []int32 // per app: index in pend of its open episode while corrUnknown
	lastStart []int32 // per app: tick of its latest episode start
	starts    []int32 // ring of 2w+1 ticks: apps whose latest start is at that tick
	pend      []pendingEpisode
	pendN     []int32 // entries in each of the w+1 buckets of pend
	all, cor  []int32 // per domain x bins: ended episodes by duration in ticks
}

// pendingEpisode is an episode awaiting its correlation: ticks is its
// duration once it has ended, 0 while it is open.
type pendingEpisode struct{ app, ticks int32 }

func (e *episodes) init(apps []app, domains, steps, w int) {
	e.w, e.apps = w, len(apps)
	e.minStarts = int32(max(2, (correlatedPercent*len(apps)+99)/100))
	e.bins = steps + 2
	e.domain = make([]int32, len(apps))
	for i := range apps {
		e.domain[i] = apps[i].domain
	}
	e.since = make([]int32, len(apps))
	e.corr = make([]int8, len(apps))
	e.entry = make([]int32, len(apps))
	e.lastStart = make([]int32, len(apps))
	for i := range e.lastStart {
		e.lastStart[i] = math.MinInt32 / 2
	}
	e.starts = make([]int32, 2*w+1)
	e.pend = make([]pendingEpisode, (w+1)*len(apps))
	e.pendN = make([]int32, w+1)
	e.all = make([]int32, domains*e.bins)
	e.cor = make([]int32, domains*e.bins)
}

func (e *episodes) initial(i int, short bool) {
	e.since[i] = covered
	if short {
		e.since[i] = uncounted
	}
}

func (e *episodes) app(i int, short bool, t int) {
	switch s := e.since[i]; {
	case short && s == covered:
		e.since[i] = int32(t)
		if p := int(e.lastStart[i]); t-p < len(e.starts) {
			e.starts[p%len(e.starts)]-- // counted at its latest start only
		}
		e.starts[t%len(e.starts)]++
		e.lastStart[i] = int32(t)
		b := t % (e.w + 1)
		k := b*e.apps + int(e.pendN[b])
		e.pend[k] = pendingEpisode{app: int32(i)}
		e.pendN[b]++
		e.entry[i] = int32(k)
		e.corr[i] = corrUnknown
	case !short && s >= 0:
		ticks := int32(t) - s
		h := int(e.domain[i])*e.bins + min(int(ticks), e.bins-1)
		e.all[h]++
		switch e.corr[i] {
		case corrYes:
			e.cor[h]++
		case corrUnknown:
			e.pend[e.entry[i]].ticks = ticks
		}
		e.since[i] = covered
	case !short && s == uncounted:
		e.since[i] = covered
	}
}

// endTick settles the correlation of the episodes that started w ticks
// before t, whose window ends at t.
func (e *episodes) endTick(t int) {
	if t0 := t - e.w; t0 >= 1 {
		n := int32(0)
		for _, c := range e.starts { // apps starting at ticks t0-w .. t0+w
			n += c
		}
		b := t0 % (e.w + 1)
		for _, p := range e.pend[b*e.apps : b*e.apps+int(e.pendN[b])] {
			switch {
			case p.ticks > 0 && n >= e.minStarts:
				e.cor[int(e.domain[p.app])*e.bins+min(int(p.ticks), e.bins-1)]++
			case p.ticks == 0 && n >= e.minStarts:
				e.corr[p.app] = corrYes
			case p.ticks == 0:
				e.corr[p.app] = corrNo
			}
		}
		e.pendN[b] = 0
	}
	e.starts[(t+1)%len(e.starts)] = 0 // tick t-2w leaves every window to come
}

// correlatedAt is, at the end of tick now, whether an episode that started
// at t0 > now - w is correlated, its window cut at now.
func (e *episodes) correlatedAt(t0, now int) bool {
	n := int32(0)
	for k := max(1, t0-e.w); k <= now; k++ {
		n += e.starts[k%len(e.starts)]
	}
	return n >= e.minStarts
}

// histograms returns per domain the duration histograms (ticks) of every
// and of the correlated episodes at the end of tick now, open and pending
// ones included, and the open episodes among them. It leaves e untouched.
func (e *episodes) histograms(domains, now int) (all, cor [][]int32, allOpen, corOpen []int) {
	all, cor = make([][]int32, domains), make([][]int32, domains)
	for d := range domains {
		all[d] = slices.Clone(e.all[d*e.bins : (d+1)*e.bins])
		cor[d] = slices.Clone(e.cor[d*e.bins : (d+1)*e.bins])
	}
	allOpen, corOpen = make([]int, domains), make([]int, domains)
	for i, s := range e.since {
		if s < 0 {
			continue
		}
		d := e.domain[i]
		ticks := min(now-int(s)+1, e.bins-1)
		all[d][ticks]++
		allOpen[d]++
		if e.corr[i] == corrYes || e.corr[i] == corrUnknown && e.correlatedAt(int(s), now) {
			cor[d][ticks]++
			corOpen[d]++
		}
	}
	for t0 := max(1, now-e.w+1); t0 <= now; t0++ {
		b := t0 % (e.w + 1)
		if !e.correlatedAt(t0, now) {
			continue
		}
		for _, p := range e.pend[b*e.apps : b*e.apps+int(e.pendN[b])] {
			if p.ticks > 0 {
				cor[e.domain[p.app]][min(int(p.ticks), e.bins-1)]++
			}
		}
	}
	return all, cor, allOpen, corOpen
}

// scaleOutOf summarises a duration histogram (ticks of dt seconds).
func scaleOutOf(h []int32, open int, dt float64) ScaleOut {
	n := 0
	for _, c := range h {
		n += int(c)
	}
	out := ScaleOut{Episodes: n, Open: open}
	if n > 0 {
		out.P50Seconds = float64(nearestRank(h, n, 50)) * dt
		out.P95Seconds = float64(nearestRank(h, n, 95)) * dt
	}
	return out
}

// nearestRank is the smallest d with at least ceil(pct% of n) of the n
// counted values <= d, for a histogram h of values 0..len(h)-1.
func nearestRank(h []int32, n, pct int) int {
	need := max(1, (pct*n+99)/100)
	seen := 0
	for d, c := range h {
		if seen += int(c); seen >= need {
			return d
		}
	}
	return len(h) - 1
}

// addTo adds histogram h into sum.
func addTo(sum, h []int32) {
	for k, c := range h {
		sum[k] += c
	}
}

// scaleUps finds the most distinct apps whose target rose within burstWindow.
type scaleUps struct {
	last []int32 // per app: last tick its target rose
	ring []int32 // w+1 ticks: apps whose last rise was at that tick
	max  int32
}

func (u *scaleUps) init(apps, w int) {
	u.last = make([]int32, apps)
	for i := range u.last {
		u.last[i] = math.MinInt32 / 2
	}
	u.ring = make([]int32, w+1)
}

func (u *scaleUps) rise(i, t int) {
	if p := int(u.last[i]); t-p < len(u.ring) {
		u.ring[p%len(u.ring)]-- // counted at its latest rise only
	}
	u.ring[t%len(u.ring)]++
	u.last[i] = int32(t)
}

func (u *scaleUps) endTick(t int) {
	n := int32(0)
	for _, c := range u.ring { // ticks t-w .. t
		n += c
	}
	u.max = max(u.max, n)
	u.ring[(t+1)%len(u.ring)] = 0 // tick t-w leaves the window
}

// Metrics summarises the run so far.
func (s *Sim) Metrics() Metrics {
	m := &s.metric
	out := Metrics{
		CostCoreHours:      m.nodeCoreSeconds / 3600,
		PeakNodes:          m.peakNodes,
		PendingPodHours:    m.pendingPodSeconds / 3600,
		NodeProvisions:     s.pool.started - m.startedAtWarm,
		NodeRemovals:       s.pool.removed - m.removedAtWarm,
		MaxScaleUps30s:     int(m.ups.max),
		PriorityInversions: m.inversions,
		P3WhileP0Waits:     m.p3WhileP0,
		Preemptions:        sumInts(m.preempted),
		PeakPods:           m.peakPods,
		SimSeconds:         m.seconds,
	}
	out.Cost = out.CostCoreHours * s.cfg.Cluster.CostPerCoreHour
	s.provisionerMetrics(&out)
	out.NodeChurn = out.NodeProvisions + out.NodeRemovals
	if m.seconds > 0 {
		out.NodeChurnPerHour = float64(out.NodeChurn) / (m.seconds / 3600)
	}
	if m.nodeCoreSeconds > 0 {
		out.AvgCPUUtilisation = m.busyCoreSeconds / m.nodeCoreSeconds
	}
	// Request-weighted SLO and energy (issue 31): the idle power is shared
	// out by scheduled core-seconds.
	cl := &s.cfg.Cluster
	nodeSeconds := m.nodeCoreSeconds / cl.NodeCores
	out.EnergyKWh = energyKWh(nodeSeconds, m.busyCoreSeconds, cl)
	var coreSeconds float64
	for _, c := range m.coreSeconds {
		coreSeconds += c
	}
	floor := make([]float64, len(s.doms)) // core-hours
	for i := range s.apps {
		a := &s.apps[i]
		floor[a.domain] += float64(s.cfg.Domains[a.domain].AppSets[a.set].MinReplicas) * a.cpu * m.seconds / 3600
	}
	atMax := make([]float64, len(s.doms)) // breached app-ticks with max_replicas ready
	apps := s.cfg.Apps()
	out.CeilingBound = []CeilingBound{} // [] rather than null in JSON
	for i, t := range m.breachesAtMax {
		if t == 0 {
			continue
		}
		a := &s.apps[i]
		atMax[a.domain] += t
		out.CeilingBound = append(out.CeilingBound, CeilingBound{App: apps[i].Name, MaxReplicas: int(a.maxReplicas), BreachAppMinutes: t * s.dt / 60})
	}
	slices.SortStableFunc(out.CeilingBound, func(a, b CeilingBound) int { return cmp.Compare(b.BreachAppMinutes, a.BreachAppMinutes) })
	all, cor, allOpen, corOpen := m.out.histograms(len(s.doms), s.step)
	var ticks, breaches float64
	for di, d := range s.doms {
		dm := DomainMetrics{
			Name: d.name, Priority: d.prio,
			CoreHours:             m.coreSeconds[di] / 3600,
			BreachAppMinutes:      m.breaches[di] * s.dt / 60,
			BreachAppMinutesAtMax: atMax[di] * s.dt / 60,
			ScalingActions:        m.actions[di],
			SLOCompliance:         1,
			PendingPodHours:       m.pendingSeconds[di] / 3600,
			FloorCoreHours:        floor[di],
			ScaleOut:              scaleOutOf(cor[di], corOpen[di], s.dt),
			ScaleOutAll:           scaleOutOf(all[di], allOpen[di], s.dt),
		}
		if m.appTicks[di] > 0 {
			dm.SLOCompliance = 1 - m.breaches[di]/m.appTicks[di]
		}
		// Request-weighted SLO and energy (issue 31).
		dm.Requests, dm.BadRequests = m.requests[di], m.badRequests[di]
		dm.BadRequestRatio = ratioOf(dm.BadRequests, dm.Requests)
		dm.EnergyKWh = energyKWh(0, m.busyCoreSecs[di], cl)
		if coreSeconds > 0 {
			dm.EnergyKWh += energyKWh(nodeSeconds*m.coreSeconds[di]/coreSeconds, 0, cl)
		}
		out.Requests += dm.Requests
		out.BadRequests += dm.BadRequests
		ticks += m.appTicks[di]
		breaches += m.breaches[di]
		out.BreachAppMinutes += dm.BreachAppMinutes
		out.BreachAppMinutesAtMax += dm.BreachAppMinutesAtMax
		out.ScalingActions += dm.ScalingActions
		out.FloorCoreHours += dm.FloorCoreHours
		out.Domains = append(out.Domains, dm)
	}
	out.BadRequestRatio = ratioOf(out.BadRequests, out.Requests)
	out.SLOCompliance = 1
	if ticks > 0 {
		out.SLOCompliance = 1 - breaches/ticks
	}

	// Tiers, and the cluster over every domain.
	var prios []int
	for _, d := range s.doms {
		if !slices.Contains(prios, d.prio) {
			prios = append(prios, d.prio)
		}
	}
	slices.Sort(prios)
	clusterAll, clusterCor := make([]int32, m.out.bins), make([]int32, m.out.bins)
	var clusterAllOpen, clusterCorOpen int
	for _, prio := range prios {
		t := TierMetrics{Priority: prio}
		tierAll, tierCor := make([]int32, m.out.bins), make([]int32, m.out.bins)
		var tierAllOpen, tierCorOpen int
		for di, d := range s.doms {
			if d.prio != prio {
				continue
			}
			t.Domains = append(t.Domains, d.name)
			t.PendingPodHours += out.Domains[di].PendingPodHours
			t.FloorCoreHours += floor[di]
			t.Requests += out.Domains[di].Requests
			t.BadRequests += out.Domains[di].BadRequests
			t.EnergyKWh += out.Domains[di].EnergyKWh
			t.Preempted += m.preempted[di]
			addTo(tierAll, all[di])
			addTo(tierCor, cor[di])
			tierAllOpen += allOpen[di]
			tierCorOpen += corOpen[di]
		}
		t.BadRequestRatio = ratioOf(t.BadRequests, t.Requests)
		t.ScaleOut = scaleOutOf(tierCor, tierCorOpen, s.dt)
		t.ScaleOutAll = scaleOutOf(tierAll, tierAllOpen, s.dt)
		addTo(clusterAll, tierAll)
		addTo(clusterCor, tierCor)
		clusterAllOpen += tierAllOpen
		clusterCorOpen += tierCorOpen
		out.Tiers = append(out.Tiers, t)
	}
	out.ScaleOut = scaleOutOf(clusterCor, clusterCorOpen, s.dt)
	out.ScaleOutAll = scaleOutOf(clusterAll, clusterAllOpen, s.dt)
	return out
}

// ratioOf is num / den, 0 when den is 0.
func ratioOf(num, den float64) float64 {
	if den <= 0 {
		return 0
	}
	return num / den
}

// provisionerMetrics fills the node provisioner's block of out.
func (s *Sim) provisionerMetrics(out *Metrics) {
	p := &s.pool
	w := &p.waits
	p95, maxWait, stall := p.reqs.waitsAt(w, s.step, p.provisionTicks)
	out.LaunchFailures = w.failures
	out.InsufficientCapacityFailures = w.short
	out.ProvisionerStalls = w.stalls
	out.LongestStallMinutes = float64(stall) * s.dt / 60
	out.NodeWaitP95Seconds = float64(p95) * s.dt
	out.NodeWaitMaxSeconds = float64(maxWait) * s.dt
	out.MaxNodeQueue = w.maxQueued
	out.MaxNodeRequests2m = w.maxBurst
}

// sumInts is the sum of xs.
func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
