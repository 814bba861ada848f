package domains

import "time"

// Defaults fills every zero-valued optional field with its documented default.
// It is idempotent.
func (c *Config) Defaults() {
	cl := &c.Cluster
	setF(&cl.NodeCores, 32)
	setD(&cl.NodeProvisionTime, 3*time.Minute)
	setF(&cl.ProvisionerRate, 20)
	setD(&cl.NodeIdleTimeout, 10*time.Minute)
	setF(&cl.CostPerCoreHour, 0.04)
	setD(&cl.TelemetryLag, 20*time.Second)
	// Power model (issue 31): Cloud Carbon Footprint's Cascade Lake
	// coefficients, 0.64 W a vCPU idle, 3.80 W a vCPU busy (domains.Cluster).
	setF(&cl.NodeIdleWatts, IdleWattsPerCore*cl.NodeCores)
	setF(&cl.BusyCoreWatts, MaxWattsPerCore-IdleWattsPerCore)
	// The node provisioner model (issue 31), each default its source's.
	if cl.Provisioner == "" {
		cl.Provisioner = ProvisionerTokenBucket
	}
	setF(&cl.LaunchRequestRate, 5)
	if cl.LaunchRequestBurst == 0 {
		cl.LaunchRequestBurst = 50
	}
	setF(&cl.LaunchInstanceRate, 2)
	if cl.LaunchInstanceBurst == 0 {
		cl.LaunchInstanceBurst = 1000
	}
	setD(&cl.ScanInterval, 10*time.Second)
	setD(&cl.InitialNodeGroupBackoff, 5*time.Minute)
	setD(&cl.MaxNodeGroupBackoff, 30*time.Minute)
	setD(&cl.NodeGroupBackoffReset, 3*time.Hour)
	setD(&cl.MaxNodeProvisionTime, 15*time.Minute)
	setD(&cl.BatchIdleDuration, time.Second)
	setD(&cl.BatchMaxDuration, 10*time.Second)
	setD(&cl.UnavailableOfferingsTTL, 3*time.Minute)
	// Scheduling (issue 31, item 2): PriorityClasses defaults to false (a
	// cluster without PriorityClasses: arrival order, no preemption) and
	// PackingLoss to 0 (ideal packing), both their zero values.

	cm := &c.Commander
	setD(&cm.Tick, 60*time.Second)
	if cm.Policy == "" {
		cm.Policy = "forecast"
	}
	setF(&cm.DeadZone, 0.02)
	setF(&cm.ReserveMin, 0.02)
	setF(&cm.MaxShareChange, 0.10)
	setD(&cm.DirectiveTTL, 3*cm.Tick)
	if cm.CapacityPlan == "" {
		cm.CapacityPlan = PlanForecast
	}

	setD(&c.Calendar.Lead, DefaultEventLead)
	setD(&c.Calendar.Ramp, min(DefaultEventRamp, c.Calendar.Lead))

	s := &c.Soldier
	setD(&s.Tick, 10*time.Second)
	if s.Policy == "" {
		s.Policy = "proportional"
	}
	if s.Actuation == "" {
		s.Actuation = ActuateHPABounds
	}
	setF(&s.OverageCap, 0.10)
	setD(&s.ScaleDownCooldown, 5*time.Minute)
	if s.Mode == "" {
		s.Mode = ModeActive
	}
	setF(&s.TargetUtilisation, 0.7)
	setF(&s.MaxUtilisation, max(0.85, s.TargetUtilisation))
	setF(&s.StaffingSafety, 3)
	setF(&s.Tolerance, 0.15)
	setF(&s.ErrorRateVeto, 0.01)
	if s.MaxWritesPerTick == 0 {
		s.MaxWritesPerTick = 200
	}
	for tier := range s.Ladders {
		s.Ladders[tier] = s.Ladder(tier)
	}
	s.Fallback = s.Fallback.OrDefault()

	for di := range c.Domains {
		d := &c.Domains[di]
		setF(&d.Weight, 1)
		setF(&d.Ceiling, 1)
		setF(&d.SLO.ErrorBudget, 0.001)
		if d.Discover != nil {
			d.Discover.defaults()
		}
		for si := range d.AppSets {
			a := &d.AppSets[si]
			if a.Count == 0 {
				a.Count = 1
			}
			a.sizeDefaults()
			if a.Workload.Kind == "" {
				a.Workload.Kind = KindDeployment
			}
		}
	}
	if c.Store.Path == "" {
		c.Store.Path = "data/regiment.db"
	}
	setD(&c.Store.Retention, 168*time.Hour)
	if c.NATS.Replicas == 0 {
		c.NATS.Replicas = 1
	}

	k := &c.Kubernetes
	if k.Namespace == "" {
		k.Namespace = "default"
	}
	if k.LeaseNamespace == "" {
		k.LeaseNamespace = k.Namespace
	}
	setD(&k.LeaseDuration, 40*time.Second)
	setF(&k.HPAHeadroom, 0.5)
	setF(&k.WritesPerSecond, DefaultWritesPerSecond)
	if k.WriteBurst == 0 {
		k.WriteBurst = DefaultWriteBurst
	}
	if k.BalloonPriorityClass == "" {
		k.BalloonPriorityClass = DefaultBalloonPriorityClass
	}
	if k.BalloonImage == "" {
		k.BalloonImage = DefaultBalloonImage
	}
	p := &c.Prometheus
	setD(&p.MaxAge, 2*time.Minute)
	setD(&p.Timeout, 5*time.Second)
	dq := DefaultPrometheusQueries
	for i, q := range p.Queries.List() {
		if q.Template == "" {
			*q = *dq.List()[i]
		}
	}
}

