package sim

import (
	"math"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// The node provisioner as clusters have it (cluster.provisioner): the
// cloud's launch API and the region's spare capacity (cloud), and either
// Cluster Autoscaler's scan loop and node-group backoff (autoscaler) or
// Karpenter's pod batching and unavailable-offerings cache (karpenter).
// The token bucket of provisioner_rate and provisioner_burst (pool.advance)
// is the third, the default: it never fails a launch.
//
// Everything here counts whole nodes and whole ticks: a duration d is
// ceil(d / tick) ticks, at least one.

// provisioner kinds (pool.kind).
const (
	kindBucket = iota
	kindAutoscaler
	kindKarpenter
)

// maxFleet is the most instances one launch call asks for: Karpenter's
// CreateFleet batcher merges identical CreateFleet calls up to 1,000
// (karpenter-provider-aws pkg/batcher/createfleet.go, MaxItems), and
// cluster-autoscaler scales a node group by at most --max-nodes-per-scaleup
// (1,000) a loop.
const maxFleet = 1000

// bucket is a token bucket: it holds at most size tokens and gains perTick
// each tick. It starts full, as an account's buckets after a quiet spell.
type bucket struct {
	tokens, size, perTick float64
}

func newBucket(size, perTick float64) bucket {
	return bucket{tokens: size, size: size, perTick: perTick}
}

func (b *bucket) refill() { b.tokens = min(b.tokens+b.perTick, b.size) }

// take takes up to n whole tokens and returns how many it took.
func (b *bucket) take(n int32) int32 {
	k := min(n, int32(b.tokens))
	b.tokens -= float64(k)
	return k
}

// cloud is the cloud's launch API, throttled as EC2 throttles it per
// account and region (two token buckets: API calls, and instances
// launched), and the region's spare capacity of the node type: a pool of
// launchable instances that refills at its own rate and gets back the
// nodes scaled down. A launch beyond either bucket fails throttled
// (RequestLimitExceeded), beyond the spare capacity with insufficient
// capacity (InsufficientInstanceCapacity).
type cloud struct {
	calls     bucket // launch API calls
	instances bucket // instances launched (resource tokens)
	spare     bucket // the region's spare capacity; size 0: unlimited
}

func newCloud(c *domains.Cluster, dt float64) cloud {
	return cloud{
		calls:     newBucket(float64(c.LaunchRequestBurst), c.LaunchRequestRate*dt),
		instances: newBucket(float64(c.LaunchInstanceBurst), c.LaunchInstanceRate*dt),
		spare:     newBucket(float64(c.SpareCapacity), c.SpareCapacityRate*dt/60),
	}
}

func (c *cloud) refill() {
	c.calls.refill()
	c.instances.refill()
	c.spare.refill()
}

// launch asks for n instances in as few calls as maxFleet allows, whole
// calls first: it returns the instances launched, those throttled (a call
// or an instance token short) and those that found no spare capacity. A
// call launches what it can (CreateFleet's instant fleets fulfil partly).
func (c *cloud) launch(n int32) (launched, throttled, short int32) {
	if n <= 0 {
		return 0, 0, 0
	}
	calls := c.calls.take((n + maxFleet - 1) / maxFleet)
	want := min(n, calls*maxFleet)
	tokens := min(want, int32(c.instances.tokens))
	launched = tokens
	if c.spare.size > 0 {
		launched = min(tokens, int32(c.spare.tokens))
		c.spare.tokens -= float64(launched)
	}
	c.instances.tokens -= float64(launched)
	return launched, n - tokens, tokens - launched
}

// release gives n scaled-down nodes back to the region's spare capacity.
func (c *cloud) release(n int32) {
	if c.spare.size > 0 {
		c.spare.tokens = min(c.spare.tokens+float64(n), c.spare.size)
	}
}

// sustainedPerTick is the most instances the cloud launches per tick for
// ever: the slower of the instance bucket's refill and the spare
// capacity's (unlimited spare capacity does not bind).
func (c *cloud) sustainedPerTick() float64 {
	r := c.instances.perTick
	if c.spare.size > 0 {
		r = min(r, c.spare.perTick)
	}
	return r
}

// autoscaler is Cluster Autoscaler with one node group (the pool's node
// type; cluster-autoscaler FAQ, core/static_autoscaler.go): every scan
// interval it scales the group up once by the nodes pending pods still
// need (the pool's queue), unless the group is backed off; the cloud's
// group (an Auto Scaling group) launches them as its buckets allow,
// retrying throttled launches, and drops those short of spare capacity,
// which the next loop sees as a failed scale-up (the placeholder instances
// of cloudprovider/aws). A failed scale-up, or one whose nodes are not all
// ready within max-node-provision-time, backs the group off
// (utils/backoff/exponential_backoff.go): initial backoff, doubled if the
// group was not backed off at the failure, at most the max, forgotten once
// the last failure is reset old or a scale-up completes
// (clusterstate.updateScaleRequests).
type autoscaler struct {
	scanTicks                int
	initial, maxBackoff      int // backoff, ticks
	reset, maxProvisionTicks int
	group                    int32 // the node group's launches outstanding at the cloud
	failed                   int32 // launches that found no capacity, seen at the next scan
	scaling                  bool  // a scale-up in progress
	expected                 int   // tick by which its nodes must be ready
	backoff                  groupBackoff
}

// groupBackoff is exponentialBackoff's entry for the one node group.
type groupBackoff struct {
	found      bool
	duration   int // ticks
	until      int // backed off while t < until
	lastFailed int
}

// fail backs the group off at tick t (exponentialBackoff.Backoff).
func (b *groupBackoff) fail(t, initial, maxTicks int) {
	d := initial
	if b.found && b.until < t { // not backed off now: double the last
		d = min(2*b.duration, maxTicks)
	}
	*b = groupBackoff{found: true, duration: d, until: t + d, lastFailed: t}
}

// backedOff is IsBackedOff at tick t.
func (b *groupBackoff) backedOff(t int) bool { return b.found && b.until > t }

// forgetStale is RemoveStaleBackoffData at tick t.
func (b *groupBackoff) forgetStale(t, reset int) {
	if b.found && b.lastFailed+reset < t {
		*b = groupBackoff{}
	}
}

// karpenter is Karpenter's provisioner with one offering (the pool's node
// type in one zone): pending pods are batched until BATCH_IDLE_DURATION
// passes without new ones or BATCH_MAX_DURATION since the batch opened,
// then each node claim is launched (one CreateFleet each, which the cloud
// provider batches into calls of up to 1,000); a launch that finds no
// capacity marks the offering unavailable for UnavailableOfferingsTTL
// (karpenter-provider-aws pkg/cache), during which no pod can get a node
// claim, and the claims that failed are deleted, their pods pending again;
// throttled launches are retried. Pending pods are looked at again every
// tick (the provisioner's 10 s requeue).
type karpenter struct {
	idleTicks, maxTicks int
	ttlTicks            int
	opened, last        int // the open batch's first and last tick of new requests; opened < 0: none
	unavailableUntil    int // the offering is unavailable while t < unavailableUntil
}

// ticksOf is d in whole ticks of dt seconds, rounded up, at least one.
func ticksOf(d time.Duration, dt float64) int {
	return max(1, int(math.Ceil(d.Seconds()/dt-1e-9)))
}

// requests is the FIFO of outstanding node requests: count[k] nodes asked
// for at tick at[k], matched to node starts in request order; the oldest
// failedN entries were outstanding at a failed launch. It holds at most one
// entry per tick, so a ring of steps + 2 never overflows.
type requests struct {
	at, count []int32
	head, n   int
	failedN   int // how many of the oldest entries waited through a failed launch
}

// waits accumulates node requests' waits (ticks from request to ready node).
type waits struct {
	hist      []int64 // nodes by wait in ticks, the last bin the overflow
	maxWait   int
	maxStall  int // longest wait of a request that waited through a failed launch
	failures  int // instances whose launch failed
	short     int // of them, short of spare capacity
	stalls    int // failed launch attempts: node-group backoffs, offerings marked unavailable
	maxQueued int32
	// burst holds the nodes requested at each of the last burstTicks ticks, a
	// ring at t % len; burstSum is their sum and maxBurst its largest.
	burst              []int32
	burstSum, maxBurst int32
}

// burstWindowSeconds is the window of Metrics.MaxNodeRequests2m: a burst of
// node requests is what the pool asks for within two minutes.
const burstWindowSeconds = 120

// request notes n nodes requested at tick t (n may be 0) in the burst window.
func (w *waits) request(t int, n int32) {
	k := t % len(w.burst)
	w.burstSum += n - w.burst[k]
	w.burst[k] = n
	w.maxBurst = max(w.maxBurst, w.burstSum)
}

func newRequests(steps int) requests {
	n := steps + 2
	return requests{at: make([]int32, n), count: make([]int32, n)}
}

// add records n nodes requested at tick t.
func (r *requests) add(t int, n int32) {
	if n <= 0 {
		return
	}
	if r.n > 0 {
		last := (r.head + r.n - 1) % len(r.at)
		if int(r.at[last]) == t {
			r.count[last] += n
			return
		}
	}
	if r.n == len(r.at) { // only a pool stepped past its run's ticks: the newest entry takes it
		r.count[(r.head+r.n-1)%len(r.at)] += n
		return
	}
	k := (r.head + r.n) % len(r.at)
	r.at[k], r.count[k] = int32(t), n
	r.n++
}

// flagFailed marks every outstanding request as having waited through a
// failed launch.
func (r *requests) flagFailed() { r.failedN = r.n }

// start matches n node starts at tick t, ready ready ticks later, to the
// oldest requests and accounts their waits.
func (r *requests) start(n int32, t, ready int, w *waits) {
	for n > 0 && r.n > 0 {
		k := r.head
		take := min(n, r.count[k])
		wait := t + ready - int(r.at[k])
		w.hist[min(wait, len(w.hist)-1)] += int64(take)
		w.maxWait = max(w.maxWait, wait)
		if r.failedN > 0 {
			w.maxStall = max(w.maxStall, wait)
		}
		r.count[k] -= take
		n -= take
		if r.count[k] == 0 {
			r.head = (r.head + 1) % len(r.at)
			r.n--
			if r.failedN > 0 {
				r.failedN--
			}
		}
	}
}

// waitsAt summarises the node requests' waits at the end of tick now,
// counting the requests still outstanding with their wait so far (ready
// no sooner than now + 1 + ready ticks): the nearest-rank p95 and the
// largest wait, and the longest stall, in ticks. It leaves r and w alone.
func (r *requests) waitsAt(w *waits, now, ready int) (p95, maxWait, stall int) {
	maxWait, stall = w.maxWait, w.maxStall
	var n int64
	for _, c := range w.hist {
		n += c
	}
	open := func(k int) (wait int, c int64) {
		j := (r.head + k) % len(r.at)
		return now + 1 + ready - int(r.at[j]), int64(r.count[j])
	}
	for k := range r.n {
		wait, c := open(k)
		n += c
		maxWait = max(maxWait, wait)
		if k < r.failedN {
			stall = max(stall, wait)
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	need := (95*n + 99) / 100
	var seen int64
	p95 = -1
	for d, c := range w.hist {
		// the open requests' waits are merged in by value
		for k := range r.n {
			if wait, oc := open(k); min(wait, len(w.hist)-1) == d {
				c += oc
			}
		}
		if seen += c; seen >= need {
			p95 = d
			break
		}
	}
	if p95 < 0 {
		p95 = len(w.hist) - 1
	}
	return p95, maxWait, stall
}
