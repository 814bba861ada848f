package daemon

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/kube"
	"github.com/regimentd/regiment/soldier"
)

// newKube connects to the cluster of --kubeconfig and maps the domain's
// apps to their workloads. Its lease holder is the pod (host) name.
func (p *Soldier) newKube(domain string) (*kube.Adapter, error) {
	kube.RouteKlog(p.log.Named("client-go"))
	client, err := kube.Client(p.opts.Kubeconfig)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	ad, err := kube.NewAdapter(client, p.cfg, domain, fmt.Sprintf("%s-%d", host, os.Getpid()))
	if err != nil {
		return nil, err
	}
	p.log.Info("kubernetes adapter ready", "actuation", p.cfg.Soldier.Actuation, "lease", ad.Lease.Ref(),
		"prometheus", p.cfg.Prometheus.URL)
	if p.cfg.Prometheus.TLS.InsecureSkipVerify {
		p.log.Warn("prometheus tls insecure_skip_verify is set: any server certificate is accepted", "prometheus", p.cfg.Prometheus.URL)
	}
	return ad, nil
}

// kubeView is the Soldier's view of a real cluster. After each observation
// it reads the Observer's staleness flags: it warns when apps' metrics turn
// stale or missing (the Observer then holds last values or size-holding
// stand-ins) and when they recover, and says which apps at Debug per tick.
type kubeView struct {
	*kube.Adapter
	log   hclog.Logger
	stale int // apps with a metric not fresh at the last observation
}

func (v *kubeView) Observe(ctx context.Context, obs *soldier.Observation) error {
	if err := v.Observer.Observe(ctx, obs); err != nil {
		return err
	}
	var names []string
	for i, st := range v.Observer.Status() {
		if st.Stale() {
			names = append(names, fmt.Sprintf("%d", i))
		}
	}
	switch {
	case len(names) > 0 && v.stale == 0:
		v.log.Warn("app metrics stale or missing: holding last values or current sizes", "apps", len(names))
	case len(names) == 0 && v.stale > 0:
		v.log.Info("app metrics fresh again")
	}
	if len(names) > 0 {
		v.log.Debug("stale app metrics", "app_indexes", strings.Join(names, ","))
	}
	v.stale = len(names)
	return nil
}

func (v *kubeView) Apply(ctx context.Context, changes []soldier.Change) error {
	return v.Actuator.Apply(ctx, changes)
}