// Defaults fills every zero-valued optional field with its documented default.
func (s *Scenario) Defaults() {
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Noise == 0 {
		s.Noise = 0.05
	}
	// Traffic structure and warm-up (issue 31, traffic); Warmup's default is 0.
	if s.ArrivalNoise == "" {
		s.ArrivalNoise = NoiseMultiplicative
	}
	for i := range s.Traffic {
		t := &s.Traffic[i]
		if t.FunctionStride == 0 {
			t.FunctionStride = 1
		}
		if t.PeakRPSOf == "" {
			t.PeakRPSOf = PeakOfTrace
		}
		setF(&t.AppSkew, 1)
		if t.FunctionRows == "" {
			t.FunctionRows = RowsAll
		}
		if t.Functions == "" {
			t.Functions = FunctionsOnePerApp
		}
		// Traffic structure (issue 31, traffic): BurstSigma,
		// BurstCorrelation and AppOwn default to 0.
		if t.AppShift == 0 {
			t.AppShift = time.Hour
		}
	}
}

// DefaultLadder is the rollback ladder of a priority tier: P0 alerts at 1.2x
// the SLO sustained 15 s, freezes at 1.5x and reverts at 2x; P1 alerts at 1.3x
// over 30 s; P2 and below at 1.5x over 45 s. Freeze and revert keep P0's
// ratios to the alert threshold (x1.25, x5/3). Cool-off is 5 minutes.
func DefaultLadder(tier int) Ladder {
	alert, sustain := 1.2, 15*time.Second
	switch {
	case tier == 1:
		alert, sustain = 1.3, 30*time.Second
	case tier >= 2:
		alert, sustain = 1.5, 45*time.Second
	}
	return Ladder{Alert: alert, Freeze: alert * 1.25, Revert: alert * 5 / 3, Sustain: sustain, CoolOff: 5 * time.Minute}
}

// Ladder is the rollback ladder of priority tier: Ladders[tier] with its zero
// fields set to DefaultLadder(tier). Tiers above MaxLadderTier have the
// ladder of MaxLadderTier (its block governs every less important tier); a
// negative tier has DefaultLadder(tier).
func (s *Soldier) Ladder(tier int) Ladder {
	tier = min(tier, MaxLadderTier)
	d := DefaultLadder(tier)
	if tier < 0 {
		return d
	}
	l := s.Ladders[tier]
	setF(&l.Alert, d.Alert)
	setF(&l.Freeze, d.Freeze)
	setF(&l.Revert, d.Revert)
	setD(&l.Sustain, d.Sustain)
	setD(&l.CoolOff, d.CoolOff)
	return l
}

// DefaultFallback is the automatic fallback's defaults: a 30-minute window
// that trips at 5% of its ticks breached by the policy, or on cost 10% above
// the baseline with no compliance advantage, and holds the baseline 30
// minutes.
func DefaultFallback() Fallback {
	return Fallback{Window: 30 * time.Minute, BreachFraction: 0.05, CostMargin: 0.10, ShortTolerance: 0.10, Hold: 30 * time.Minute}
}

// OrDefault is f with its zero fields but Off set to DefaultFallback's.
func (f Fallback) OrDefault() Fallback {
	d := DefaultFallback()
	setD(&f.Window, d.Window)
	setF(&f.BreachFraction, d.BreachFraction)
	setF(&f.CostMargin, d.CostMargin)
	setF(&f.ShortTolerance, d.ShortTolerance)
	setD(&f.Hold, d.Hold)
	return f
}

func setF(p *float64, v float64) {
	if *p == 0 {
		*p = v
	}
}

func setD(p *time.Duration, v time.Duration) {
	if *p == 0 {
		*p = v
	}
}

// sizeDefaults sets the sizing attributes a written or discovered app set
// leaves unset: replicas 1 to 100, concurrency 1, startup 30 s, timeout
// 5 s, call ratio 1, the default CPU limit ratio.
func (a *AppSet) sizeDefaults() {
	if a.MinReplicas == 0 {
		a.MinReplicas = 1
	}
	if a.MaxReplicas == 0 {
		a.MaxReplicas = 100
	}
	if a.Concurrency == 0 {
		a.Concurrency = 1
	}
	setD(&a.StartupTime, 30*time.Second)
	setD(&a.Timeout, 5*time.Second)
	setF(&a.CallRatio, 1)
	setF(&a.CPULimitRatio, DefaultCPULimitRatio)
}

// Power model defaults (domains.Cluster.NodeIdleWatts, BusyCoreWatts): Cloud
// Carbon Footprint's per-vCPU coefficients for Intel Cascade Lake, from
// SPECpower_ssj2008 (github.com/cloud-carbon-footprint/ccf-coefficients).
const (
	IdleWattsPerCore = 0.64 // watts a vCPU draws idle
	MaxWattsPerCore  = 3.80 // watts a vCPU draws at full load
)
