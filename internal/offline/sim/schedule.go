package sim

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
)

// terminationGrace is how long a preempted pod takes to go: the pod spec's
// terminationGracePeriodSeconds default, 30 s (k8s.io/api core/v1
// DefaultTerminationGracePeriodSeconds). The scheduler honours it: the
// victim stops serving at once (it leaves its Service's endpoints) but its
// cores stay taken until the period ends, and the preemptor waits for them,
// nominated to them (pod.status.nominatedNodeName).
const terminationGrace = 30 * time.Second

// scheduler is kube-scheduler's queue of pending pods and its
// DefaultPreemption plugin, over the pool's free cores.
//
// The queue holds the pending replicas in the order they were created, as
// batches of one app's replicas: kube-scheduler's activeQ pops pods by
// priority, then by the time they were queued, so without PriorityClasses
// (every pod at priority 0) pods are scheduled in arrival order, and with
// them by tier, then arrival. A replica the scheduler cannot place does not
// block the ones behind it (it waits in the unschedulable queue): a smaller
// replica later in the queue may take a fragment a larger one could not.
//
// A replica set's controller deletes its pending pods first, newest first
// (controller.ActivePods orders unscheduled before scheduled, then newer
// before older): the queue drops them lazily, each schedule keeping the
// oldest app.pending of an app's queued replicas.
type scheduler struct {
	priorityClasses bool
	// packing is the share of a node's cores pods can use, 1 -
	// Cluster.PackingLoss: a replica takes app.foot = cpu / packing node
	// cores, in every sum of the pool (scheduled, pendingCores).
	packing float64

	queue []podBatch // pending replicas, oldest first
	// created[id] is app id's replicas created this tick (applyTargets),
	// queued in the order of arrival[(k + step x arrivalStride) % apps], k
	// = 0, 1, ...: a random permutation of the apps drawn once from the
	// scenario's seed, rotated each tick. Within a tick the replica sets'
	// pods reach the scheduler in no order of domain or tier (each HPA syncs
	// on its own, each controller creates its pods when it gets to them).
	created []int32
	arrival []int32
	live    []int32 // per app: its replicas still to keep in this schedule's walk
	stamp   []int32 // per app: the tick live was set at

	tiers          []int     // the domains' distinct priorities, most important (lowest) first
	tierLo, tierHi []int32   // per tier: its apps' range in Sim.byPri
	cursor         []int32   // per tier: the next victim app in its range (preempt)
	carry          []float64 // per tier: victims owed by the rounding of preempt's shares, < 1 after each app
	placed         []int32   // per tier: replicas placed this tick
	running        []float64 // per tier: node cores of ready and starting replicas, while preempting

	// freeing[t % len] is the node cores of preempted replicas whose grace
	// period ends at tick t; terminating is their sum.
	freeing     []float64
	terminating float64
}

// podBatch is n pending replicas of app id app, created at the same tick.
type podBatch struct{ app, n int32 }

func (q *scheduler) init(s *Sim, c *domains.Cluster) {
	q.priorityClasses = c.PriorityClasses
	q.packing = 1 - c.PackingLoss
	// Room for every app to queue 16 batches before append grows it (once
	// per doubling): the seed-scale postmortem and double P0 spike under
	// hpa-priority, whose preemptions queue a batch per victim app, peak at
	// about 10 per app.
	q.queue = make([]podBatch, 0, 16*len(s.apps)+64)
	q.created = make([]int32, len(s.apps))
	q.arrival = make([]int32, len(s.apps))
	for i := range q.arrival {
		q.arrival[i] = int32(i)
	}
	// Its own stream: the simulator's draws stay as they were.
	rand.New(rand.NewPCG(s.sc.Seed, 0x61727269766c)).Shuffle(len(q.arrival), func(i, j int) {
		q.arrival[i], q.arrival[j] = q.arrival[j], q.arrival[i]
	})
	q.live = make([]int32, len(s.apps))
	q.stamp = make([]int32, len(s.apps))
	for i := range q.stamp {
		q.stamp[i] = -1
	}
	for k, id := range s.byPri {
		prio := s.doms[s.apps[id].domain].prio
		if len(q.tiers) == 0 || q.tiers[len(q.tiers)-1] != prio {
			q.tiers = append(q.tiers, prio)
			q.tierLo = append(q.tierLo, int32(k))
			q.tierHi = append(q.tierHi, int32(k))
		}
		q.tierHi[len(q.tierHi)-1] = int32(k + 1)
		s.apps[id].tier = int32(len(q.tiers) - 1)
	}
	n := len(q.tiers)
	q.cursor, q.placed, q.running, q.carry = make([]int32, n), make([]int32, n), make([]float64, n), make([]float64, n)
	grace := int(math.Ceil(terminationGrace.Seconds() / s.dt))
	q.freeing = make([]float64, max(1, grace)+1)
}

