package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/regimentd/regiment/internal/core/domains"
)

// LoadFile reads, decodes and validates the cluster config at path. See Parse.
func LoadFile(path string) (*domains.Config, error) {
	src, err := ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	return Parse(src, path)
}

// Parse decodes and validates a cluster config; filename names it in
// diagnostics. Defaults are applied to the returned config. If anything is
// wrong it returns a nil config and a Diagnostics error listing every problem.
func Parse(src []byte, filename string) (*domains.Config, error) {
	var ds Diagnostics
	body, ok := parseHCL(src, filename, &ds)
	if !ok {
		return nil, ds.err()
	}
	var h configHCL
	decodeBody(body, body.MissingItemRange(), "the config file", &h, &ds)
	cfg := h.translate()
	cfg.Defaults()
	validateConfig(cfg, &h, &ds)
	resolvePolicies(cfg, &h, filename, &ds)
	if err := ds.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseHCL parses src as HCL native syntax, if it is within MaxFileSize and
// MaxNesting (limits.go). Syntax errors stop decoding: the partial body that
// follows one would only add confusing errors.
func parseHCL(src []byte, filename string, ds *Diagnostics) (*hclsyntax.Body, bool) {
	if !checkBounds(src, filename, ds) {
		return nil, false
	}
	file, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		ds.addHCL(diags, filename)
		return nil, false
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok {
		ds.add(hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos}, "Unreadable file", "not HCL native syntax")
		return nil, false
	}
	return body, true
}

// configHCL is a decoded cluster config file. The block types a config may
// contain are declared in its children method; a new block (say reward) is
// one entry there, one struct here, and a line in translate.
type configHCL struct {
	Cluster    clusterHCL
	Commander  commanderHCL
	Soldier    soldierHCL
	Domains    []*domainHCL
	NATS       natsHCL
	Store      storeHCL
	Kubernetes kubernetesHCL
	Prometheus prometheusHCL
	Reward     rewardHCL
	Calendar   calendarHCL // calendar.go
}

func (c *configHCL) children() []child {
	return []child{
		{typ: "cluster", label: "name", once: true, required: true,
			example: `cluster "prod" { capacity_cores = 12000 }`,
			open:    func(def hcl.Range, l label) node { c.Cluster.Def, c.Cluster.Name = def, l; return &c.Cluster }},
		{typ: "commander", once: true, example: `commander { tick = "60s" }`,
			open: func(def hcl.Range, _ label) node { c.Commander.Def = def; return &c.Commander }},
		{typ: "soldier", once: true, example: `soldier { tick = "10s" }`,
			open: func(def hcl.Range, _ label) node { c.Soldier.Def = def; return &c.Soldier }},
		{typ: "domain", label: "name", required: true, example: `domain "payment" { ... }`,
			open: func(def hcl.Range, l label) node {
				d := &domainHCL{Def: def, Name: l}
				c.Domains = append(c.Domains, d)
				return d
			}},
		{typ: "nats", once: true, example: `nats { url = "nats://localhost:4222" }`,
			open: func(def hcl.Range, _ label) node { c.NATS.Def = def; return &c.NATS }},
		{typ: "store", once: true, example: `store { path = "data/regiment.db" }`,
			open: func(def hcl.Range, _ label) node { c.Store.Def = def; return &c.Store }},
		{typ: "kubernetes", once: true, example: `kubernetes { namespace = "shop" }`,
			open: func(def hcl.Range, _ label) node { c.Kubernetes.Def = def; return &c.Kubernetes }},
		{typ: "prometheus", once: true, example: `prometheus { url = "http://prometheus:9090" }`,
			open: func(def hcl.Range, _ label) node { c.Prometheus.Def = def; return &c.Prometheus }},
		{typ: "reward", once: true, example: `reward { commander { cost = 0.5 } }`,
			open: func(def hcl.Range, _ label) node { c.Reward.Def = def; return &c.Reward }},
		{typ: "calendar", once: true, example: `calendar { event "black-friday" { domain = "payment" ... } }`,
			open: func(def hcl.Range, _ label) node { c.Calendar.Def = def; return &c.Calendar }},
	}
}

