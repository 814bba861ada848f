package domains

import (
	"fmt"
	"slices"
	"time"
)

// Config is a whole cluster configuration: the contested pool, the two control
// levels, the domains with their app sets, and the I/O settings of the daemons.
type Config struct {
	Cluster   Cluster
	Commander Commander
	Soldier   Soldier
	Domains   []Domain // in file order; index is the domain id
	NATS      NATS
	Store     Store
	// Kubernetes and Prometheus matter only to daemons run with a kubeconfig.
	Kubernetes Kubernetes
	Prometheus Prometheus
	Reward     Reward
	// Calendar is the operator's schedule of expected demand; empty: none.
	Calendar Calendar
}

// Cluster is the contested node pool every domain draws from.
type Cluster struct {
	Name string
	// CapacityCores is the largest the pool may grow to, in cores. Required, > 0.
	CapacityCores float64
	// NodeCores is the allocatable cores of one node. Default 32.
	NodeCores float64
	// NodeProvisionTime is how long a requested node takes to become ready. Default 3m.
	NodeProvisionTime time.Duration
	// ProvisionerRate is how many node requests the provisioner can start per minute;
	// bursts beyond it queue (the stampede). Default 20.
	ProvisionerRate float64
	// ProvisionerBurst is the most node starts the provisioner can make at
	// once, in nodes: it is a token bucket refilled at ProvisionerRate that
	// holds at most ProvisionerBurst starts, so after a quiet spell a burst of
	// requests starts this many nodes, then ProvisionerRate. Requests are
	// served in arrival order, whatever the priority of the pods they are for.
	// >= 0; 0 (the default) and any value below one tick's refill
	// (ProvisionerRate x tick / 1m) mean one tick's refill, at least one node.
	ProvisionerBurst int
	// NodeIdleTimeout is how long a node's worth of cores must stay free before a
	// node is removed. Default 10m.
	NodeIdleTimeout time.Duration
	// CostPerCoreHour is the price of one provisioned node core for one hour. Default 0.04.
	CostPerCoreHour float64
	// TelemetryLag is how old the telemetry a policy sees is (metrics pipeline
	// delay). Default 20s.
	TelemetryLag time.Duration

	// Power model (issue 31: request-weighted SLO and energy). A node draws
	// NodeIdleWatts whenever it is provisioned (booting or ready) plus
	// BusyCoreWatts for each busy core: linear in utilisation, as
	// SPECpower_ssj2008 results show (Barroso & Hölzle, "The Case for
	// Energy-Proportional Computing", IEEE Computer 40(12), 2007). The
	// defaults are Cloud Carbon Footprint's per-vCPU coefficients for Intel
	// Cascade Lake (AWS m5/c5/r5), computed from SPECpower_ssj2008: 0.64 W a
	// vCPU idle, 3.80 W a vCPU at full load (github.com/cloud-carbon-footprint
	// /ccf-coefficients). Server power only: no PUE, memory or network.

	// NodeIdleWatts is one provisioned node's power at no load, watts, >= 0.
	// Default 0.64 x NodeCores (20.48 W for a 32-vCPU node).
	NodeIdleWatts float64
	// BusyCoreWatts is the power one busy core adds over idle, watts, >= 0.
	// Default 3.16 (3.80 - 0.64).
	BusyCoreWatts float64
	// --- Node provisioner model (issue 31, item 1; internal/offline/sim/provisioner.go). ---
	// Sources: EC2 API throttling (docs.aws.amazon.com/ec2/latest/devguide/
	// ec2-api-throttling.html), cluster-autoscaler's flags (FAQ.md, main.go,
	// utils/backoff/exponential_backoff.go), Karpenter's settings and
	// karpenter-provider-aws pkg/cache (UnavailableOfferingsTTL).

	// Provisioner is the node provisioner the simulator models:
	// ProvisionerTokenBucket (the default: ProvisionerRate and
	// ProvisionerBurst, no launch ever fails), ProvisionerClusterAutoscaler
	// or ProvisionerKarpenter (launches through the cloud's API buckets and
	// the region's spare capacity below, and fail when either runs out).
	Provisioner string
	// LaunchRequestRate is the cloud's launch API request bucket's refill,
	// calls per second (EC2 request rate limiting). Default 5.
	LaunchRequestRate float64
	// LaunchRequestBurst is that bucket's size, calls. Default 50.
	LaunchRequestBurst int
	// LaunchInstanceRate is the cloud's instance (resource token) bucket's
	// refill, instances per second (EC2 RunInstances: 2). Default 2.
	LaunchInstanceRate float64
	// LaunchInstanceBurst is that bucket's size, instances (EC2
	// RunInstances: 1000). Default 1000.
	LaunchInstanceBurst int
	// SpareCapacity is the region's spare capacity of the node type for this
	// account: the most instances it can launch before one fails with
	// insufficient capacity, nodes. It refills at SpareCapacityRate and
	// gets back the nodes scaled down, up to SpareCapacity. >= 0; 0 (the
	// default) is no limit.
	SpareCapacity int
	// SpareCapacityRate is how many instances of the node type the region
	// frees per minute, nodes per minute. Default 0: only scaled-down nodes
	// come back.
	SpareCapacityRate float64
	// ScanInterval is cluster-autoscaler's --scan-interval: how often it
	// looks for pending pods and scales up, once per node group. Default 10s.
	ScanInterval time.Duration
	// InitialNodeGroupBackoff is --initial-node-group-backoff-duration: how
	// long a node group is not scaled up after a failed scale-up. Default 5m.
	InitialNodeGroupBackoff time.Duration
	// MaxNodeGroupBackoff is --max-node-group-backoff-duration: the most the
	// backoff doubles to over consecutive failures. Default 30m.
	MaxNodeGroupBackoff time.Duration
	// NodeGroupBackoffReset is --node-group-backoff-reset-timeout: a failure
	// this long ago no longer doubles the next backoff. Default 3h.
	NodeGroupBackoffReset time.Duration
	// MaxNodeProvisionTime is --max-node-provision-time: a scale-up whose
	// nodes are not all ready this long after it is a failed one. Default 15m.
	MaxNodeProvisionTime time.Duration
	// BatchIdleDuration is Karpenter's BATCH_IDLE_DURATION: a batch of
	// pending pods closes after this long without new ones. Default 1s.
	BatchIdleDuration time.Duration
	// BatchMaxDuration is Karpenter's BATCH_MAX_DURATION: the longest a
	// batch stays open. Default 10s.
	BatchMaxDuration time.Duration
	// UnavailableOfferingsTTL is how long Karpenter keeps an offering that
	// failed with insufficient capacity out of its launches. Default 3m.
	UnavailableOfferingsTTL time.Duration
	// Scheduling (issue 31, item 2): how kube-scheduler places pending pods.
	//
	// PriorityClasses says whether the domains' pods carry a PriorityClass by
	// tier (priority 0 the highest). true: the scheduler's queue orders
	// pending pods by priority, then by arrival, and a pod that fails to fit
	// preempts pods of lower priority (kube-scheduler's DefaultPreemption:
	// reactive, pod-scoped, lowest priority and youngest victims first, each
	// victim's cores freed after the 30 s termination grace period, its
	// replica recreated pending). false, the default: pods carry no
	// PriorityClass, so all have priority 0, as on a cluster without them:
	// pending pods are scheduled in arrival order whatever their domain's
	// tier, and nothing is preempted.
	PriorityClasses bool
	// PackingLoss is the share of each node's cores that pods cannot be
	// packed into, [0, 0.5): a pod of c cores takes c / (1 - PackingLoss)
	// of a node (fragmentation left by scheduling and scale-down, spread
	// constraints, requests of other resources). 0, the default, is ideal
	// packing: every free core fits any pod.
	PackingLoss float64
}

