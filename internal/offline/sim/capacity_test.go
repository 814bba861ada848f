package sim

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// withTarget runs a policy and sets the capacity target before every step.
type withTarget struct {
	s      *Sim
	p      Policy
	target func(tick int) float64
}

func (w withTarget) Decide(now time.Time, tel *Telemetry, targets []int32) {
	w.p.Decide(now, tel, targets)
	if err := w.s.SetCapacityTarget(w.target(w.s.StepsDone())); err != nil {
		panic(err)
	}
}

func TestCapacityTarget(t *testing.T) {
	t.Run("a capacity target provisions nodes ahead of pending pods", func(t *testing.T) {
		cfg, sc, tr := world(4000, 100, true) // nodes of 8 cores, ready 2 minutes after they start
		cfg.Cluster.ProvisionerRate = 600     // 100 starts per tick: no queue
		s := mustNew(t, cfg, sc, tr)
		nodes := s.pool.nodes
		if err := s.SetCapacityTarget(float64(nodes+10) * 8); err != nil {
			t.Fatal(err)
		}
		s.Step()
		if got := s.pool.queued + s.pool.provisioning; got != 10 {
			t.Fatalf("%d nodes requested for a target 10 nodes above the pool, want 10", got)
		}
		for range 13 { // requested at tick 1, started at tick 2, ready 12 ticks later
			s.Step()
		}
		if got := s.pool.nodes - nodes; got != 10 {
			t.Fatalf("%d new nodes ready after the provision time, want 10", got)
		}
		// 80 more one-core replicas land on them at once: none waits.
		s.targets[0] += 80
		s.Step()
		if a := s.Current().Apps[0]; a.Pending != 0 || a.Starting != 80 {
			t.Fatalf("pending %d, starting %d: want the 80 new replicas starting at once", a.Pending, a.Starting)
		}
		if c := s.Current().Cluster; c.CapacityTargetCores != float64(nodes+10)*8 {
			t.Fatalf("telemetry's capacity target %.0f cores, want %.0f", c.CapacityTargetCores, float64(nodes+10)*8)
		}
	})
	t.Run("scale-down keeps the capacity target", func(t *testing.T) {
		cfg, sc, tr := world(400, 400, true)
		s := mustNew(t, cfg, sc, tr)
		s.targets[0] = 40
		for range 20 {
			s.Step()
		}
		held := s.pool.nodes
		if err := s.SetCapacityTarget(float64(held)*8 - 3); err != nil { // a part node is the whole node
			t.Fatal(err)
		}
		s.targets[0] = 1
		for range 6 * 15 { // idle timeout 10 minutes
			s.Step()
		}
		if s.pool.nodes != held || s.pool.removed != 0 {
			t.Fatalf("%d nodes (%d removed) after 15 idle minutes under a target of %d nodes", s.pool.nodes, s.pool.removed, held)
		}
		// Lowered, the target lets the idle nodes go after the idle timeout.
		if err := s.SetCapacityTarget(16); err != nil {
			t.Fatal(err)
		}
		for range 6 * 9 {
			s.Step()
		}
		if s.pool.nodes != held {
			t.Fatalf("%d nodes 9 minutes after the target fell, want %d: the idle timeout runs from then", s.pool.nodes, held)
		}
		for range 6 * 2 {
			s.Step()
		}
		used := int32(math.Ceil(s.pool.scheduled / 8))
		if want := max(used, 2); s.pool.nodes != want {
			t.Fatalf("%d nodes 11 minutes after the target fell to 2 nodes, %d in use: want %d", s.pool.nodes, used, want)
		}
	})
	t.Run("a zero target changes nothing", func(t *testing.T) {
		cfg, sc, tr := world(400, 400, false) // a step up: nodes come and go
		plain := mustNew(t, cfg, sc, tr)
		want, _ := json.Marshal(plain.Run(hpaLike{plain}))
		s := mustNew(t, cfg, sc, tr)
		got, _ := json.Marshal(s.Run(withTarget{s: s, p: hpaLike{s}, target: func(int) float64 { return 0 }}))
		if string(got) != string(want) {
			t.Fatalf("metrics with a zero target:\n%s\nwithout one:\n%s", got, want)
		}
	})
	t.Run("the target goes through the provisioner's rate limit", func(t *testing.T) {
		cfg, sc, tr := world(4000, 100, true)
		cfg.Cluster.ProvisionerRate = 6 // one start per 10 s tick
		s := mustNew(t, cfg, sc, tr)
		nodes := s.pool.nodes
		if err := s.SetCapacityTarget(float64(nodes+20) * 8); err != nil {
			t.Fatal(err)
		}
		s.Step() // queued
		for k := range 20 {
			before := s.pool.started
			s.Step()
			if got := s.pool.started - before; got != 1 {
				t.Fatalf("tick %d: %d starts, want 1 (the rate)", k+2, got)
			}
		}
		if s.pool.queued != 0 {
			t.Fatalf("%d nodes still queued after 20 starts", s.pool.queued)
		}
		// The first started at tick 2, ready 12 ticks later: 21 ticks in,
		// nodes started at ticks 2..9 are ready.
		if got := s.pool.nodes - nodes; got != 8 {
			t.Fatalf("%d new nodes ready at tick 21, want 8", got)
		}
	})
	t.Run("the target is clamped to the pool and bad values are refused", func(t *testing.T) {
		cfg, sc, tr := world(400, 100, true) // 50 nodes of 8 cores
		s := mustNew(t, cfg, sc, tr)
		if err := s.SetCapacityTarget(1e9); err != nil {
			t.Fatal(err)
		}
		if got := s.CapacityTarget(); got != 400 {
			t.Fatalf("capacity target %.0f cores, want the pool's 400", got)
		}
		for _, bad := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)} {
			if err := s.SetCapacityTarget(bad); err == nil {
				t.Errorf("SetCapacityTarget(%v) accepted", bad)
			}
		}
		if got := s.CapacityTarget(); got != 400 {
			t.Fatalf("capacity target %.0f cores after refused values, want 400 unchanged", got)
		}
		s.Step()
		if got := s.pool.nodes + s.pool.provisioning + s.pool.queued; got != 50 {
			t.Fatalf("%d nodes in the pool under the clamped target, want 50", got)
		}
	})
}

