package domains

import (
	"strconv"
	"strings"
	"time"
)

// Kubernetes says where the apps' workloads live and how a Soldier's hold on
// them is kept. It matters only to daemons run with a kubeconfig.
type Kubernetes struct {
	// Namespace holds the workloads of apps that name none. Default "default".
	Namespace string
	// LeaseNamespace holds the Soldiers' leases (and the Commander's
	// election lease). Default: Namespace.
	LeaseNamespace string
	// LeaseDuration is how long a Soldier's lease lasts without renewal;
	// after it, a Reverter gives the Soldier's HPAs or workloads back their
	// original spec (kube.AnnotationOriginal). Default 40s.
	LeaseDuration time.Duration
	// HPAHeadroom maps a replica target T to HPA bounds in hpa-bounds
	// actuation: min = T, max = min(max_replicas, ceil(T x (1 + HPAHeadroom))).
	// A fraction >= 0; default 0.5.
	HPAHeadroom float64
	// WritesPerSecond and WriteBurst are a Soldier's write rate limit, a
	// token bucket every replica or HPA write draws from: WriteBurst writes
	// at once, then WritesPerSecond. Defaults DefaultWritesPerSecond and
	// DefaultWriteBurst. The client's own limiter is raised to match
	// (kube.ClientQPS).
	WritesPerSecond float64
	WriteBurst      int
	// PoolNodeSelector selects the contested pool's nodes, equality only
	// ("k=v[,k=v]"). Set, the leading Commander shares out what the pool
	// may grow to (Cluster.CapacityCores, within PoolMaxCores and Karpenter's
	// limits) less what others request on its nodes (pool.Watcher).
	// Empty (the default): CapacityCores is the pool.
	PoolNodeSelector string
	// PoolMaxCores is the most node cores the pool may grow to (a
	// cluster-autoscaler's max nodes x node cores), capping what its nodes
	// give; 0 (the default): none besides a Karpenter NodePool's limits.
	PoolMaxCores float64
	// BalloonPodCores is the CPU of one balloon pod, cores: set (> 0), the
	// leading Commander holds its capacity plan on the pool with a
	// Deployment of that many-core placeholder pods of BalloonPriorityClass
	// (pool.Balloons). Needs PoolNodeSelector. 0 (the default): the plan is
	// published but not held on the cluster.
	BalloonPodCores float64
	// BalloonPriorityClass is the balloon pods' PriorityClass, which must
	// exist with a negative value. Default DefaultBalloonPriorityClass.
	BalloonPriorityClass string
	// BalloonImage is the balloon pods' image. Default DefaultBalloonImage.
	BalloonImage string
	// BalloonTolerations let the balloon pods onto a tainted pool. Without
	// balloons (BalloonPodCores 0) they do nothing. Default none.
	BalloonTolerations []Toleration
}

// Toleration is one toleration of the balloon pods, as kubectl's taint
// syntax KEY[=VALUE][:EFFECT] writes it (the config reads that syntax):
// "dedicated=apps:NoSchedule" tolerates that taint, "gpu:NoSchedule" taint
// gpu of any value, "spot" taint spot of any value and effect.
type Toleration struct {
	Key    string // a qualified name (a label key)
	Value  string // a label value; "" tolerates any value (operator Exists)
	Effect string // NoSchedule, PreferNoSchedule or NoExecute; "" every effect
}

// TaintEffects are the effects a Toleration may name, as a taint does.
var TaintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

// String is t in kubectl's taint syntax, as the config reads it.
func (t Toleration) String() string {
	s := t.Key
	if t.Value != "" {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + t.Effect
	}
	return s
}

// The balloon pods' defaults: the chart's PriorityClass (value -1000) and
// the Kubernetes pause image.
const (
	DefaultBalloonPriorityClass = "regiment-balloon"
	DefaultBalloonImage         = "registry.k8s.io/pause:3.10"
)

// The default write rate limit, sized for a domain of 500 apps at the
// default soldier tick (10s) and max_writes_per_tick (200): after a spike a
// tick may write 200 apps; 100 go at once from the burst and the other 100
// take 100 / 50 = 2 s, a fifth of the tick. Even all 500 apps (with
// max_writes_per_tick = 500) take 100 + 400 / 50 s = 8 s, within the tick.
// At the former 10/s, burst 20, 200 writes took 18 s: longer than the tick.
const (
	DefaultWritesPerSecond = 50.0
	DefaultWriteBurst      = 100
)

// WorkloadKind is the kind of workload an app is.
type WorkloadKind string

const (
	KindDeployment  WorkloadKind = "Deployment"
	KindStatefulSet WorkloadKind = "StatefulSet"
)

// AppIndex is the placeholder for an app's index within its set in
// Workload names and selectors.
const AppIndex = "{i}"

// Workload maps the apps of a set to Kubernetes objects. In Name, Selector
// and HPA, "{i}" stands for the app's index within its set; a set of more
// than one app needs it in Name, Selector and HPA when they are written.
type Workload struct {
	Kind      WorkloadKind // default Deployment
	Name      string       // default: the app's name ("checkout", or "checkout-3" in a set)
	Namespace string       // default: Kubernetes.Namespace
	// Selector selects the app's pods, equality only: "k=v[,k=v]".
	// Default "app=<Name>".
	Selector string
	HPA      string // the app's HorizontalPodAutoscaler; default: Name
}

// WorkloadRef is one app's resolved Kubernetes objects.
type WorkloadRef struct {
	Kind      WorkloadKind
	Namespace string
	Name      string
	Selector  string
	HPA       string
}

// Workload resolves app a's objects: its set's Workload with "{i}" replaced
// and defaults filled from the app's name and c.Kubernetes. c must have
// Defaults applied.
func (c *Config) Workload(a App) WorkloadRef {
	w := a.AppSet.Workload
	short := a.Name[strings.IndexByte(a.Name, '/')+1:]
	i := strconv.Itoa(a.ID - c.firstOfSet(a))
	sub := func(s, def string) string {
		if s == "" {
			return def
		}
		return strings.ReplaceAll(s, AppIndex, i)
	}
	r := WorkloadRef{Kind: w.Kind, Namespace: w.Namespace, Name: sub(w.Name, short)}
	if r.Kind == "" {
		r.Kind = KindDeployment
	}
	if r.Namespace == "" {
		r.Namespace = c.Kubernetes.Namespace
	}
	r.Selector = sub(w.Selector, "app="+r.Name)
	r.HPA = sub(w.HPA, r.Name)
	return r
}

// firstOfSet is the id of the first app of a's set.
func (c *Config) firstOfSet(a App) int {
	id := 0
	for di := range c.Domains {
		for si := range c.Domains[di].AppSets {
			if di == a.Domain && si == a.Set {
				return id
			}
			id += c.Domains[di].AppSets[si].Count
		}
	}
	return id
}