// Node provisioners (Cluster.Provisioner).
const (
	ProvisionerTokenBucket       = "token-bucket"       // a token bucket of node starts that never fail
	ProvisionerClusterAutoscaler = "cluster-autoscaler" // scan loop, node-group backoff after a failed scale-up
	ProvisionerKarpenter         = "karpenter"          // pod batching, unavailable-offerings cache after insufficient capacity
)

// Commander holds the settings of the cluster-level allocator.
type Commander struct {
	Tick       time.Duration // decision period; default 60s
	Policy     string        // policy name or checkpoint path; default "forecast"
	DeadZone   float64       // share changes below this fraction of the previous share are dropped; default 0.02
	ReserveMin float64       // smallest unallocated share kept for uncertainty; default 0.02
	// MaxShareChange is the largest change of one domain's share per tick, in
	// share points. Default 0.10.
	MaxShareChange float64
	// DirectiveTTL is how long a directive stays valid. Default 3 x Tick.
	DirectiveTTL time.Duration
	// CapacityPlan is PlanForecast (the default) or PlanOff: whether the
	// Commander asks the node pool, every tick, to hold the cores its
	// forecasts say the domains need over the next 15 minutes
	// (commander.PlanCapacity), where it has a pool to ask.
	CapacityPlan string
	// PoolSpare is the share of the planned cores held free on top, as a
	// buffer any domain's new replicas schedule on at once, [0, 1].
	PoolSpare float64
	// PlanHold is how long the capacity plan keeps its largest value: the
	// pool holds the nodes of a plan that fell until PlanHold has passed, as
	// the HPA holds replicas over its scale-down window. 0 holds nothing.
	PlanHold time.Duration
	// Headroom, when above 0, is the fixed headroom the Forecast policy
	// gives every domain, [0, MaxHeadroom] (a fraction of load: Soldiers
	// size for load x (1 + Headroom)). 0 (the default) is the forecast's
	// spread rule: a quarter of its relative p10-p90 spread at +15 min,
	// within [0.01, 0.15].
	Headroom float64
}

