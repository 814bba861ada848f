package sim

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// cloudCluster is a cluster of 8-core nodes ready 60 s (6 ticks of 10 s)
// after they start, provisioned by kind through EC2's default buckets and
// a region of spare spare nodes freeing sparePerMin a minute.
func cloudCluster(kind string, spare int, sparePerMin float64) *domains.Cluster {
	c := &domains.Cluster{CapacityCores: 8000, NodeCores: 8, NodeProvisionTime: time.Minute,
		NodeIdleTimeout: time.Hour, Provisioner: kind, SpareCapacity: spare, SpareCapacityRate: sparePerMin}
	cfg := domains.Config{Cluster: *c}
	cfg.Defaults()
	return &cfg.Cluster
}

// TestTokenBucketRefillsToItsSize pins the cloud's buckets: they start
// full, give at most the whole tokens they hold, and refill by their rate
// each tick up to their size.
func TestTokenBucketRefillsToItsSize(t *testing.T) {
	b := newBucket(10, 3)
	if got := b.take(12); got != 10 {
		t.Fatalf("a full bucket of 10 gave %d of 12, want 10", got)
	}
	for range 3 {
		b.refill()
	}
	if got := b.tokens; got != 9 {
		t.Fatalf("after three refills of 3 from empty the bucket holds %v, want 9", got)
	}
	b.refill()
	if got := b.tokens; got != 10 {
		t.Fatalf("a fourth refill left %v, want the bucket's size 10", got)
	}
	b = newBucket(5, 0.4)
	b.take(5)
	b.refill()
	b.refill()
	if got := b.take(1); got != 0 {
		t.Fatalf("0.8 tokens gave %d whole ones, want 0", got)
	}
}

// TestLaunchFailsWhenABucketOrTheSpareCapacityRunsOut pins the cloud's
// launch: calls of up to 1,000 instances from the request bucket, then the
// instance bucket (beyond it: throttled), then the region's spare capacity
// (beyond it: insufficient capacity).
func TestLaunchFailsWhenABucketOrTheSpareCapacityRunsOut(t *testing.T) {
	cases := []struct {
		name                       string
		calls, instances, spare    float64 // tokens held; spare size 0 is unlimited
		n                          int32
		launched, throttled, short int32
	}{
		{name: "within every bucket all launch", calls: 50, instances: 1000, spare: 600, n: 400, launched: 400},
		{name: "beyond the instance bucket the rest is throttled", calls: 50, instances: 5, spare: 600, n: 8, launched: 5, throttled: 3},
		{name: "beyond the spare capacity the rest finds none", calls: 50, instances: 1000, spare: 3, n: 8, launched: 3, short: 5},
		{name: "throttled before short of capacity", calls: 50, instances: 5, spare: 3, n: 8, launched: 3, throttled: 3, short: 2},
		{name: "a call is 1,000 instances: one call left launches 1,000", calls: 1, instances: 5000, spare: 0, n: 2500, launched: 1000, throttled: 1500},
		{name: "no call left throttles all", calls: 0.5, instances: 1000, spare: 0, n: 10, throttled: 10},
		{name: "unlimited spare capacity never runs out", calls: 50, instances: 1000, spare: 0, n: 900, launched: 900},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cloud{calls: newBucket(50, 0), instances: newBucket(5000, 0), spare: newBucket(tc.spare, 0)}
			c.calls.tokens, c.instances.tokens = tc.calls, tc.instances
			l, th, sh := c.launch(tc.n)
			if l != tc.launched || th != tc.throttled || sh != tc.short {
				t.Fatalf("launch(%d) = %d launched, %d throttled, %d short; want %d, %d, %d", tc.n, l, th, sh, tc.launched, tc.throttled, tc.short)
			}
		})
	}
}

// TestNodeGroupBackoffDoublesAndResets pins cluster-autoscaler's
// exponentialBackoff for one node group, in ticks: 30 (5 min) at the first
// failure, doubled at each failure outside a backoff up to 180 (30 min),
// the initial again for a failure inside one, and forgotten once the last
// failure is older than the reset timeout.
func TestNodeGroupBackoffDoublesAndResets(t *testing.T) {
	const initial, maxTicks, reset = 30, 180, 1080
	var b groupBackoff
	for _, step := range []struct {
		t, wantDuration int
	}{
		{0, 30},    // the first failure
		{40, 60},   // after the backoff: doubled
		{110, 120}, // doubled again
		{240, 180}, // 240 would be; capped at the max
		{250, 30},  // inside the backoff (until 420): the initial, as the source does
	} {
		b.fail(step.t, initial, maxTicks)
		if b.duration != step.wantDuration || b.until != step.t+step.wantDuration {
			t.Fatalf("failure at tick %d: backoff %d until %d, want %d until %d", step.t, b.duration, b.until, step.wantDuration, step.t+step.wantDuration)
		}
		if !b.backedOff(step.t) || b.backedOff(b.until) {
			t.Fatalf("failure at tick %d: backed off at it %v, at its end %v; want true, false", step.t, b.backedOff(step.t), b.backedOff(b.until))
		}
	}
	b.forgetStale(250+reset, reset)
	if !b.found {
		t.Fatal("a failure exactly the reset timeout old was forgotten")
	}
	b.forgetStale(250+reset+1, reset)
	if b.found {
		t.Fatal("a failure older than the reset timeout was kept")
	}
	b.fail(2000, initial, maxTicks)
	if b.duration != initial {
		t.Fatalf("the first failure after a reset backs off %d ticks, want the initial %d", b.duration, initial)
	}
}