// enqueue queues n new pending replicas of app id, behind every pod
// queued before.
func (s *Sim) enqueue(id int32, n int32) {
	q := &s.sched.queue
	if k := len(*q) - 1; k >= 0 && (*q)[k].app == id {
		(*q)[k].n += n
		return
	}
	*q = append(*q, podBatch{app: id, n: n})
}

// arrivalStride rotates the apps' arrival permutation each tick: a prime,
// so that over ticks every app comes first as often.
const arrivalStride = 7919

// queueCreated queues the replicas applyTargets created this tick.
func (s *Sim) queueCreated() {
	q := &s.sched
	n := len(q.arrival)
	off := int((int64(s.step) * arrivalStride) % int64(n))
	for k := range n {
		id := q.arrival[(k+off)%n]
		if c := q.created[id]; c != 0 {
			s.enqueue(id, c)
			q.created[id] = 0
		}
	}
}

// schedule places pending replicas on free node cores: in arrival order
// without PriorityClasses; by tier, then arrival, with them, preempting
// lower tiers for a replica that does not fit (schedulePriority). A replica
// placed while one of a more important tier is left pending at the end of
// the tick is a priority inversion (accum.inversions; accum.p3WhileP0 for a
// priority-3-or-below replica while a priority-0 one waits), in either mode.
func (s *Sim) schedule() {
	q := &s.sched
	p := &s.pool
	// Preempted replicas whose grace period ends now free their cores.
	if k := s.step % len(q.freeing); q.freeing[k] != 0 {
		p.scheduled -= q.freeing[k]
		q.terminating -= q.freeing[k]
		q.freeing[k] = 0
	}
	if len(q.queue) == 0 {
		p.pendingCores = 0
		return
	}
	// Keep each app's oldest app.pending queued replicas: its controller
	// deleted the newest.
	step := int32(s.step)
	for k := range q.queue {
		b := &q.queue[k]
		if q.stamp[b.app] != step {
			q.stamp[b.app], q.live[b.app] = step, s.apps[b.app].pending
		}
		b.n = min(b.n, q.live[b.app])
		q.live[b.app] -= b.n
	}
	clear(q.placed)
	free := float64(p.nodes)*p.nodeCores - p.scheduled
	if q.priorityClasses {
		s.schedulePriority(free)
	} else {
		for k := range q.queue {
			free = s.place(&q.queue[k], free)
		}
	}

	// Drop the emptied batches; sum what is left.
	w, pendingCores, waiting := 0, 0.0, len(q.tiers)
	for _, b := range q.queue {
		if b.n == 0 {
			continue
		}
		q.queue[w] = b
		w++
		a := &s.apps[b.app]
		pendingCores += float64(b.n) * a.foot
		waiting = min(waiting, int(a.tier))
	}
	q.queue = q.queue[:w]
	p.pendingCores = pendingCores
	for t := waiting + 1; t < len(q.tiers) && s.metric.counted(s.step); t++ {
		s.metric.inversions += int(q.placed[t])
		if q.tiers[waiting] == 0 && q.tiers[t] >= 3 {
			s.metric.p3WhileP0 += int(q.placed[t])
		}
	}
}

// place schedules as many of batch b's replicas as free node cores hold and
// returns the cores left.
func (s *Sim) place(b *podBatch, free float64) float64 {
	if b.n == 0 {
		return free
	}
	a := &s.apps[b.app]
	fit := min(b.n, int32((free+1e-9)/a.foot))
	if fit == 0 {
		return free
	}
	b.n -= fit
	a.pending -= fit
	a.starting += fit
	s.startRing[int(b.app)*s.ringLen+(s.step+int(a.startupTicks))%s.ringLen] += fit
	used := float64(fit) * a.foot
	s.pool.scheduled += used
	s.sched.placed[a.tier] += fit
	return free - used
}

