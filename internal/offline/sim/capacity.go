package sim

import (
	"fmt"
	"math"
)

// SetCapacityTarget asks the pool to hold at least cores CPU cores of nodes
// from the next Step on, ahead of the replicas that will use them; it holds
// until set again. 0, the initial value, is no target: the pool then asks
// for nodes only for pending replicas, exactly as without this call.
//
// It is how a real cluster pre-provisions: placeholder ("balloon" or
// overprovisioning) pods of the lowest priority that reserve cores, for which
// the cluster autoscaler (or Karpenter) provisions nodes like for any pending
// pod, and which real pods preempt at once. Here the placeholders are not
// modelled pod by pod: their cores are simply free, and any pending replica
// may take them (packed as every free core is, with the config's packing_loss).
//
// Invariants, at each Step's node planning:
//
//	ready + provisioning + queued nodes >= ceil(target / node_cores)
//	idle-node scale-down keeps at least ceil(target / node_cores) of them
//
// alongside the pending replicas' own requests, so the pool covers at least
// max(target, scheduled + pending cores). The shortfall is queued through the
// same FIFO provisioner as every other request, at the same provisioner_rate
// and provisioner_burst, each node ready node_provision_time after it starts
// and costing from its start: a target buys time, not capacity. Nodes beyond
// the target still go only after node_idle_timeout of idleness.
//
// With a packing_loss, cores are the placeholders' (pods') cores: the pool
// holds cores / (1 - packing_loss) of node cores for them, as it does for
// every replica.
//
// cores must be finite and >= 0, else the target is left unchanged and an
// error returned; above capacity_cores it is clamped to the pool's whole
// nodes (CapacityTarget returns the clamped value). It does not allocate
// unless it fails.
func (s *Sim) SetCapacityTarget(cores float64) error {
	if math.IsNaN(cores) || math.IsInf(cores, 0) || cores < 0 {
		return fmt.Errorf("set capacity target: %v cores is not a finite number >= 0", cores)
	}
	s.pool.setTarget(cores / s.sched.packing)
	return nil
}

// CapacityTarget is the capacity target in force, cores: the last one set,
// clamped to the pool's whole nodes (0: none).
func (s *Sim) CapacityTarget() float64 { return s.pool.targetCores * s.sched.packing }

// ProvisionerStarts writes into starts[m], for every m < len(starts), the
// fewest nodes the provisioner starts in m consecutive ticks while requests
// stay queued: from an empty bucket, refilled by a rate r each tick and
// holding at most a cap, each tick starting the whole starts the bucket
// holds. starts[0] is 0. A planner counts on it to know how late a node may
// still be asked for. It does not allocate.
//
// With provisioner = "token-bucket", r is provisioner_rate x tick and the
// cap provisioner_burst (or one tick's refill): the bucket's cap can make it
// fall short of m x r. With "cluster-autoscaler" or "karpenter", r is the
// cloud's sustained launch rate, the slower of launch_instance_rate and
// spare_capacity_rate (when spare_capacity limits), and the cap one tick's
// r (at least one node): the bursts are left out, so a planner that never
// has more nodes outstanding than these starts allow asks for no more per
// tick than the cloud refills, and no launch of its fails (the buckets and
// the spare capacity start full). The scan interval's and the batch's
// delays are within the one tick the node lead time already counts when
// they are at most a tick (the defaults, at a 10 s tick).
func (s *Sim) ProvisionerStarts(starts []int) {
	p := &s.pool
	rate, limit := p.ratePerTick, p.burstCap
	if p.kind != kindBucket {
		rate = p.cloud.sustainedPerTick()
		limit = max(rate, 1)
	}
	credit, n := 0.0, 0
	for m := range starts {
		starts[m] = n
		credit = math.Min(credit+rate, limit) // as pool.advance
		k := int32(credit)
		credit -= float64(k)
		n += int(k)
	}
}
