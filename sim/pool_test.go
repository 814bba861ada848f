package sim

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/domains"
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
			p := newPool(c, 10)
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
