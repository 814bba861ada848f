package kube

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regimentd/regiment/domains"
)

// Client returns a clientset for the kubeconfig file at path, or for the
// in-cluster service account when path is "in-cluster".
func Client(path string) (kubernetes.Interface, error) {
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
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kube: client: %w", err)
	}
	return c, nil
}

// InCluster, as a kubeconfig path, selects the pod's service account.
const InCluster = "in-cluster"

// Adapter is what a Soldier needs from a cluster: an Observer, an Actuator
// and the Soldier's Lease, configured from the cluster config.
type Adapter struct {
	Observer *Observer
	Actuator *Actuator
	Lease    *Lease
}

// NewAdapter maps domain's apps of cfg (validated) to workloads and returns
// the Observer, Actuator and Lease for its Soldier; identity names the
// lease holder (say the pod name). It starts nothing.
func NewAdapter(client kubernetes.Interface, cfg *domains.Config, domain, identity string) (*Adapter, error) {
	targets, err := Targets(cfg, domain)
	if err != nil {
		return nil, err
	}
	k := cfg.Kubernetes
	lease := NewLease(client, k.LeaseNamespace, SoldierLeaseName(domain), identity, k.LeaseDuration)
	act, err := NewActuator(client, ActuatorConfig{
		Actuation: cfg.Soldier.Actuation, Targets: targets, HPAHeadroom: k.HPAHeadroom, Lease: lease.Ref(),
	})
	if err != nil {
		return nil, err
	}
	var prom *Prometheus
	if cfg.Prometheus.URL != "" {
		if prom, err = NewPrometheus(cfg.Prometheus); err != nil {
			return nil, err
		}
	}
	obs := NewObserver(client, ObserverConfig{
		Actuation: cfg.Soldier.Actuation, Targets: targets, Prometheus: prom,
		MaxAge: cfg.Prometheus.MaxAge, TargetUtilisation: cfg.Soldier.TargetUtilisation,
	})
	return &Adapter{Observer: obs, Actuator: act, Lease: lease}, nil
}

// Run runs the informers and renews the lease until ctx ends; after a lapse
// of the lease the Actuator reasserts its targets. Failures are logged to log.
func (a *Adapter) Run(ctx context.Context, log hclog.Logger) error {
	var wg sync.WaitGroup
	wg.Go(func() { a.Observer.Run(ctx) })
	a.Lease.Run(ctx,
		func(err error) { log.Warn("lease renewal failed", "lease", a.Lease.Ref(), "error", err) },
		func(ctx context.Context) {
			log.Warn("lease renewed after a lapse: reasserting targets", "lease", a.Lease.Ref())
			if err := a.Actuator.Reassert(ctx); err != nil {
				log.Error("reassert targets failed", "error", err)
			}
		})
	wg.Wait()
	return nil
}
