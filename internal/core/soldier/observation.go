package soldier

import "github.com/regimentd/regiment/internal/core/domains"

// App is the static description of one app of the domain.
type App struct {
	Index    int     // position in the domain
	Name     string  // "domain/app"
	CPU      float64 // cores per replica
	Min, Max int32   // replica bounds
	// Capacity is the requests per second one replica serves at full
	// utilisation: concurrency / service time.
	Capacity float64
	// Concurrency is the requests one replica serves at once: a replica is
	// that many servers of the app's queue (below 1, as in a zero App, is 1).
	Concurrency float64
	// Group is the index of the app's apps block in its domain
	// (domains.App.Set): apps of a group share their shape and traffic.
	Group int
	// Learn says the app's service time is learned from its observations
	// (domains.AppSet.Learn, learn.go): Capacity is the prior's until then.
	Learn bool
}

// Apps describes the apps of domain di of cfg, in config order.
func Apps(cfg *domains.Config, di int) []App {
	var out []App
	for _, a := range cfg.Apps() {
		if a.Domain != di {
			continue
		}
		out = append(out, App{
			Index: len(out), Name: a.Name, CPU: a.CPUPerReplica,
			Min: int32(a.MinReplicas), Max: int32(a.MaxReplicas),
			Capacity: float64(a.Concurrency) / a.ServiceTime.Seconds(), Concurrency: float64(a.Concurrency), Group: a.Set, Learn: a.Learn,
		})
	}
	return out
}

// Caller is an app that calls another: its id in domains.Config.Apps, and
// the calls it sends per request it serves (call_ratio).
type Caller struct {
	App   int
	Ratio float64
}

// Callers lists, per app of domain di of cfg in Apps order, the apps of cfg,
// in any domain, that call it (domains.App.Deps); nil for an app nobody calls.
func Callers(cfg *domains.Config, di int) [][]Caller {
	all := cfg.Apps()
	local := map[int]int{} // app id -> index in the domain
	for _, a := range all {
		if a.Domain == di {
			local[a.ID] = len(local)
		}
	}
	out := make([][]Caller, len(local))
	for _, a := range all {
		for _, d := range a.Deps {
			if i, ok := local[d]; ok {
				out[i] = append(out[i], Caller{App: a.ID, Ratio: a.CallRatio})
			}
		}
	}
	return out
}

// CallerRPS is the calls callers send as of their request rates, 1/s:
// the sum of Ratio x rps(App) (AppObservation.CallerRPS).
func CallerRPS(callers []Caller, rps func(app int) float64) float64 {
	calls := 0.0
	for _, c := range callers {
		calls += c.Ratio * rps(c.App)
	}
	return calls
}

// AppObservation is one app's telemetry at a tick.
type AppObservation struct {
	RPS float64 // arrivals, 1/s
	// CallerRPS is the requests the app's callers send it as of their
	// latest RPS: the sum over its callers (domains.AppSet.DependsOn, in any
	// domain) of call_ratio x the caller's RPS, 1/s; 0 with no callers or
	// none read. Calls reach a callee call_lag after the requests that cause
	// them, so where the lag is at least the metrics' age it is the callee's
	// arrivals now, fresher than RPS (see Arrivals).
	CallerRPS float64
	P99       float64 // seconds
	ErrorRate float64 // [0, 1]
	// CPUUtil is the ready replicas' CPU use over their CPU request, as
	// metrics-server reports it: above 1 when burstable pods use CPU beyond
	// their request (a slowed service or a burst), up to their limit.
	CPUUtil float64
	// MemUtil is the pods' memory working set over their memory request,
	// >= 0; 0 when unknown.
	MemUtil float64
	// RestartRate is the app's container restarts per minute, >= 0.
	RestartRate float64
	// StartupSeconds is the median time the app's ready pods took from
	// creation to ready, seconds; 0 when unknown (no ready pod observed, or
	// an observer that does not see pods).
	StartupSeconds float64
	Ready          int32
	Starting       int32
	Pending        int32
	Replicas       int32 // desired replicas currently set on the workload
	// Blind says the app's metrics could not be read (the observer reports
	// stand-ins): the executor holds its target rather than size it blind.
	Blind bool
	// Missing says the app's workload (or, in hpa-bounds, its HPA) is not
	// in the cluster: the executor holds it and nothing is written to it.
	Missing bool
	// ForeignOwner names another controller that sets the app's replicas
	// ("hpa/web", "field-manager/argocd-controller:.spec.replicas"; see
	// kube.ForeignOwner); "" when none. The executor leaves such an app
	// alone: no writes, its target follows Replicas.
	ForeignOwner string
	// HPAMin and HPAMax are the bounds of the app's own HPA, the cluster's
	// autoscaler, as observed in recommend mode; 0 when not observed.
	HPAMin, HPAMax int32
}

// Observation is the domain's telemetry at a tick.
type Observation struct {
	Apps []AppObservation // indexed like the domain's Apps
	P99  float64          // the domain's merged p99, seconds
	// ErrorRate is the domain's failed share of requests, [0, 1].
	ErrorRate float64
}

// Arrivals is the request rate the Soldier sizes an app for, 1/s: its own
// RPS, or the calls its callers send it when more (they lead on a rise; on a
// fall, RPS holds until the app's own figures fall too).
func (o *AppObservation) Arrivals() float64 { return max(o.RPS, o.CallerRPS) }

// Load is the requests per second app a serves, 1/s: its Arrivals, or the
// work its ready replicas do (ready x CPU utilisation x capacity) when more,
// which sees a service slowed beyond its configured service time.
func (o *AppObservation) Load(a *App) float64 {
	return max(o.Arrivals(), float64(o.Ready)*o.CPUUtil*a.Capacity)
}

// ReplicasAt is the replicas that would serve Load at utilisation util,
// before rounding: Arrivals over util's share of a replica's capacity, or the
// ready replicas' CPU use over util when more.
func (o *AppObservation) ReplicasAt(a *App, util float64) float64 {
	return max(o.Arrivals()/(a.Capacity*util), float64(o.Ready)*o.CPUUtil/util)
}

// cores is the CPU the replicas in targets request.
func cores(apps []App, targets []int32) float64 {
	c := 0.0
	for i, a := range apps {
		c += float64(targets[i]) * a.CPU
	}
	return c
}
