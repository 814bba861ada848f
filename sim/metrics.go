package sim

// Metrics summarises a run. Every field is a pure function of the config,
// scenario and policy: two runs with the same inputs give equal Metrics.
type Metrics struct {
	CostCoreHours    float64         `json:"cost_core_hours"`    // provisioned node cores x hours
	Cost             float64         `json:"cost"`               // CostCoreHours x cost_per_core_hour
	SLOCompliance    float64         `json:"slo_compliance"`     // compliant share of app-ticks with traffic, [0, 1]
	BreachAppMinutes float64         `json:"breach_app_minutes"` // app-minutes over the SLO latency or error budget
	ScalingActions   int             `json:"scaling_actions"`    // replica target changes
	PeakNodes        int32           `json:"peak_nodes"`         // most ready and provisioning nodes at once
	PendingPodHours  float64         `json:"pending_pod_hours"`  // replica-hours spent waiting for a node
	SimSeconds       float64         `json:"sim_seconds"`        // simulated time
	Domains          []DomainMetrics `json:"domains"`
}

// DomainMetrics summarises one domain over a run.
type DomainMetrics struct {
	Name             string  `json:"name"`
	Priority         int     `json:"priority"`
	CoreHours        float64 `json:"core_hours"` // cores of scheduled replicas x hours
	SLOCompliance    float64 `json:"slo_compliance"`
	BreachAppMinutes float64 `json:"breach_app_minutes"`
	ScalingActions   int     `json:"scaling_actions"`
}

// accum gathers metrics tick by tick without allocating.
type accum struct {
	appTicks, breaches []float64 // per domain: app-ticks with traffic, breached ones
	coreSeconds        []float64 // per domain
	actions            []int     // per domain
	nodeCoreSeconds    float64
	pendingPodSeconds  float64
	peakNodes          int32
	seconds            float64
}

func (m *accum) init(domains int) {
	m.appTicks = make([]float64, domains)
	m.breaches = make([]float64, domains)
	m.coreSeconds = make([]float64, domains)
	m.actions = make([]int, domains)
}

func (m *accum) app(domain int, traffic, breach bool, cores, dt float64) {
	m.coreSeconds[domain] += cores * dt
	if traffic {
		m.appTicks[domain]++
	}
	if breach {
		m.breaches[domain]++
	}
}

func (m *accum) cluster(p *pool, pendingPods int32, dt float64) {
	m.nodeCoreSeconds += float64(p.nodes+p.provisioning) * p.nodeCores * dt
	m.pendingPodSeconds += float64(pendingPods) * dt
	m.peakNodes = max(m.peakNodes, p.nodes+p.provisioning)
	m.seconds += dt
}

// Metrics summarises the run so far.
func (s *Sim) Metrics() Metrics {
	m := &s.metric
	out := Metrics{
		CostCoreHours:   m.nodeCoreSeconds / 3600,
		PeakNodes:       m.peakNodes,
		PendingPodHours: m.pendingPodSeconds / 3600,
		SimSeconds:      m.seconds,
	}
	out.Cost = out.CostCoreHours * s.cfg.Cluster.CostPerCoreHour
	var ticks, breaches float64
	for di, d := range s.doms {
		dm := DomainMetrics{
			Name: d.name, Priority: d.prio,
			CoreHours:        m.coreSeconds[di] / 3600,
			BreachAppMinutes: m.breaches[di] * s.dt / 60,
			ScalingActions:   m.actions[di],
			SLOCompliance:    1,
		}
		if m.appTicks[di] > 0 {
			dm.SLOCompliance = 1 - m.breaches[di]/m.appTicks[di]
		}
		ticks += m.appTicks[di]
		breaches += m.breaches[di]
		out.BreachAppMinutes += dm.BreachAppMinutes
		out.ScalingActions += dm.ScalingActions
		out.Domains = append(out.Domains, dm)
	}
	out.SLOCompliance = 1
	if ticks > 0 {
		out.SLOCompliance = 1 - breaches/ticks
	}
	return out
}
