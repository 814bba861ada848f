package sim

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// TestProvisionerBurst pins the provisioner's token bucket: refilled at
// provisioner_rate per minute, holding at most provisioner_burst starts.
func TestProvisionerBurst(t *testing.T) {
	cases := []struct {
		name  string
		rate  float64 // per minute
		burst int
		// starts per tick over the first ticks after a quiet spell, with
		// 100 nodes queued
		want []int32
	}{
		{name: "the default burst is one tick's refill", rate: 6, burst: 0, want: []int32{1, 1, 1, 1}},
		{name: "the default burst starts at least one node", rate: 3, burst: 0, want: []int32{1, 0, 1, 0}},
		{name: "a burst starts that many queued nodes at once, then the rate", rate: 6, burst: 10, want: []int32{10, 1, 1, 1}},
		{name: "a burst below one tick's refill keeps the rate", rate: 60, burst: 4, want: []int32{10, 10, 10}},
		{name: "a burst of 1 is the default", rate: 3, burst: 1, want: []int32{1, 0, 1, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &domains.Cluster{CapacityCores: 8000, NodeCores: 8, NodeProvisionTime: time.Hour,
				ProvisionerRate: tc.rate, ProvisionerBurst: tc.burst, NodeIdleTimeout: time.Minute}
			p := newPool(c, 10, 0)
			tick := 0
			for range 60 { // a quiet spell: the bucket fills
				tick++
				p.advance(tick)
			}
			p.queued = 100
			for k, want := range tc.want {
				before := p.provisioning
				tick++
				p.advance(tick)
				if got := p.provisioning - before; got != want {
					t.Fatalf("tick %d after the requests: %d starts, want %d (all: %v)", k+1, got, want, tc.want)
				}
			}
		})
	}
}

// TestIdleNodesLeaveAfterTheirOwnTimeout pins scale-down: a node leaves once it
// has been free for node_idle_timeout, and only then, as the cluster
// autoscaler's scale-down-unneeded-time. Nodes freed late in another node's
// window wait for their own.
func TestIdleNodesLeaveAfterTheirOwnTimeout(t *testing.T) {
	c := &domains.Cluster{CapacityCores: 8000, NodeCores: 8, NodeProvisionTime: time.Minute,
		ProvisionerRate: 60, NodeIdleTimeout: time.Minute} // 6 ticks of 10 s
	p := newPool(c, 10, 0)
	p.nodes = 100
	tick := 0
	// plan runs the pool for n ticks with scheduled cores and pending cores,
	// and returns the nodes removed.
	plan := func(n int, scheduled, pending float64) int {
		before := p.removed
		for range n {
			tick++
			p.scheduled, p.pendingCores = scheduled, pending
			p.advance(tick)
			p.plan(tick)
		}
		return p.removed - before
	}
	if got := plan(10, 100*8, 0); got != 0 {
		t.Fatalf("a full pool lost %d nodes", got)
	}
	// One node free for 5 ticks, then 50 more for a tick: none has been
	// free for 6 ticks yet.
	if got := plan(5, 99*8, 0); got != 0 {
		t.Fatalf("a node free for 5 of 6 ticks was removed (%d)", got)
	}
	if got := plan(1, 49*8, 0); got != 1 {
		t.Fatalf("at the first node's sixth free tick %d nodes were removed, want only it (1)", got)
	}
	// The 50 freed a tick ago go at their own sixth free tick.
	if got := plan(4, 49*8, 0); got != 0 {
		t.Fatalf("nodes free for 5 ticks were removed (%d)", got)
	}
	if got := plan(1, 49*8, 0); got != 50 {
		t.Fatalf("at their sixth free tick %d nodes were removed, want the 50", got)
	}
	if p.nodes != 49 {
		t.Fatalf("%d nodes left, want 49", p.nodes)
	}
	// A capacity target holds the nodes it covers.
	p.setTarget(45 * 8)
	if got := plan(6, 40*8, 0); got != 4 || p.nodes != 45 {
		t.Fatalf("above a 45-node target with 40 nodes busy, %d nodes removed (%d left), want 4", got, p.nodes)
	}
	p.setTarget(0)
	// Pending replicas hold the free nodes: they would take them.
	if got := plan(10, 40*8, 1); got != 0 {
		t.Fatalf("%d nodes removed while replicas were pending", got)
	}
}
