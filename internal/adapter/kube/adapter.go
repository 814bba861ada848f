package kube

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regimentd/regiment/internal/adapter/promclient"
	"github.com/regimentd/regiment/internal/core/domains"
)

// Client returns a clientset for the kubeconfig file at path, or for the
// in-cluster service account when path is "in-cluster", whose own rate
// limit (ClientQPS) lets k's write rate limit through.
func Client(path string, k domains.Kubernetes) (kubernetes.Interface, error) {
	return newClient(path, k, "client", func(rc *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(rc) })
}

// DynamicClient is Client's dynamic counterpart, for resources without a
// typed client (Karpenter's NodePools).
func DynamicClient(path string, k domains.Kubernetes) (dynamic.Interface, error) {
	return newClient(path, k, "dynamic client", func(rc *rest.Config) (dynamic.Interface, error) { return dynamic.NewForConfig(rc) })
}

// newClient is the client what that build makes for the kubeconfig at
// path (restConfig).
func newClient[C any](path string, k domains.Kubernetes, what string, build func(*rest.Config) (C, error)) (C, error) {
	var zero C
	rc, err := restConfig(path, k)
	if err != nil {
		return zero, err
	}
	c, err := build(rc)
	if err != nil {
		return zero, fmt.Errorf("kube: %s: %w", what, err)
	}
	return c, nil
}

func restConfig(path string, k domains.Kubernetes) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if path == InCluster {
		rc, err = rest.InClusterConfig()
	} else {
		rc, err = clientcmd.BuildConfigFromFlags("", path)
	}
	if err != nil {
		return nil, fmt.Errorf("kube: client config %q: %w", path, err)
	}
	rc.UserAgent = "regiment"
	rc.QPS, rc.Burst = ClientQPS(k)
	return rc, nil
}

// ClientQPS is the client-side rate limit (rest.Config QPS and Burst) for a
// process writing at k's write rate limit. client-go's defaults, 5/s burst
// 10, would throttle first: every write is a GET and an UPDATE (a conflict
// adds two more), and changes the cluster already holds cost a GET. So the
// client allows two requests per write plus 10/s and 20 for leases,
// informer re-lists and the Reverter: QPS = 2 x writes_per_second + 10,
// Burst = 2 x write_burst + 20. k must have Defaults applied.
func ClientQPS(k domains.Kubernetes) (qps float32, burst int) {
	return float32(2*k.WritesPerSecond + 10), 2*k.WriteBurst + 20
}

// InCluster, as a kubeconfig path, selects the pod's service account.
const InCluster = "in-cluster"

// Adapter is what a Soldier needs from a cluster: an Observer, an Actuator
// and the Soldier's Lease, configured from the cluster config.
type Adapter struct {
	Observer *Observer
	Actuator *Actuator
	Lease    *Lease
	// Events records Events on the workloads of the apps the Soldier could
	// not write (Events.Report with each tick's soldier.TickResult.Failing).
	Events   *Events
	hold     atomic.Bool // Hold
	domain   string
	restorer *Restorer // the domain's objects, for Restore
}

// Restore gives the domain's apps back to their teams (Restorer): the
// objects its Soldier marked in the namespaces of its apps (and of its
// discover block) get their original spec, and the Actuator records the
// originals again before its next write. For a Soldier whose mode turned
// off; Hold must be on, so that no reassertion takes the apps back.
func (a *Adapter) Restore(ctx context.Context) ([]Restored, error) {
	done, err := a.restorer.Restore(ctx, a.domain)
	a.Actuator.ForgetMarks()
	return done, err
}

// Hold, while on, keeps a lease renewed after a lapse from reasserting the
// Actuator's targets: the Soldier is in a mode that writes nothing
// (recommend, shadow or off), though it wrote before a reload changed its
// mode. Safe for concurrent use with Run.
func (a *Adapter) Hold(on bool) { a.hold.Store(on) }