// Capacity plans (Commander.CapacityPlan).
const (
	PlanForecast = "forecast" // hold the forecast's cores ahead of demand
	PlanOff      = "off"      // nodes come only for pending pods
)

// Actuation says how a Soldier applies replica decisions.
type Actuation string

const (
	ActuateReplicas  Actuation = "replicas"   // scale subresource
	ActuateHPABounds Actuation = "hpa-bounds" // patch HPA min/max
)

// Mode says whether a Soldier's policy acts.
type Mode string

const (
	ModeActive Mode = "active" // the policy actuates
	// ModeRecommend: the policy and the baseline decide and are recorded
	// beside the cluster's live replicas; nothing is written (the cluster's
	// own autoscaling acts).
	ModeRecommend Mode = "recommend"
	// ModeShadow is a deprecated alias of ModeRecommend, which it behaves as.
	// (Before, the baseline actuated in shadow mode.)
	ModeShadow Mode = "shadow"
	ModeOff    Mode = "off" // nothing is decided or actuated
)

// Writes reports whether a Soldier in mode m writes to the cluster: only in
// active mode.
func (m Mode) Writes() bool { return m == ModeActive }

// Recommends reports whether a Soldier in mode m decides without writing,
// recording its recommendation: recommend, and shadow, its alias.
func (m Mode) Recommends() bool { return m == ModeRecommend || m == ModeShadow }

// Soldier holds the settings shared by every domain's Soldier.
type Soldier struct {
	Tick              time.Duration // decision period; default 10s
	Policy            string        // policy name or checkpoint path; default "proportional"
	Actuation         Actuation     // default hpa-bounds
	OverageCap        float64       // spend may reach budget x (1 + OverageCap); default 0.10
	ScaleDownCooldown time.Duration // per-app wait after a scale-up before scaling down; default 5m
	Mode              Mode          // default active
	// TargetUtilisation is the CPU utilisation an app is sized for at most
	// (the HPA's target), in (0, 1]. Default 0.7.
	TargetUtilisation float64
	// MaxUtilisation is the highest CPU utilisation the proportional Soldier
	// sizes a large app for, where square-root staffing shows that its
	// pooled replicas absorb the variance: [TargetUtilisation, 1]. Default 0.85.
	MaxUtilisation float64
	// StaffingSafety is the beta of square-root staffing: the spare servers
	// (replicas x concurrency) the proportional Soldier keeps above an app's
	// busy servers x, in units of sqrt(x), > 0. Default 3.
	StaffingSafety float64
	// Tolerance is the proportional Soldier's hysteresis: no write when the
	// sized replicas are within this fraction of the current target,
	// (0, 0.5]. Default 0.15.
	Tolerance float64
	// ErrorRateVeto is the error rate above which scale-down is vetoed. Default 0.01.
	ErrorRateVeto float64
	// MaxWritesPerTick caps replica writes per tick; the largest moves go
	// first and the rest wait a tick. Default 200.
	MaxWritesPerTick int
	// Ladders are the rollback ladders of priority tiers 0 (P0) to
	// MaxLadderTier, indexed by tier. A zero field is the tier's default
	// (DefaultLadder); tiers above MaxLadderTier have MaxLadderTier's. Use
	// Soldier.Ladder to read a tier's ladder.
	Ladders [MaxLadderTier + 1]Ladder
	// Fallback is the automatic fallback. Zero fields are DefaultFallback's.
	Fallback Fallback
}