// stepPool runs pool p from tick from to tick to with pending cores each
// tick, as Sim.Step orders it (advance, then plan).
func stepPool(p *pool, from, to int, pending func(t int) float64) {
	for t := from; t <= to; t++ {
		p.advance(t)
		p.pendingCores = pending(t)
		p.plan(t)
	}
}

// TestClusterAutoscalerBacksOffAFailedScaleUp pins the cluster autoscaler's
// stall: 10 nodes asked for at tick 1 against a region with 5 spare, none
// freed; the scan at tick 2 scales the group up by 10, 5 launch and 5 find
// no capacity; the scan at tick 3 sees the failed scale-up and backs the
// group off 5 minutes (30 ticks); the region frees capacity meanwhile; the
// scan at tick 33 scales up again and the 5 launch, ready 6 ticks later.
func TestClusterAutoscalerBacksOffAFailedScaleUp(t *testing.T) {
	c := cloudCluster(domains.ProvisionerClusterAutoscaler, 5, 0)
	p := newPool(c, 10, 100)
	pending := func(t int) float64 {
		if t == 1 {
			return 10 * 8
		}
		return 0
	}
	stepPool(&p, 1, 2, pending)
	if p.started != 5 || p.waits.short != 5 {
		t.Fatalf("after the first scale-up %d started, %d short of capacity; want 5, 5", p.started, p.waits.short)
	}
	p.cloud.spare.perTick = 1 // the region frees a node a tick from now on
	stepPool(&p, 3, 32, pending)
	if p.started != 5 || !p.ca.backoff.backedOff(32) || p.ca.backoff.until != 33 {
		t.Fatalf("in the backoff: %d started, backed off %v until %d; want 5, true, 33", p.started, p.ca.backoff.backedOff(32), p.ca.backoff.until)
	}
	stepPool(&p, 33, 33, pending)
	if p.started != 10 {
		t.Fatalf("at the backoff's end %d started, want 10", p.started)
	}
	var m Metrics
	s := &Sim{pool: p, step: 40, dt: 10}
	s.provisionerMetrics(&m)
	// The 5 failed nodes were asked for at tick 1 and are ready at 33 + 6.
	if want := float64(33+6-1) * 10 / 60; m.LongestStallMinutes != want || m.ProvisionerStalls != 1 || m.LaunchFailures != 5 {
		t.Fatalf("metrics %+v; want a longest stall of %v min, 1 stall, 5 launch failures", m, want)
	}
	// A completed scale-up resets the backoff.
	stepPool(&p, 34, 40, pending)
	if p.ca.backoff.found {
		t.Fatal("the backoff outlived a scale-up whose nodes all became ready")
	}
}

// TestKarpenterBatchesPendingPods pins the batching window: a batch opened
// at tick 1 by new pods every tick closes BATCH_MAX_DURATION later (5
// ticks: 50 s), and one whose pods stop coming closes BATCH_IDLE_DURATION
// (2 ticks: 20 s) after the last.
func TestKarpenterBatchesPendingPods(t *testing.T) {
	c := cloudCluster(domains.ProvisionerKarpenter, 0, 0)
	c.BatchIdleDuration, c.BatchMaxDuration = 20*time.Second, 50*time.Second
	p := newPool(c, 10, 100)
	// One more node's worth of pods pending at each of ticks 1..7; none is
	// ready before tick 12, so they all stay pending.
	pending := func(t int) float64 { return float64(min(t, 7)) * 8 }
	stepPool(&p, 1, 5, pending)
	if p.started != 0 {
		t.Fatalf("%d nodes launched while the batch was open", p.started)
	}
	stepPool(&p, 6, 6, pending)
	if p.started != 5 {
		t.Fatalf("at the batch's max duration %d nodes launched, want the 5 asked for at ticks 1-5", p.started)
	}
	// Ticks 6 and 7 open a batch and ask for one each, then nothing: it
	// closes at 9, two ticks after the last request.
	stepPool(&p, 7, 8, pending)
	if p.started != 5 {
		t.Fatalf("%d nodes launched before the batch went idle, want still 5", p.started)
	}
	stepPool(&p, 9, 9, pending)
	if p.started != 7 {
		t.Fatalf("after two idle ticks %d nodes launched, want 7", p.started)
	}
}