// translate builds the plain config, without defaults. Domains and app sets
// keep file order, so index i of the result is index i of c.
func (c *configHCL) translate() *domains.Config {
	cfg := &domains.Config{
		Cluster:    c.Cluster.translate(),
		Commander:  c.Commander.translate(),
		Soldier:    c.Soldier.translate(),
		NATS:       c.NATS.translate(),
		Store:      domains.Store{Path: c.Store.Path.V, Retention: c.Store.Retention.V},
		Kubernetes: c.Kubernetes.translate(),
		Prometheus: c.Prometheus.translate(),
		Reward: domains.Reward{Commander: c.Reward.Commander.values(), Soldier: c.Reward.Soldier.values(),
			Service: c.Reward.Service.values()},
		Calendar: c.Calendar.translate(),
	}
	for _, d := range c.Domains {
		cfg.Domains = append(cfg.Domains, d.translate())
	}
	return cfg
}

type clusterHCL struct {
	Def               hcl.Range
	Name              label
	CapacityCores     numberAttr   `hcl:"capacity_cores"`
	NodeCores         numberAttr   `hcl:"node_cores"`
	NodeProvisionTime durationAttr `hcl:"node_provision_time"`
	ProvisionerRate   numberAttr   `hcl:"provisioner_rate"`
	ProvisionerBurst  intAttr      `hcl:"provisioner_burst"`
	NodeIdleTimeout   durationAttr `hcl:"node_idle_timeout"`
	CostPerCoreHour   numberAttr   `hcl:"cost_per_core_hour"`
	TelemetryLag      durationAttr `hcl:"telemetry_lag"`

	// Power model (issue 31: request-weighted SLO and energy).
	NodeIdleWatts numberAttr `hcl:"node_idle_watts"`
	BusyCoreWatts numberAttr `hcl:"busy_core_watts"`
	// The node provisioner model (issue 31).
	Provisioner             stringAttr   `hcl:"provisioner"`
	LaunchRequestRate       numberAttr   `hcl:"launch_request_rate"`
	LaunchRequestBurst      intAttr      `hcl:"launch_request_burst"`
	LaunchInstanceRate      numberAttr   `hcl:"launch_instance_rate"`
	LaunchInstanceBurst     intAttr      `hcl:"launch_instance_burst"`
	SpareCapacity           intAttr      `hcl:"spare_capacity"`
	SpareCapacityRate       numberAttr   `hcl:"spare_capacity_rate"`
	ScanInterval            durationAttr `hcl:"scan_interval"`
	InitialNodeGroupBackoff durationAttr `hcl:"initial_node_group_backoff"`
	MaxNodeGroupBackoff     durationAttr `hcl:"max_node_group_backoff"`
	NodeGroupBackoffReset   durationAttr `hcl:"node_group_backoff_reset"`
	MaxNodeProvisionTime    durationAttr `hcl:"max_node_provision_time"`
	BatchIdleDuration       durationAttr `hcl:"batch_idle_duration"`
	BatchMaxDuration        durationAttr `hcl:"batch_max_duration"`
	UnavailableOfferingsTTL durationAttr `hcl:"unavailable_offerings_ttl"`
	// Scheduling (issue 31, item 2).
	PriorityClasses boolAttr   `hcl:"priority_classes"`
	PackingLoss     numberAttr `hcl:"packing_loss"`
}

func (c *clusterHCL) children() []child { return nil }

func (c *clusterHCL) translate() domains.Cluster {
	return domains.Cluster{
		Name:              c.Name.V,
		CapacityCores:     c.CapacityCores.V,
		NodeCores:         c.NodeCores.V,
		NodeProvisionTime: c.NodeProvisionTime.V,
		ProvisionerRate:   c.ProvisionerRate.V,
		ProvisionerBurst:  c.ProvisionerBurst.V,
		NodeIdleTimeout:   c.NodeIdleTimeout.V,
		CostPerCoreHour:   c.CostPerCoreHour.V,
		TelemetryLag:      c.TelemetryLag.V,
		// Power model (issue 31).
		NodeIdleWatts: c.NodeIdleWatts.V,
		BusyCoreWatts: c.BusyCoreWatts.V,

		Provisioner:             c.Provisioner.V,
		LaunchRequestRate:       c.LaunchRequestRate.V,
		LaunchRequestBurst:      c.LaunchRequestBurst.V,
		LaunchInstanceRate:      c.LaunchInstanceRate.V,
		LaunchInstanceBurst:     c.LaunchInstanceBurst.V,
		SpareCapacity:           c.SpareCapacity.V,
		SpareCapacityRate:       c.SpareCapacityRate.V,
		ScanInterval:            c.ScanInterval.V,
		InitialNodeGroupBackoff: c.InitialNodeGroupBackoff.V,
		MaxNodeGroupBackoff:     c.MaxNodeGroupBackoff.V,
		NodeGroupBackoffReset:   c.NodeGroupBackoffReset.V,
		MaxNodeProvisionTime:    c.MaxNodeProvisionTime.V,
		BatchIdleDuration:       c.BatchIdleDuration.V,
		BatchMaxDuration:        c.BatchMaxDuration.V,
		UnavailableOfferingsTTL: c.UnavailableOfferingsTTL.V,
		// Scheduling (issue 31, item 2).
		PriorityClasses: c.PriorityClasses.V,
		PackingLoss:     c.PackingLoss.V,
	}
}