// MaxLadderTier is the highest priority tier with a configurable ladder.
const MaxLadderTier = 9

// Ladder is one priority tier's rollback ladder. The thresholds are multiples
// of the domain's SLO p99 (p99 / SLO), 1 < Alert < Freeze < Revert; each must
// be exceeded for Sustain before its rung engages, and control steps back down
// one rung after CoolOff below Alert.
type Ladder struct {
	Alert   float64       // operators are alerted; default 1.2 (P0), 1.3 (P1), 1.5 (P2 and below)
	Freeze  float64       // the learned policy is frozen; default 1.25 x the tier's default Alert
	Revert  float64       // the domain runs the baseline; default 5/3 x the tier's default Alert
	Sustain time.Duration // time over a threshold before its rung engages; default 15s (P0), 30s (P1), 45s
	CoolOff time.Duration // time below Alert before stepping down one rung; default 5m
}

// Fallback is the automatic fallback: a rolling comparison of the live
// policy against the baseline (computed in shadow) that hands a domain to the
// baseline while the policy is consistently worse. Lengths are durations here
// and whole Soldier ticks in package soldier.
type Fallback struct {
	// Off turns the automatic fallback off (window = "0s" in the config).
	Off bool
	// Window is the rolling comparison's length, a whole number of Soldier
	// ticks. Default 30m.
	Window time.Duration
	// BreachFraction is the share of the window's ticks with a breach caused
	// by the policy at which it trips, (0, 1]. Default 0.05.
	BreachFraction float64
	// CostMargin is how much more than the baseline the policy may allocate
	// over a window, as a fraction of the baseline's cores, >= 0. Default 0.10.
	CostMargin float64
	// ShortTolerance is the share of the domain's demand cores the policy may
	// leave unallocated beyond the baseline before a tick counts as short,
	// [0, 1]. Default 0.10.
	ShortTolerance float64
	// Hold is how long the baseline keeps a domain after a trip before the
	// policy may have it back. Default 30m.
	Hold time.Duration
}

// Domain is a set of related services that share a budget, an SLO and a priority.
type Domain struct {
	Name     string
	Priority int     // tier: 0 (P0) is the most important
	Weight   float64 // reward priority weight; default 1
	Floor    float64 // minimum share of the contested pool, [0, 1]
	Ceiling  float64 // maximum share of the contested pool, [Floor, 1]; default 1
	// Headroom, when above 0, is this domain's fixed headroom, [0,
	// MaxHeadroom] (a fraction of load), in place of the Commander's
	// (Commander.Headroom, or its spread rule). 0: the Commander's.
	Headroom float64
	SLO      SLO
	AppSets  []AppSet
	// Discover, when not nil, adds the workloads it selects on the cluster
	// as apps of the domain (Config.WithDiscovered); AppSets may then be
	// empty.
	Discover *Discover

	// Mode is this domain's Soldier mode, overriding Soldier.Mode; empty:
	// the soldier block's.
	Mode Mode
}

// SLO is a domain's service-level objective.
type SLO struct {
	LatencyP99  time.Duration // p99 response time objective; required
	ErrorBudget float64       // tolerated error rate, (0, 1); default 0.001
}

// LatencyP99Seconds is the p99 objective in seconds, the unit of every
// latency the cores compare with it.
func (s SLO) LatencyP99Seconds() float64 { return s.LatencyP99.Seconds() }