// NewAdapter maps domain's apps of cfg (validated) to workloads and returns
// the Observer, Actuator and Lease for its Soldier; identity names the
// lease holder (say the pod name). A domain in recommend mode at start is
// observed as such (ObserverConfig.Recommend); its Soldier never calls the
// Actuator. It starts nothing.
func NewAdapter(client kubernetes.Interface, cfg *domains.Config, domain, identity string) (*Adapter, error) {
	targets, err := Targets(cfg, domain)
	if err != nil {
		return nil, err
	}
	k := cfg.Kubernetes
	lease := NewLease(client, k.LeaseNamespace, SoldierLeaseName(domain), identity, k.LeaseDuration)
	claims := &Claims{}
	act, err := NewActuator(client, ActuatorConfig{
		Actuation: cfg.Soldier.Actuation, Targets: targets, HPAHeadroom: k.HPAHeadroom, Lease: lease.Ref(), Domain: domain,
		WritesPerSecond: k.WritesPerSecond, Burst: k.WriteBurst, Claims: claims,
	})
	if err != nil {
		return nil, err
	}
	var prom *promclient.Client
	if cfg.Prometheus.URL != "" {
		if prom, err = promclient.New(cfg.Prometheus); err != nil {
			return nil, err
		}
	}
	callers, err := CallerTargetsOf(cfg, domain)
	if err != nil {
		return nil, err
	}
	ocfg := ObserverConfig{
		Actuation: cfg.Soldier.Actuation, Targets: targets, Callers: callers, Prometheus: prom,
		MaxAge: cfg.Prometheus.MaxAge, TargetUtilisation: cfg.Soldier.TargetUtilisation,
		Recommend: cfg.ModeOf(cfg.Domain(domain)).Recommends(), Claims: claims,
	}
	restorer := NewRestorer(client, namespaces(targets))
	restorer.Kinds = []ObjectKind{KindHPA}
	if cfg.Soldier.Actuation == domains.ActuateReplicas {
		restorer.Kinds = workloadKinds(targets)
	}
	if d := cfg.Domains[cfg.Domain(domain)].Discover; d != nil {
		ocfg.Namespaces, ocfg.Kinds = d.Namespaces, d.Kinds // where discovery may add apps
		restorer.Namespaces = mergeNamespaces(restorer.Namespaces, d.Namespaces)
		if cfg.Soldier.Actuation == domains.ActuateReplicas && slices.Contains(d.Kinds, domains.KindStatefulSet) &&
			!slices.Contains(restorer.Kinds, KindStatefulSet) {
			restorer.Kinds = append(restorer.Kinds, KindStatefulSet)
		}
	}
	obs := NewObserver(client, ocfg)
	act.cfg.Owners = obs // an app another controller scales is not written
	ev := NewEvents(client, "regiment-soldier-"+domain, targets, 0)
	return &Adapter{Observer: obs, Actuator: act, Lease: lease, Events: ev, domain: domain, restorer: restorer}, nil
}

// WatchKEDA makes the Observer watch KEDA ScaledObjects through dyn, when
// the cluster serves them and the Soldier may list them (ForeignOwner).
// Call it before Run.
func (a *Adapter) WatchKEDA(dyn dynamic.Interface) { a.Observer.cfg.Dynamic = dyn }

// SetApps maps domain's apps of cfg (validated; after
// domains.Config.WithDiscovered, say) to workloads and makes the Observer
// and the Actuator act on them from their next call. Call it between two
// Soldier ticks (soldier.Soldier.ReloadApps does). An app of a namespace or
// kind the Observer does not watch is an error, and changes nothing.
func (a *Adapter) SetApps(cfg *domains.Config, domain string) error {
	targets, err := Targets(cfg, domain)
	if err != nil {
		return err
	}
	callers, err := CallerTargetsOf(cfg, domain)
	if err != nil {
		return err
	}
	if err := a.Observer.SetTargets(targets); err != nil {
		return err
	}
	a.Observer.SetCallers(callers)
	a.Actuator.SetTargets(targets)
	a.Events.SetTargets(targets)
	return nil
}

// workloadKinds are the kinds of ts's workloads: the Soldier may list only
// those (the chart grants StatefulSets only to domains that have some).
func workloadKinds(ts []Target) []ObjectKind {
	kinds := []ObjectKind{KindDeployment}
	for _, t := range ts {
		if t.Kind == domains.KindStatefulSet {
			return append(kinds, KindStatefulSet)
		}
	}
	return kinds
}

// mergeNamespaces is a with b's namespaces not in a appended.
func mergeNamespaces(a, b []string) []string {
	out := slices.Clone(a)
	for _, ns := range b {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}
