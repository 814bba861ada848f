package sim

import (
	"math"

	"github.com/regimentd/regiment/internal/core/domains"
)

// pool is the contested node pool. Nodes are requested for pending replicas,
// wait in the provisioner's queue, which starts at most ProvisionerRate per
// minute (bursts queue: the stampede) from a token bucket of burstCap starts,
// in request order, become ready NodeProvisionTime later,
// and are removed once they have stayed free for NodeIdleTimeout, as the
// cluster autoscaler removes each node unneeded that long: with any free core
// fitting any replica (ideal bin packing), the nodes free for a whole window
// are the fewest free at any tick of it.
// A capacity target (Sim.SetCapacityTarget) keeps at least targetNodes
// ready, provisioning or queued, and holds them against scale-down.
type pool struct {
	nodeCores       float64
	maxNodes        int32
	costPerCoreHour float64
	provisionTicks  int
	idleTicks       int // ticks of idleness before scale-down
	ratePerTick     float64
	burstCap        float64 // most credit the provisioner holds, node starts

	nodes        int32   // ready
	provisioning int32   // started, not ready
	queued       int32   // requested, not started
	credit       float64 // provisioner starts available this tick
	ring         []int32 // nodes becoming ready at tick t are at ring[t % len]
	scheduled    float64 // cores of ready and starting replicas
	pendingCores float64 // cores of pending replicas
	freeNodes    []int32 // removable nodes at each of the last idleTicks ticks, a ring
	freeAt       int     // the ring slot of the tick planned next
	started      int     // nodes the provisioner started, over the run
	removed      int     // idle nodes scaled down, over the run
	targetCores  float64 // capacity target, cores, in [0, maxNodes x nodeCores]
	targetNodes  int32   // the target in whole nodes, ceil(targetCores / nodeCores)

	// The provisioner model (provisioner.go): kind picks advance's rule;
	// cloud, ca and kp are the cloud's and the two provisioners' state;
	// reqs and waits account every node request's wait.
	kind  int
	cloud cloud
	ca    autoscaler
	kp    karpenter
	reqs  requests
	waits waits
}

func newPool(c *domains.Cluster, dt float64, steps int) pool {
	p := pool{
		nodeCores:       c.NodeCores,
		maxNodes:        int32(c.CapacityCores / c.NodeCores),
		costPerCoreHour: c.CostPerCoreHour,
		provisionTicks:  max(1, int(math.Ceil(c.NodeProvisionTime.Seconds()/dt))),
		idleTicks:       max(1, int(math.Ceil(c.NodeIdleTimeout.Seconds()/dt))),
		ratePerTick:     c.ProvisionerRate * dt / 60,
	}
	// A bucket smaller than one tick's refill would cut the rate; 0 is one
	// tick's refill, at least one start so that a slow provisioner starts at all.
	p.burstCap = max(p.ratePerTick, max(float64(c.ProvisionerBurst), 1))
	p.ring = make([]int32, p.provisionTicks+1)
	p.freeNodes = make([]int32, p.idleTicks)
	p.reqs = newRequests(steps)
	p.waits.hist = make([]int64, steps+p.provisionTicks+2)
	p.waits.burst = make([]int32, max(1, int(math.Round(burstWindowSeconds/dt))))
	p.kp.opened = -1
	switch c.Provisioner {
	case domains.ProvisionerClusterAutoscaler:
		p.kind = kindAutoscaler
		p.ca = autoscaler{
			scanTicks: ticksOf(c.ScanInterval, dt),
			initial:   ticksOf(c.InitialNodeGroupBackoff, dt), maxBackoff: ticksOf(c.MaxNodeGroupBackoff, dt),
			reset: ticksOf(c.NodeGroupBackoffReset, dt), maxProvisionTicks: ticksOf(c.MaxNodeProvisionTime, dt),
		}
	case domains.ProvisionerKarpenter:
		p.kind = kindKarpenter
		p.kp.idleTicks, p.kp.maxTicks = ticksOf(c.BatchIdleDuration, dt), ticksOf(c.BatchMaxDuration, dt)
		p.kp.ttlTicks = ticksOf(c.UnavailableOfferingsTTL, dt)
	}
	if p.kind != kindBucket {
		p.cloud = newCloud(c, dt)
	}
	return p
}

// outstanding is the nodes requested and not started: the provisioner's
// queue, and a cluster autoscaler's launches at the cloud.
func (p *pool) outstanding() int32 { return p.queued + p.ca.group + p.ca.failed }

// startNodes starts n nodes at tick t, ready provisionTicks later.
func (p *pool) startNodes(n int32, t int) {
	if n <= 0 {
		return
	}
	p.provisioning += n
	p.started += int(n)
	p.ring[(t+p.provisionTicks)%len(p.ring)] += n
	p.reqs.start(n, t, p.provisionTicks, &p.waits)
}

// failed accounts a launch of which throttled instances were throttled
// and short found no spare capacity.
func (p *pool) failed(throttled, short int32) {
	if throttled+short == 0 {
		return
	}
	p.waits.failures += int(throttled + short)
	p.waits.short += int(short)
	p.reqs.flagFailed()
}