// AppSet is Count similar apps described once. Apps of a set are named
// "<set>" when Count is 1, else "<set>-<i>" with i from 0.
type AppSet struct {
	Name          string
	Count         int
	CPUPerReplica float64       // cores per replica; required, > 0
	MinReplicas   int           // default 1
	MaxReplicas   int           // default 100
	ServiceTime   time.Duration // mean service time of one request; required
	Concurrency   int           // requests one replica serves at once; default 1
	StartupTime   time.Duration // from pod scheduled to ready; default 30s
	Timeout       time.Duration // requests waiting longer fail; default 5s
	// DependsOn lists callee sets as "domain/set". App i of this set calls app
	// i mod n of a callee set of n apps.
	DependsOn []string
	// CallRatio is calls to each callee per request served. Default 1.
	CallRatio float64
	// CallLag is how much later the calls of this set's apps reach their
	// callees than the requests that cause them (fraud scoring trails payment
	// authorisation by 10-30 s): a callee's arrivals from this caller at time
	// t are CallRatio x the caller's arrivals at t - CallLag, rounded to whole
	// simulator ticks. Latency and errors still propagate to the caller at
	// once. In [0, MaxCallLag]; default 0.
	CallLag time.Duration
	// CPULimitRatio is the replicas' CPU limit as a multiple of their CPU
	// request (the request is CPUPerReplica): a Burstable pod may use CPU
	// above its request up to its limit when its node has cores to spare, and
	// metrics-server then reports a utilisation above 100% of the request,
	// which the HPA acts on. >= 1; 1 is a Guaranteed pod (limit = request).
	// Default DefaultCPULimitRatio.
	CPULimitRatio float64
	// Workload maps the set's apps to Kubernetes objects (see Config.Workload).
	Workload Workload
	// Discovered says the set is one workload found by its domain's
	// Discover, not written in the config.
	Discovered bool
	// Learn says the set's service time and startup time are learned from
	// what its Soldier observes (soldier.Learning): a discovered app whose
	// discover block and annotations set no service_time. ServiceTime and
	// StartupTime are then the priors used until then.
	Learn bool
	// Queries override the prometheus block's queries for the set's apps,
	// those with a Template; see Config.Queries.
	Queries PrometheusQueries
}

// DefaultCPULimitRatio is AppSet.CPULimitRatio's default, 2: a limit of
// twice the request is a common Burstable setting (request 500m, limit 1),
// and it lets the simulated HPA see a burst of up to twice its pods' request,
// as it would on a cluster whose pods may burst.
const DefaultCPULimitRatio = 2.0

// MaxCallLag is the longest AppSet.CallLag: the simulator keeps each lagged
// caller's arrivals over its lag.
const MaxCallLag = time.Hour

// Bounds of the numeric settings whose extremes would overflow the control
// loop's integers (replicas and nodes are int32 in the simulator), exhaust
// memory (the simulator keeps state per app, per tick of telemetry lag, per
// tick of node provisioning) or spin a daemon (a 1 ns tick). Package config
// rejects a config outside them; each is far beyond any real cluster.
const (
	// MaxReplicas bounds AppSet.MinReplicas and MaxReplicas.
	MaxReplicas = 1_000_000
	// MaxAppsPerSet bounds AppSet.Count; MaxApps bounds Config.AppCount.
	MaxAppsPerSet = 100_000
	MaxApps       = 200_000
	// MaxCores bounds Cluster.CapacityCores and NodeCores; MaxNodes bounds
	// the pool's nodes, CapacityCores / NodeCores, and ProvisionerBurst.
	MaxCores = 10_000_000
	MaxNodes = 1_000_000
	// MaxProvisionerRate bounds Cluster.ProvisionerRate, in nodes per minute.
	MaxProvisionerRate = 1_000_000
	// MinCPUPerReplica is Kubernetes' smallest CPU request, one millicore.
	MinCPUPerReplica = 0.001
	// MaxConcurrency bounds AppSet.Concurrency.
	MaxConcurrency = 100_000
	// MinTick and MaxTick bound the Commander's and the Soldiers' ticks.
	// MinTick is 1 ms, not more: the kill -9 test runs a Soldier at 5 ms so
	// that it commits a batch of steps several times a second. It keeps a
	// "1ns" typo from ticking tens of thousands of times a second.
	MinTick = time.Millisecond
	MaxTick = 24 * time.Hour
	// MaxStartupTime bounds AppSet.StartupTime and Cluster.NodeProvisionTime
	// (the simulator keeps a slot per tick of either).
	MaxStartupTime = 24 * time.Hour
	// MaxHeadroom bounds Commander.Headroom and Domain.Headroom.
	MaxHeadroom = 0.5
	// MaxPlanHold bounds Commander.PlanHold.
	MaxPlanHold = 24 * time.Hour
	// MaxTelemetryLag bounds Cluster.TelemetryLag (a slot per tick of lag).
	MaxTelemetryLag = time.Hour
	// MaxFallbackWindow bounds Fallback.Window (a score per Soldier tick).
	MaxFallbackWindow = 24 * time.Hour
	// MaxScenarioDuration bounds Scenario.Duration: a leap year.
	MaxScenarioDuration = 366 * 24 * time.Hour
	// MaxPeakRPS bounds Traffic.PeakRPS, in requests per second.
	MaxPeakRPS = 1e9
	// MaxEventFactor bounds Event.Multiplier and ServiceTimeFactor.
	MaxEventFactor = 1000
	// MaxPriority bounds Domain.Priority (tiers past MaxLadderTier share a
	// ladder anyway).
	MaxPriority = 1000
	// MaxWeight bounds Domain.Weight, Cluster.CostPerCoreHour and the reward
	// weights: sums and products of them stay finite.
	MaxWeight = 1_000_000
	// MaxRatio bounds the multiples a number of replicas or cores is scaled
	// by: Soldier.OverageCap, Kubernetes.HPAHeadroom, AppSet.CallRatio and
	// CPULimitRatio. An infinite product would make replica counts and HPA
	// bounds meaningless (a float-to-int conversion of +Inf is negative).
	MaxRatio = 1000
)

