package sim

import "time"

// Telemetry is what a policy sees of the cluster at one tick. The simulator
// hands out telemetry that is Cluster.TelemetryLag old, as a metrics pipeline
// would. Slices are indexed by app id (domains.Config.Apps order) and domain
// index; they are owned by the simulator and valid until the next Step.
type Telemetry struct {
	At      time.Time
	Apps    []AppTelemetry
	Domains []DomainTelemetry
	Cluster ClusterTelemetry

	mix *mixture // DomainP99's inputs; nil outside a Sim
}

// CeilingBound says domain di breaches only at its apps' ceilings: some app
// breaches and every one that does has max_replicas ready
// (reward.DomainOutcome.CeilingBound).
func (t *Telemetry) CeilingBound(di int) bool {
	d := &t.Domains[di]
	return d.BreachedApps > 0 && d.BreachedAtMax == d.BreachedApps
}

// DomainP99 is the p99 of domain di's merged response-time distribution at
// this tick, seconds: its apps' response times, each weighted by its
// arrival rate. It is solved on the first call and kept, so a policy that
// never reads it (hpa, oracle) does not pay for it; like the rest of the
// telemetry, it is not safe for concurrent use. 0 for telemetry built
// outside a Sim.
//
// The solve starts from the previous tick's p99 when that was solved, so
// its last bits (within 1e-15 relative) depend on whether it was: a run
// that reads every tick's, as the regiment policy and the evaluation do,
// reads the same bits whenever it reads them.
func (t *Telemetry) DomainP99(di int) float64 {
	if t.mix == nil {
		return 0
	}
	return t.mix.p99(t.Apps, di)
}

// AppTelemetry is one app's state over one tick.
type AppTelemetry struct {
	RPS       float64 // arrivals, external plus dependency calls, 1/s
	P99       float64 // response time p99 including callee latency, seconds
	ErrorRate float64 // failed share of arrivals (timeouts, callee errors), [0, 1]
	CPUUtil   float64 // busy share of ready capacity, [0, 1]
	Backlog   float64 // requests queued beyond the steady state
	Ready     int32   // replicas serving
	Starting  int32   // replicas scheduled, not yet ready
	Pending   int32   // replicas waiting for node capacity
	Target    int32   // replicas last requested

	// CPURequestUtil is the ready replicas' CPU use over their CPU request,
	// [0, AppSet.CPULimitRatio]: metrics-server's utilisation, which the HPA
	// scales on. It is arrivals over the request's worth of capacity, so
	// above 1 when demand exceeds what the replicas request (burstable pods
	// use CPU up to their limit); CPUUtil is the same reading capped at 1.
	CPURequestUtil float64
}

// Replicas is every replica that exists: ready, starting and pending.
func (a *AppTelemetry) Replicas() int32 { return a.Ready + a.Starting + a.Pending }

// DomainTelemetry aggregates one domain's apps over one tick.
type DomainTelemetry struct {
	RPS          float64 // external arrivals plus calls into the domain, 1/s
	ErrorRate    float64 // failed share of the domain's arrivals, [0, 1]
	CoresUsed    float64 // cores of scheduled (ready and starting) replicas
	CPUUtil      float64 // busy cores over ready cores, [0, 1]
	Ready        int32
	Starting     int32
	Pending      int32
	BreachedApps int32 // apps over the SLO latency or error budget
	// BreachedAtMax is, of BreachedApps, those with max_replicas ready:
	// breaches no allocation serves (Metrics.BreachAppMinutesAtMax).
	BreachedAtMax int32
}

// ClusterTelemetry is the node pool over one tick.
type ClusterTelemetry struct {
	Nodes             int32   // ready nodes
	ProvisioningNodes int32   // started, not yet ready
	QueuedNodes       int32   // requested, not started: the provisioner's queue and, with cluster-autoscaler, its group's launches at the cloud
	FreeCores         float64 // replica cores the ready nodes still hold: free node cores x (1 - packing_loss)
	PendingPods       int32
	CostPerHour       float64 // of ready and provisioning nodes

	// CapacityTargetCores is the capacity target in force (SetCapacityTarget),
	// cores; 0 without one.
	CapacityTargetCores float64
}

func (t *Telemetry) copyFrom(src *Telemetry) {
	t.At = src.At
	copy(t.Apps, src.Apps)
	copy(t.Domains, src.Domains)
	t.Cluster = src.Cluster
	t.mix.copyFrom(src.mix)
}
