package sim

import (
	"math"

	"github.com/regimentd/regiment/domains"
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
}

func newPool(c *domains.Cluster, dt float64) pool {
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
	return p
}

// advance makes the nodes due at tick t ready and lets the provisioner start
// queued requests.
func (p *pool) advance(t int) {
	k := t % len(p.ring)
	p.nodes += p.ring[k]
	p.provisioning -= p.ring[k]
	p.ring[k] = 0

	p.credit = min(p.credit+p.ratePerTick, p.burstCap)
	start := min(p.queued, int32(p.credit))
	if start > 0 {
		p.queued -= start
		p.credit -= float64(start)
		p.provisioning += start
		p.started += int(start)
		p.ring[(t+p.provisionTicks)%len(p.ring)] += start
	}
}

// plan requests nodes for pending replicas and for the capacity target's
// shortfall, and removes idle nodes beyond the target.
func (p *pool) plan(t int) {
	inflight := float64(p.provisioning+p.queued) * p.nodeCores
	if short := p.pendingCores - inflight; short > 0 {
		want := int32(math.Ceil(short / p.nodeCores))
		p.queued += min(want, p.maxNodes-p.nodes-p.provisioning-p.queued)
	}
	// targetNodes <= maxNodes, so this stays within the pool.
	if short := p.targetNodes - p.nodes - p.provisioning - p.queued; short > 0 {
		p.queued += short
	}
	free := float64(p.nodes)*p.nodeCores - p.scheduled
	removable := int32(free / p.nodeCores)
	if p.targetNodes > 0 {
		removable = min(removable, p.nodes+p.provisioning+p.queued-p.targetNodes)
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