// NATS says where the message bus is and how to reach it securely. Secrets
// are never held here, only the paths of the files that hold them; the files
// are read when a daemon connects. At most one of TokenFile, NkeySeedFile and
// Credentials is set (one way to authenticate); none means no authentication.
// Paths are as written in the config, relative ones resolved against the
// config file's directory.
type NATS struct {
	URL string // empty: an embedded server (which runs without authentication)
	// TokenFile is the path to a file holding the authentication token
	// (surrounding whitespace trimmed). Empty: none.
	TokenFile string
	// NkeySeedFile is the path to a file holding the user's nkey seed
	// ("SU..."), the private half of the public key in the server config.
	// Empty: none.
	NkeySeedFile string
	// Credentials is the path to a .creds file (user JWT and nkey seed), for
	// servers run in operator (JWT) mode. Empty: none.
	Credentials string
	// TLS secures the connection. The zero value: plain TCP unless the URL
	// says tls://.
	TLS NATSTLS
	// SigningKey is the path to a file holding the nkey seed the Commander
	// signs every directive with (ed25519). Only the Commander reads it.
	// Empty: directives go unsigned.
	SigningKey string
	// DirectiveKeys are the public nkeys ("U...") whose signature a Soldier
	// requires on every directive; two during a key rollover, at most
	// MaxDirectiveKeys. Empty: Soldiers accept unsigned directives.
	DirectiveKeys []string
	// OverrideSigningKey is the path to a file holding the nkey seed the
	// operator's CLI (regiment override) signs every override with. Only the
	// CLI reads it. Empty: overrides go unsigned.
	OverrideSigningKey string
	// OverrideKeys are the public nkeys ("U...") whose signature the
	// Commander and the Soldiers require on every override, live or stored;
	// at most MaxDirectiveKeys. Empty: overrides are not checked.
	OverrideKeys []string
	// Replicas is how many servers of a NATS cluster hold each of the
	// key-value buckets (directives, overrides) the Commander creates: 1 to
	// MaxNATSReplicas, at most the cluster's size. Default 1. The Commander's
	// embedded server is a single server and always uses 1.
	Replicas int
}

// Equal reports whether n and o say the same.
func (n NATS) Equal(o NATS) bool {
	return n.URL == o.URL && n.TokenFile == o.TokenFile && n.NkeySeedFile == o.NkeySeedFile &&
		n.Credentials == o.Credentials && n.TLS == o.TLS && n.SigningKey == o.SigningKey &&
		slices.Equal(n.DirectiveKeys, o.DirectiveKeys) && n.Replicas == o.Replicas &&
		n.OverrideSigningKey == o.OverrideSigningKey && slices.Equal(n.OverrideKeys, o.OverrideKeys)
}