type commanderHCL struct {
	Def            hcl.Range
	Tick           durationAttr `hcl:"tick"`
	Policy         stringAttr   `hcl:"policy"`
	DeadZone       numberAttr   `hcl:"dead_zone"`
	ReserveMin     numberAttr   `hcl:"reserve_min"`
	MaxShareChange numberAttr   `hcl:"max_share_change"`
	DirectiveTTL   durationAttr `hcl:"directive_ttl"`
	CapacityPlan   stringAttr   `hcl:"capacity_plan"`
	PoolSpare      numberAttr   `hcl:"pool_spare"`
	PlanHold       durationAttr `hcl:"plan_hold"`
	Headroom       numberAttr   `hcl:"headroom"`
}

func (c *commanderHCL) children() []child { return nil }

func (c *commanderHCL) translate() domains.Commander {
	return domains.Commander{
		Tick:           c.Tick.V,
		Policy:         c.Policy.V,
		DeadZone:       c.DeadZone.V,
		ReserveMin:     c.ReserveMin.V,
		MaxShareChange: c.MaxShareChange.V,
		DirectiveTTL:   c.DirectiveTTL.V,
		CapacityPlan:   c.CapacityPlan.V,
		PoolSpare:      c.PoolSpare.V,
		PlanHold:       c.PlanHold.V,
		Headroom:       c.Headroom.V,
	}
}

type soldierHCL struct {
	Def               hcl.Range
	Tick              durationAttr `hcl:"tick"`
	Policy            stringAttr   `hcl:"policy"`
	Actuation         stringAttr   `hcl:"actuation"`
	OverageCap        numberAttr   `hcl:"overage_cap"`
	ScaleDownCooldown durationAttr `hcl:"scale_down_cooldown"`
	Mode              stringAttr   `hcl:"mode"`
	TargetUtilisation numberAttr   `hcl:"target_utilisation"`
	MaxUtilisation    numberAttr   `hcl:"max_utilisation"`
	StaffingSafety    numberAttr   `hcl:"staffing_safety"`
	Tolerance         numberAttr   `hcl:"tolerance"`
	ErrorRateVeto     numberAttr   `hcl:"error_rate_veto"`
	MaxWritesPerTick  intAttr      `hcl:"max_writes_per_tick"`
	Ladders           []*ladderHCL // in file order, see ladder.go
	Fallback          fallbackHCL
}

func (s *soldierHCL) translate() domains.Soldier {
	return domains.Soldier{
		Tick:              s.Tick.V,
		Policy:            s.Policy.V,
		Actuation:         domains.Actuation(s.Actuation.V),
		OverageCap:        s.OverageCap.V,
		ScaleDownCooldown: s.ScaleDownCooldown.V,
		Mode:              domains.Mode(s.Mode.V),
		TargetUtilisation: s.TargetUtilisation.V,
		MaxUtilisation:    s.MaxUtilisation.V,
		StaffingSafety:    s.StaffingSafety.V,
		Tolerance:         s.Tolerance.V,
		ErrorRateVeto:     s.ErrorRateVeto.V,
		MaxWritesPerTick:  s.MaxWritesPerTick.V,
		Ladders:           s.ladders(),
		Fallback:          s.Fallback.translate(),
	}
}

type domainHCL struct {
	Def      hcl.Range
	Name     label
	Priority intAttr    `hcl:"priority"`
	Weight   numberAttr `hcl:"weight"`
	Floor    numberAttr `hcl:"floor"`
	Ceiling  numberAttr `hcl:"ceiling"`
	Headroom numberAttr `hcl:"headroom"`
	Mode     stringAttr `hcl:"mode"`
	SLO      sloHCL
	AppSets  []*appSetHCL
	Discover discoverHCL // see discover.go
}