// TestKarpenterOfferingUnavailableAfterInsufficientCapacity pins the
// unavailable-offerings cache: 10 nodes asked for at tick 1 against a
// region with 5 spare; at tick 2 the batch launches 5 and 5 fail, which
// marks the offering unavailable for 3 minutes (18 ticks): no launch until
// tick 20, when the region has freed capacity again and the 5 launch.
func TestKarpenterOfferingUnavailableAfterInsufficientCapacity(t *testing.T) {
	c := cloudCluster(domains.ProvisionerKarpenter, 5, 60) // frees 10 a tick
	p := newPool(c, 10, 100)
	pending := func(t int) float64 {
		if t == 1 {
			return 10 * 8
		}
		return 0
	}
	stepPool(&p, 1, 2, pending)
	if p.started != 5 || p.waits.short != 5 || p.kp.unavailableUntil != 20 {
		t.Fatalf("first launch: %d started, %d short, unavailable until %d; want 5, 5, 20", p.started, p.waits.short, p.kp.unavailableUntil)
	}
	stepPool(&p, 3, 19, pending)
	if p.started != 5 || p.waits.failures != 5 {
		t.Fatalf("while unavailable: %d started, %d launch failures; want 5, 5 (no attempt)", p.started, p.waits.failures)
	}
	stepPool(&p, 20, 20, pending)
	if p.started != 10 {
		t.Fatalf("when the offering is available again %d started, want 10", p.started)
	}
	var m Metrics
	s := &Sim{pool: p, step: 30, dt: 10}
	s.provisionerMetrics(&m)
	// Asked for at tick 1, ready at 20 + 6: 25 ticks.
	if want := 25.0 * 10 / 60; m.LongestStallMinutes != want || m.NodeWaitMaxSeconds != 250 || m.ProvisionerStalls != 1 || m.MaxNodeQueue != 10 {
		t.Fatalf("metrics %+v; want a longest stall of %v min, max wait 250 s, 1 stall, a queue of 10", m, want)
	}
	// Half the nodes waited 7 ticks (launched at 2, ready at 8), half 25: the p95 is 25 ticks.
	if m.NodeWaitP95Seconds != 250 {
		t.Fatalf("node wait p95 %v s, want 250", m.NodeWaitP95Seconds)
	}
}

// TestProvisionerStartsIsTheSustainedCloudRate pins the planner's view of
// the cloud provisioners: the slower of the instance bucket's and the spare
// capacity's refill, without their bursts, so that a plan within it never
// fails a launch.
func TestProvisionerStartsIsTheSustainedCloudRate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		spare       int
		sparePerMin float64
		perTick     int
	}{
		{name: "unlimited spare capacity: the instance bucket's 2 a second", spare: 0, perTick: 20},
		{name: "spare capacity freed slower than the bucket", spare: 600, sparePerMin: 60, perTick: 10},
		{name: "spare capacity freed faster than the bucket", spare: 600, sparePerMin: 600, perTick: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sim{pool: newPool(cloudCluster(domains.ProvisionerKarpenter, tc.spare, tc.sparePerMin), 10, 10)}
			starts := make([]int, 5)
			s.ProvisionerStarts(starts)
			for m, got := range starts {
				if got != m*tc.perTick {
					t.Fatalf("starts %v, want %d a tick", starts, tc.perTick)
				}
			}
		})
	}
}

// A burst of node requests is what the pool asks for within two minutes:
// requests 13 ticks apart at a 10 s tick never share a window, requests 11
// apart do.
func TestNodeRequestBurstIsTheMostWithinTwoMinutes(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   map[int]int32 // tick: nodes requested
		want int32
	}{
		{name: "one tick", at: map[int]int32{5: 40}, want: 40},
		{name: "11 ticks apart share a window", at: map[int]int32{5: 40, 16: 30}, want: 70},
		{name: "12 ticks apart do not", at: map[int]int32{5: 40, 17: 30}, want: 40},
		{name: "the largest window wins", at: map[int]int32{1: 10, 2: 10, 30: 15, 31: 15, 40: 1}, want: 31},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := waits{burst: make([]int32, burstWindowSeconds/10)}
			for tick := 1; tick <= 60; tick++ {
				w.request(tick, tc.at[tick])
			}
			if w.maxBurst != tc.want {
				t.Errorf("largest burst %d, want %d", w.maxBurst, tc.want)
			}
		})
	}
}