// advance makes the nodes due at tick t ready and lets the provisioner start
// queued requests.
func (p *pool) advance(t int) {
	k := t % len(p.ring)
	p.nodes += p.ring[k]
	p.provisioning -= p.ring[k]
	p.ring[k] = 0

	switch p.kind {
	case kindKarpenter:
		p.advanceKarpenter(t)
		return
	case kindAutoscaler:
		p.advanceAutoscaler(t)
		return
	}
	p.credit = min(p.credit+p.ratePerTick, p.burstCap)
	start := min(p.queued, int32(p.credit))
	if start > 0 {
		p.queued -= start
		p.credit -= float64(start)
		p.startNodes(start, t)
	}
}

// advanceKarpenter launches the closed batch's node claims, unless the
// offering is unavailable (see karpenter).
func (p *pool) advanceKarpenter(t int) {
	p.cloud.refill()
	k := &p.kp
	if p.queued == 0 || t < k.unavailableUntil {
		return
	}
	if k.opened >= 0 && t-k.last < k.idleTicks && t-k.opened < k.maxTicks {
		return // the batch is still open
	}
	k.opened = -1
	launched, throttled, short := p.cloud.launch(p.queued)
	p.queued -= launched
	p.startNodes(launched, t)
	p.failed(throttled, short)
	if short > 0 {
		k.unavailableUntil = t + k.ttlTicks
		p.waits.stalls++
	}
}

// advanceAutoscaler runs the cluster autoscaler's loop when a scan is due,
// then the cloud's node group launches what it can (see autoscaler).
func (p *pool) advanceAutoscaler(t int) {
	p.cloud.refill()
	a := &p.ca
	if t%a.scanTicks == 0 {
		a.backoff.forgetStale(t, a.reset)
		if a.failed > 0 { // the group's launches found no capacity: a failed scale-up
			a.backoff.fail(t, a.initial, a.maxBackoff)
			p.waits.stalls++
			p.queued += a.failed // their pods are pending still
			a.failed, a.scaling = 0, false
		}
		if a.scaling {
			switch {
			case a.group == 0 && p.provisioning == 0: // every node registered: reset the backoff
				a.scaling, a.backoff = false, groupBackoff{}
			case t >= a.expected: // not all ready within max-node-provision-time
				a.backoff.fail(t, a.initial, a.maxBackoff)
				p.waits.stalls++
				p.queued += a.group // the unlaunched instances are removed
				a.group, a.scaling = 0, false
			}
		}
		if p.queued > 0 && !a.backoff.backedOff(t) {
			n := min(p.queued, maxFleet)
			p.queued -= n
			a.group += n
			a.scaling, a.expected = true, t+a.maxProvisionTicks
		}
	}
	if a.group > 0 {
		launched, throttled, short := p.cloud.launch(a.group)
		a.group -= launched + short
		a.failed += short
		p.startNodes(launched, t)
		p.failed(throttled, short)
	}
}

// plan requests nodes for pending replicas and for the capacity target's
// shortfall, and removes idle nodes beyond the target.
func (p *pool) plan(t int) {
	asked := p.queued
	inflight := float64(p.provisioning+p.outstanding()) * p.nodeCores
	if short := p.pendingCores - inflight; short > 0 {
		want := int32(math.Ceil(short / p.nodeCores))
		p.queued += min(want, p.maxNodes-p.nodes-p.provisioning-p.outstanding())
	}
	// targetNodes <= maxNodes, so this stays within the pool.
	if short := p.targetNodes - p.nodes - p.provisioning - p.outstanding(); short > 0 {
		p.queued += short
	}
	p.waits.request(t, max(p.queued-asked, 0))
	if n := p.queued - asked; n > 0 {
		p.reqs.add(t, n)
		if p.kp.opened < 0 {
			p.kp.opened = t
		}
		p.kp.last = t
	}
	p.waits.maxQueued = max(p.waits.maxQueued, p.outstanding())
	free := float64(p.nodes)*p.nodeCores - p.scheduled
	removable := int32(free / p.nodeCores)
	if p.targetNodes > 0 {
		removable = min(removable, p.nodes+p.provisioning+p.outstanding()-p.targetNodes)
	}
	if p.pendingCores > 0 { // pending replicas would take the free cores
		removable = 0
	}
	p.freeNodes[p.freeAt] = max(removable, 0)
	p.freeAt = (p.freeAt + 1) % len(p.freeNodes)
	idle := p.freeNodes[0]
	for _, n := range p.freeNodes[1:] {
		idle = min(idle, n)
	}
	if idle == 0 {
		return
	}
	p.nodes -= idle
	p.removed += int(idle)
	p.cloud.release(idle)
	for k := range p.freeNodes { // those nodes were free at every tick of the window
		p.freeNodes[k] -= idle
	}
}

// setTarget sets the capacity target to cores, clamped to the pool's size.
func (p *pool) setTarget(cores float64) {
	p.targetCores = min(cores, float64(p.maxNodes)*p.nodeCores)
	// A hair below a whole node is that node: float sums of replica cores
	// must not ask for one more.
	p.targetNodes = int32(math.Ceil(p.targetCores/p.nodeCores - 1e-9))
}
