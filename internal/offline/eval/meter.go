package eval

import (
	"math"
	"slices"
	"time"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/reward"
	"github.com/regimentd/regiment/internal/offline/sim"
)

// meter accounts one run tick by tick from the simulator's newest telemetry:
// cascades, overprovisioning, the Commander reward and, for sampled runs, the
// per-minute series. Every buffer is sized by newMeter; observe does not
// allocate.
type meter struct {
	cfg   *domains.Config
	tiers []tierInfo
	tier  []int // domain -> index in tiers

	// per app
	appDomain []int
	cpu       []float64 // cores per replica
	perReady  []float64 // requests/s one replica serves at the target utilisation
	minRep    []float64
	maxRep    []float64

	cascades []int // per domain

	// overprovisioning: per tier and overall (last entry) sums of the
	// per-tick percentage and the ticks that counted
	overSum   []float64
	overTicks []int
	sched     []float64 // scratch per tier (+ overall): scheduled cores this tick
	need      []float64 // scratch per tier (+ overall): needed cores this tick

	outcomes []reward.DomainOutcome
	weights  reward.CommanderWeights
	refCost  float64 // cost per hour of the whole pool
	refPower float64 // watts of the whole pool at full load (domains.Cluster's power model)
	busy     float64 // this tick's busy cores (overprovision)
	rewards  RewardTerms
	ticks    int

	// per-minute sampling (nil series: not sampled)
	series      *Series
	tick        time.Duration
	perMinute   []int // ticks in each minute
	sampleTicks int
}

// tierInfo is one priority tier: its priority and domain indexes.
type tierInfo struct {
	priority int
	domains  []int
}

func tiersOf(cfg *domains.Config) ([]tierInfo, []int) {
	var prios []int
	for _, d := range cfg.Domains {
		if !slices.Contains(prios, d.Priority) {
			prios = append(prios, d.Priority)
		}
	}
	slices.Sort(prios)
	tiers := make([]tierInfo, len(prios))
	tierOf := make([]int, len(cfg.Domains))
	for i, p := range prios {
		tiers[i].priority = p
	}
	for di, d := range cfg.Domains {
		ti := slices.Index(prios, d.Priority)
		tierOf[di] = ti
		tiers[ti].domains = append(tiers[ti].domains, di)
	}
	return tiers, tierOf
}

func newMeter(cfg *domains.Config, s *sim.Sim, sample bool) *meter {
	apps := cfg.Apps()
	m := &meter{cfg: cfg, weights: reward.DefaultCommanderWeights(), tick: s.Tick()}
	m.tiers, m.tier = tiersOf(cfg)
	nt := len(m.tiers) + 1
	m.overSum, m.overTicks = make([]float64, nt), make([]int, nt)
	m.sched, m.need = make([]float64, nt), make([]float64, nt)
	m.cascades = make([]int, len(cfg.Domains))
	m.appDomain = make([]int, len(apps))
	m.cpu = make([]float64, len(apps))
	m.perReady = make([]float64, len(apps))
	m.minRep, m.maxRep = make([]float64, len(apps)), make([]float64, len(apps))
	for i, a := range apps {
		m.appDomain[i] = a.Domain
		m.cpu[i] = a.CPUPerReplica
		m.perReady[i] = s.Capacity(i) * cfg.Soldier.TargetUtilisation
		m.minRep[i], m.maxRep[i] = float64(a.MinReplicas), float64(a.MaxReplicas)
	}
	m.outcomes = make([]reward.DomainOutcome, len(cfg.Domains))
	for di, d := range cfg.Domains {
		m.outcomes[di] = reward.DomainOutcome{SLO: d.SLO.LatencyP99Seconds(), ErrorBudget: d.SLO.ErrorBudget, Weight: d.Weight}
	}
	m.refCost = cfg.Cluster.CapacityCores * cfg.Cluster.CostPerCoreHour
	cl := &cfg.Cluster
	m.refPower = cl.CapacityCores/cl.NodeCores*cl.NodeIdleWatts + cl.CapacityCores*cl.BusyCoreWatts
	if sample {
		minutes := int((time.Duration(s.Steps())*s.Tick() + time.Minute - 1) / time.Minute)
		m.series = newSeries(cfg, minutes)
		m.perMinute = make([]int, minutes)
	}
	return m
}