func TestStepWithCapacityTargetDoesNotAllocate(t *testing.T) {
	cfg, sc, tr := world(4000, 400, false)
	s := mustNew(t, cfg, sc, tr)
	k := 0.0
	allocs := testing.AllocsPerRun(100, func() {
		k++
		if err := s.SetCapacityTarget(100 + 50*math.Sin(k/10)); err != nil {
			t.Fatal(err)
		}
		s.Step()
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per SetCapacityTarget and Step, want 0", allocs)
	}
}

// TestProvisionerStartsIsThePool pins ProvisionerStarts to the pool's own
// starts under a queue that never empties.
func TestProvisionerStartsIsThePool(t *testing.T) {
	cases := []struct {
		name  string
		rate  float64 // per minute, at 10 s ticks
		burst int
		want  int // starts in 6 ticks
	}{
		{name: "a bucket of one tick's refill starts whole nodes per tick", rate: 20, want: 18},
		{name: "a larger bucket carries the fraction", rate: 20, burst: 10, want: 20},
		{name: "a slow provisioner starts every other tick", rate: 3, want: 3},
		{name: "a burst starts no sooner from an empty bucket", rate: 6, burst: 10, want: 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, sc, tr := world(8000, 100, true)
			cfg.Cluster.ProvisionerRate, cfg.Cluster.ProvisionerBurst = tc.rate, tc.burst
			s := mustNew(t, cfg, sc, tr)
			got := make([]int, 61)
			s.ProvisionerStarts(got)
			p := newPool(&cfg.Cluster, 10, 0)
			p.queued = 1 << 20
			for m := range got {
				if int(p.started) != got[m] {
					t.Fatalf("after %d ticks: ProvisionerStarts %d, the pool started %d", m, got[m], p.started)
				}
				p.advance(m + 1)
			}
			if got[6] != tc.want {
				t.Fatalf("%d starts in 6 ticks, want %d", got[6], tc.want)
			}
		})
	}
}