func (d *domainHCL) children() []child {
	return []child{
		{typ: "slo", once: true, required: true, example: `slo { latency_p99 = "150ms" }`,
			open: func(def hcl.Range, _ label) node { d.SLO.Def = def; return &d.SLO }},
		{typ: "discover", once: true, example: `discover { namespaces = ["shop"] ... }`,
			open: func(def hcl.Range, _ label) node { d.Discover.Def = def; return &d.Discover }},
		// apps are required unless the domain discovers (validateDiscover).
		{typ: "apps", label: "name",
			example: `apps "checkout" { cpu_per_replica = 0.5 ... }`,
			open: func(def hcl.Range, l label) node {
				a := &appSetHCL{Def: def, Name: l}
				d.AppSets = append(d.AppSets, a)
				return a
			}},
	}
}

func (d *domainHCL) translate() domains.Domain {
	out := domains.Domain{
		Name:     d.Name.V,
		Priority: d.Priority.V,
		Weight:   d.Weight.V,
		Floor:    d.Floor.V,
		Ceiling:  d.Ceiling.V,
		Headroom: d.Headroom.V,
		Mode:     domains.Mode(d.Mode.V),
		SLO:      domains.SLO{LatencyP99: d.SLO.LatencyP99.V, ErrorBudget: d.SLO.ErrorBudget.V},
	}
	for _, a := range d.AppSets {
		out.AppSets = append(out.AppSets, a.translate())
	}
	out.Discover = d.Discover.translate()
	return out
}

type sloHCL struct {
	Def         hcl.Range
	LatencyP99  durationAttr `hcl:"latency_p99"`
	ErrorBudget numberAttr   `hcl:"error_budget"`
}

func (s *sloHCL) children() []child { return nil }

type appSetHCL struct {
	Def           hcl.Range
	Name          label
	Count         intAttr      `hcl:"count"`
	CPUPerReplica numberAttr   `hcl:"cpu_per_replica"`
	MinReplicas   intAttr      `hcl:"min_replicas"`
	MaxReplicas   intAttr      `hcl:"max_replicas"`
	ServiceTime   durationAttr `hcl:"service_time"`
	Concurrency   intAttr      `hcl:"concurrency"`
	StartupTime   durationAttr `hcl:"startup_time"`
	Timeout       durationAttr `hcl:"timeout"`
	DependsOn     listAttr     `hcl:"depends_on"`
	CallRatio     numberAttr   `hcl:"call_ratio"`
	CallLag       durationAttr `hcl:"call_lag"`
	CPULimitRatio numberAttr   `hcl:"cpu_limit_ratio"`
	Workload      workloadHCL
	Queries       queriesHCL // overrides of the prometheus block's queries (prometheus.go)
}

func (a *appSetHCL) children() []child {
	return []child{{typ: "workload", once: true, example: `workload { name = "checkout" }`,
		open: func(def hcl.Range, _ label) node { a.Workload.Def = def; return &a.Workload }},
		{typ: "queries", once: true, example: `queries { p99 = "..." }`,
			open: func(def hcl.Range, _ label) node { a.Queries.Def = def; return &a.Queries }}}
}

func (a *appSetHCL) translate() domains.AppSet {
	return domains.AppSet{
		Name:          a.Name.V,
		Count:         a.Count.V,
		CPUPerReplica: a.CPUPerReplica.V,
		MinReplicas:   a.MinReplicas.V,
		MaxReplicas:   a.MaxReplicas.V,
		ServiceTime:   a.ServiceTime.V,
		Concurrency:   a.Concurrency.V,
		StartupTime:   a.StartupTime.V,
		Timeout:       a.Timeout.V,
		DependsOn:     a.DependsOn.V,
		CallRatio:     a.CallRatio.V,
		CallLag:       a.CallLag.V,
		CPULimitRatio: a.CPULimitRatio.V,
		Workload:      a.Workload.translate(),
		Queries:       a.Queries.translate(),
	}
}

type storeHCL struct {
	Def       hcl.Range
	Path      stringAttr   `hcl:"path"`
	Retention durationAttr `hcl:"retention"`
}

func (s *storeHCL) children() []child { return nil }