// observe accounts the tick s just stepped.
// The series samples every tick; the metrics skip the scenario's warm-up
// (sim.Sim.Accounted).
func (m *meter) observe(s *sim.Sim) {
	cur := s.Current()
	if m.series != nil {
		m.sample(cur)
	}
	if !s.Accounted() {
		return
	}
	m.ticks++
	s.AddCascades(m.cascades)
	m.overprovision(cur)
	m.reward(cur)
}

// overprovision adds this tick's percentage per tier and overall:
//
//	needed_i = cpu_i x clamp(ceil(rps_i / perReady_i), min_i, max_i)
//	pct      = 100 x (sum scheduled - sum needed) / sum needed
func (m *meter) overprovision(cur *sim.Telemetry) {
	clear(m.sched)
	clear(m.need)
	m.busy = 0
	all := len(m.tiers)
	for i := range cur.Apps {
		a := &cur.Apps[i]
		m.busy += a.CPUUtil * float64(a.Ready) * m.cpu[i]
		n := math.Min(math.Max(math.Ceil(a.RPS/m.perReady[i]), m.minRep[i]), m.maxRep[i])
		need := n * m.cpu[i]
		sched := float64(a.Ready+a.Starting) * m.cpu[i]
		t := m.tier[m.appDomain[i]]
		m.need[t] += need
		m.sched[t] += sched
		m.need[all] += need
		m.sched[all] += sched
	}
	for t := range m.need {
		if m.need[t] > 0 {
			m.overSum[t] += 100 * (m.sched[t] - m.need[t]) / m.need[t]
			m.overTicks[t]++
		}
	}
}

// reward adds this tick's Commander reward (see the package doc).
func (m *meter) reward(cur *sim.Telemetry) {
	capacity := m.cfg.Cluster.CapacityCores
	for di := range m.outcomes {
		d := &cur.Domains[di]
		o := &m.outcomes[di]
		o.P99, o.ErrorRate, o.Share = cur.DomainP99(di), d.ErrorRate, d.CoresUsed/capacity
		o.CeilingBound = cur.CeilingBound(di)
	}
	b := reward.Commander(reward.CommanderInput{
		Domains:       m.outcomes,
		Cost:          cur.Cluster.CostPerHour,
		ReferenceCost: m.refCost,
		Nodes:         int(cur.Cluster.Nodes),
		// Provisioned nodes at idle plus busy cores (domains.Cluster).
		PowerWatts:          float64(cur.Cluster.Nodes+cur.Cluster.ProvisioningNodes)*m.cfg.Cluster.NodeIdleWatts + m.busy*m.cfg.Cluster.BusyCoreWatts,
		ReferencePowerWatts: m.refPower,
	}, m.weights)
	m.rewards.Total += b.Total
	m.rewards.Adherence += b.Adherence
	m.rewards.Degradation += b.Degradation
	m.rewards.Cost += b.Cost
	m.rewards.Energy += b.Energy
}

// sample adds this tick to its minute of the series.
func (m *meter) sample(cur *sim.Telemetry) {
	k := int(time.Duration(m.sampleTicks) * m.tick / time.Minute)
	m.sampleTicks++
	m.perMinute[k]++
	c, cs := &cur.Cluster, &m.series.Cluster
	cs.Nodes[k] += float64(c.Nodes)
	cs.Provisioning[k] += float64(c.ProvisioningNodes)
	cs.Queued[k] += float64(c.QueuedNodes)
	cs.PendingPods[k] += float64(c.PendingPods)
	for di := range m.series.Domains {
		d := &cur.Domains[di]
		ds := &m.series.Domains[di]
		ds.RPS[k] += d.RPS
		ds.Replicas[k] += float64(d.Ready + d.Starting + d.Pending)
		ds.Ready[k] += float64(d.Ready)
		ds.BreachedApps[k] += float64(d.BreachedApps)
		ds.Pending[k] += float64(d.Pending)
	}
}