// schedulePriority is schedule with PriorityClasses: the queue tier by tier,
// each in arrival order, and kube-scheduler's DefaultPreemption for the
// replicas that do not fit (its PostFilter: reactive, after the pod failed
// to schedule, and scoped to that pod).
//
// Replicas that fail first take the cores of victims still terminating:
// they were nominated to them, and a pod whose victims are terminating
// preempts no more (PodEligibleToPreemptOthers). Each other failed
// replica preempts if removing every pod of a lower priority would make it
// fit (SelectVictimsOnNode), and then only enough of them, lowest priority
// first (the candidate whose most important victim is least important,
// pickOneNodeForPreemption) and, within a tier, spread over its apps in
// proportion to their running replicas (preempt), each app's youngest (a
// starting one before a ready one: victims are reprieved oldest first),
// nothing of domains. The replicas of its own tier or above are never
// victims. The victims leave their Service at once, their replicas are
// recreated pending at the back of the queue, and their cores are free
// terminationGrace later, for the nominated preemptors; until then the free
// cores the preemptors were counting on are theirs.
func (s *Sim) schedulePriority(free float64) {
	q := &s.sched
	claim := q.terminating // cores the nominated preemptors wait for
	counted := false
	for t := range q.tiers {
		for k := 0; k < len(q.queue); k++ { // evictions append: index, do not range
			b := &q.queue[k]
			if b.n == 0 || s.apps[b.app].tier != int32(t) {
				continue
			}
			free = s.place(b, free)
			if b.n == 0 {
				continue
			}
			a := &s.apps[b.app]
			failed := b.n
			if claim >= a.foot { // nominated: they wait for their victims
				waits := min(failed, int32((claim+1e-9)/a.foot))
				claim -= float64(waits) * a.foot
				failed -= waits
			}
			if failed == 0 || t == len(q.tiers)-1 {
				continue
			}
			if !counted {
				s.countRunning()
				counted = true
			}
			victims := 0.0
			for vt := t + 1; vt < len(q.tiers); vt++ {
				victims += q.running[vt]
			}
			n := min(failed, int32((free+claim+victims+1e-9)/a.foot))
			if n == 0 {
				continue
			}
			need := float64(n)*a.foot - free - claim
			freed := s.preempt(t, need)
			claim = max(0, free+claim+freed-float64(n)*a.foot)
			free = 0
		}
	}
}

// countRunning sets each tier's node cores of ready and starting replicas.
func (s *Sim) countRunning() {
	q := &s.sched
	for t := range q.tiers {
		sum := 0.0
		for _, id := range s.byPri[q.tierLo[t]:q.tierHi[t]] {
			a := &s.apps[id]
			sum += float64(a.ready+a.starting) * a.foot
		}
		q.running[t] = sum
	}
}

// preempt evicts replicas of tiers below t, lowest first, until at least
// need node cores are terminating for tier t's replicas, and returns the
// cores evicted. Within a tier the victims are spread over its apps in
// proportion to their running replicas: the pods of the nodes
// kube-scheduler picks, which the default spreading (LeastAllocated
// scoring, default topology spread) fills with a sample of every app's
// pods. A carry per tier rounds the shares, so over successive
// preemptions each app gives in proportion; apps in turn from where the
// last preemption stopped top up what rounding left short.
func (s *Sim) preempt(t int, need float64) float64 {
	q := &s.sched
	freed := 0.0
	for vt := len(q.tiers) - 1; vt > t && freed < need-1e-9; vt-- {
		if q.running[vt] <= 1e-9 {
			continue
		}
		ids := s.byPri[q.tierLo[vt]:q.tierHi[vt]]
		n := int32(len(ids))
		share := min(1, (need-freed)/q.running[vt])
		j := int32(0)
		for ; j < n && freed < need-1e-9; j++ {
			id := ids[(q.cursor[vt]+j)%n]
			a := &s.apps[id]
			running := a.ready + a.starting
			if running == 0 {
				continue
			}
			q.carry[vt] += share * float64(running)
			take := min(running, int32(q.carry[vt]))
			q.carry[vt] -= float64(take)
			for ; take > 0 && freed < need-1e-9; take-- {
				s.evict(id)
				freed += a.foot
			}
		}
		q.cursor[vt] = (q.cursor[vt] + j) % n
		for idle := int32(0); freed < need-1e-9 && idle < n; {
			id := ids[q.cursor[vt]]
			q.cursor[vt] = (q.cursor[vt] + 1) % n
			a := &s.apps[id]
			if a.ready+a.starting == 0 {
				idle++
				continue
			}
			idle = 0
			s.evict(id)
			freed += a.foot
		}
	}
	return freed
}

// evict preempts one replica of app id, its youngest: it stops serving, its
// cores stay taken for terminationGrace, and its controller recreates it
// pending.
func (s *Sim) evict(id int32) {
	q := &s.sched
	a := &s.apps[id]
	if a.starting > 0 {
		s.cancelStarting(int(id), 1)
		s.pool.scheduled += a.foot // cancelStarting freed them; they are terminating
	} else {
		a.ready--
	}
	a.pending++
	s.enqueue(id, 1)
	q.freeing[(s.step+len(q.freeing)-1)%len(q.freeing)] += a.foot
	q.terminating += a.foot
	q.running[a.tier] -= a.foot
	if s.metric.counted(s.step) {
		s.metric.preempted[a.domain]++
	}
}

// PriorityClasses says whether the simulated pods carry PriorityClasses by
// tier (Cluster.PriorityClasses): scheduling by tier, with preemption.
func (s *Sim) PriorityClasses() bool { return s.sched.priorityClasses }