// MaxDirectiveKeys is the most directive keys trusted at once.
const MaxDirectiveKeys = 4

// MaxNATSReplicas is JetStream's limit on a stream's replicas.
const MaxNATSReplicas = 5

// NATSTLS is the TLS part of NATS. TLS is on when Enabled.
type NATSTLS struct {
	Enabled    bool   // the config has a tls block, even an empty one (system roots)
	CAFile     string // PEM roots to verify the server with; empty: system roots
	CertFile   string // PEM client certificate, for servers that verify clients; with KeyFile
	KeyFile    string // PEM key of CertFile
	ServerName string // name to verify the server certificate against; empty: the URL's host
}

// Store says where episodes are kept.
type Store struct {
	Path      string        // bbolt file; default "data/regiment.db"
	Retention time.Duration // steps older than this are pruned; default 168h
}

// App is one expanded app of an AppSet.
type App struct {
	ID     int    // index in Config.Apps()
	Name   string // "domain/app"
	Domain int    // index in Config.Domains
	Set    int    // index in Domain.AppSets
	*AppSet
	Deps []int // callee app ids
}

// Apps expands every app set into apps, in domain then set order, resolving
// dependencies to app ids. It assumes a validated config.
func (c *Config) Apps() []App {
	var apps []App
	first := map[string]int{} // "domain/set" -> id of its first app
	for di := range c.Domains {
		d := &c.Domains[di]
		for si := range d.AppSets {
			s := &d.AppSets[si]
			first[d.Name+"/"+s.Name] = len(apps)
			for i := 0; i < s.Count; i++ {
				apps = append(apps, App{ID: len(apps), Name: d.Name + "/" + s.AppName(i), Domain: di, Set: si, AppSet: s})
			}
		}
	}
	for i := range apps {
		a := &apps[i]
		idx := i - first[c.Domains[a.Domain].Name+"/"+a.AppSet.Name]
		for _, dep := range a.DependsOn {
			f, ok := first[dep]
			if !ok {
				continue
			}
			n := setByKey(c, dep).Count
			a.Deps = append(a.Deps, f+idx%n)
		}
	}
	return apps
}

// AppName is the name of app i of the set.
func (s *AppSet) AppName(i int) string {
	if s.Count == 1 {
		return s.Name
	}
	return fmt.Sprintf("%s-%d", s.Name, i)
}

// ModeOf is the Soldier mode of domain di: its own, else the soldier
// block's.
func (c *Config) ModeOf(di int) Mode {
	if m := c.Domains[di].Mode; m != "" {
		return m
	}
	return c.Soldier.Mode
}

// Domain returns the index of the named domain, or -1.
func (c *Config) Domain(name string) int {
	for i := range c.Domains {
		if c.Domains[i].Name == name {
			return i
		}
	}
	return -1
}

// DomainNames is the names of the domains, in order.
func (c *Config) DomainNames() []string {
	names := make([]string, len(c.Domains))
	for i, d := range c.Domains {
		names[i] = d.Name
	}
	return names
}

// AppCount is the number of apps all sets expand to.
func (c *Config) AppCount() int {
	n := 0
	for _, d := range c.Domains {
		for _, s := range d.AppSets {
			n += s.Count
		}
	}
	return n
}

func setByKey(c *Config, key string) *AppSet {
	for di := range c.Domains {
		d := &c.Domains[di]
		for si := range d.AppSets {
			if d.Name+"/"+d.AppSets[si].Name == key {
				return &d.AppSets[si]
			}
		}
	}
	return nil
}

// Reward holds the operator's reward weights by level, as weight name to
// value (names as in package reward: CommanderWeightNames, ...). Weights not
// named keep their defaults.
type Reward struct {
	Commander, Soldier, Service map[string]float64
}

// Retick is the tick in force after a Reload: now, the reloaded config's
// tick, resetting t to it when it differs from tick, the one t runs at.
// The Commander's and the Soldiers' Run loops call it on every Reload.
func Retick(t *time.Ticker, tick, now time.Duration) time.Duration {
	if now != tick {
		t.Reset(now)
	}
	return now
}