// result is the outcome of the run s has finished, from the simulator's
// metrics and the meter's tallies. Scenario, policy, seeds and wall time are the caller's to set.
func (m *meter) result(s *sim.Sim) RunResult {
	sm := s.Metrics()
	r := RunResult{SimSeconds: sm.SimSeconds}
	cascades := 0
	for _, c := range m.cascades {
		cascades += c
	}
	r.Outcome = Outcome{
		CostCoreHours:         sm.CostCoreHours,
		Cost:                  sm.Cost,
		SLOCompliance:         sm.SLOCompliance,
		BreachAppMinutes:      sm.BreachAppMinutes,
		BreachAppMinutesAtMax: sm.BreachAppMinutesAtMax,
		ScalingActions:        sm.ScalingActions,
		CascadeEvents:         cascades,
		OverprovisionPct:      m.overMean(len(m.tiers)),
		PeakNodes:             int(sm.PeakNodes),
		PendingPodHours:       sm.PendingPodHours,

		NodeProvisions:      sm.NodeProvisions,
		NodeRemovals:        sm.NodeRemovals,
		ProvisionerStalls:   sm.ProvisionerStalls,
		LongestStallMinutes: sm.LongestStallMinutes,
		MaxNodeRequests2m:   int(sm.MaxNodeRequests2m),
		LaunchFailures:      sm.LaunchFailures,
		NodeChurn:           sm.NodeChurn,
		NodeChurnPerHour:    sm.NodeChurnPerHour,
		ScaleOut:            sm.ScaleOut,
		ScaleOutAll:         sm.ScaleOutAll,
		MaxScaleUps30s:      sm.MaxScaleUps30s,
		PriorityInversions:  sm.PriorityInversions,
		P3WhileP0Waits:      sm.P3WhileP0Waits,
		Preemptions:         sm.Preemptions,
		AvgCPUUtilisation:   sm.AvgCPUUtilisation,
		PeakPods:            int(sm.PeakPods),
		FloorCoreHours:      sm.FloorCoreHours,
		Requests:            sm.Requests,
		BadRequests:         sm.BadRequests,
		BadRequestRatio:     sm.BadRequestRatio,
		EnergyKWh:           sm.EnergyKWh,
	}
	if m.ticks > 0 {
		n := float64(m.ticks)
		r.RewardMean = m.rewards.Total / n
		r.Reward = RewardTerms{Total: r.RewardMean, Adherence: m.rewards.Adherence / n,
			Degradation: m.rewards.Degradation / n, Cost: m.rewards.Cost / n, Energy: m.rewards.Energy / n}
	}
	for ti, t := range m.tiers {
		tr := TierOutcome{Tier: t.priority, SLOCompliance: 1, OverprovisionPct: m.overMean(ti)}
		var with, breached float64
		for _, di := range t.domains {
			dm := sm.Domains[di]
			tr.Domains = append(tr.Domains, dm.Name)
			tr.CoreHours += dm.CoreHours
			tr.BreachAppMinutes += dm.BreachAppMinutes
			tr.BreachAppMinutesAtMax += dm.BreachAppMinutesAtMax
			tr.ScalingActions += dm.ScalingActions
			tr.CascadeEvents += m.cascades[di]
			tr.PendingPodHours += dm.PendingPodHours
			tr.FloorCoreHours += dm.FloorCoreHours
			w, b := s.DomainTicks(di)
			with += w
			breached += b
		}
		if with > 0 {
			tr.SLOCompliance = 1 - breached/with
		}
		for _, st := range sm.Tiers { // percentiles over the tier's episodes
			if st.Priority == t.priority {
				tr.ScaleOut, tr.ScaleOutAll = st.ScaleOut, st.ScaleOutAll
				tr.Requests, tr.BadRequests, tr.BadRequestRatio, tr.EnergyKWh = st.Requests, st.BadRequests, st.BadRequestRatio, st.EnergyKWh
			}
		}
		r.Tiers = append(r.Tiers, tr)
	}
	if m.series != nil {
		cs := &m.series.Cluster
		for k, n := range m.perMinute {
			if n == 0 {
				continue
			}
			for _, v := range [][]float64{cs.Nodes, cs.Provisioning, cs.Queued, cs.PendingPods} {
				v[k] /= float64(n)
			}
			for di := range m.series.Domains {
				ds := &m.series.Domains[di]
				ds.RPS[k] /= float64(n)
				ds.Replicas[k] /= float64(n)
				ds.Ready[k] /= float64(n)
				ds.BreachedApps[k] /= float64(n)
				ds.Pending[k] /= float64(n)
			}
		}
		r.series = m.series
	}
	return r
}

func (m *meter) overMean(t int) float64 {
	if m.overTicks[t] == 0 {
		return 0
	}
	return m.overSum[t] / float64(m.overTicks[t])
}
