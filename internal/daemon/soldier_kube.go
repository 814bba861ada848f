package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// newKube connects to the cluster of --kubeconfig and maps the domain's
// apps to their workloads. Its lease holder is leaseIdentity.
func (p *SoldierProcess) newKube(domain string) (*kube.Adapter, error) {
	client, err := p.kubeClient()
	if err != nil {
		return nil, err
	}
	ad, err := kube.NewAdapter(client, p.cfg, domain, p.leaseIdentity())
	if err != nil {
		return nil, err
	}
	if dyn, err := kube.DynamicClient(p.opts.Kubeconfig, p.cfg.Kubernetes); err != nil {
		p.log.Warn("keda scaledobjects not watched", "error", err)
	} else {
		ad.WatchKEDA(dyn) // a ScaledObject on a workload owns its replicas
	}
	p.log.Info("kubernetes adapter ready", "actuation", p.cfg.Soldier.Actuation, "lease", ad.Lease.Ref(),
		"prometheus", p.cfg.Prometheus.URL)
	if p.cfg.Prometheus.TLS.InsecureSkipVerify {
		p.log.Warn("prometheus tls insecure_skip_verify is set: any server certificate is accepted", "prometheus", p.cfg.Prometheus.URL)
	}
	return ad, nil
}

// leaseIdentity names this Soldier as the holder of its domain's lease: the
// host (the pod's name) and the store's directory, which one process at a
// time holds (the store's file lock). A Soldier restarted on the same host
// and directory, after a kill -9 say, is the holder its predecessor was: it
// takes the lease back at once, with the decision state its predecessor
// saved, instead of waiting out the lease. Without a directory of its own,
// the host and the process id.
func (p *SoldierProcess) leaseIdentity() string {
	host, _ := os.Hostname()
	if p.deps.Store != nil || p.opts.DataDir == "" {
		return fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	dir, err := filepath.Abs(p.opts.DataDir)
	if err != nil {
		dir = p.opts.DataDir
	}
	return host + ":" + dir
}

// lead ticks only while this Soldier holds its domain's lease, so that two
// Soldiers of one domain (a rollout, a stuck pod) never both act; the other
// waits, not ready, with regiment_soldier_leader at 0. A Soldier leading
// again after another led takes its targets in force from the cluster.
func (p *SoldierProcess) lead(ctx context.Context, kv *kubeView, now func() time.Time, onTick func(soldier.TickResult, error)) error {
	return kv.Lead(ctx, p.log.Named("kube"), func(lctx context.Context, l kube.Leadership) {
		if l.Others {
			p.sd.ForgetTargets()
		}
		p.setActing(true)
		defer p.setActing(false)
		if err := p.sd.Run(lctx, now, onTick); err != nil {
			p.log.Error("soldier stopped", "error", err)
		}
	})
}

// kubeClient is the process's client of --kubeconfig, made once.
func (p *SoldierProcess) kubeClient() (kubernetes.Interface, error) {
	if p.disc != nil && p.disc.client != nil {
		return p.disc.client, nil
	}
	kube.RouteKlog(p.log.Named("client-go"))
	return kube.Client(p.opts.Kubeconfig, p.cfg.Kubernetes)
}

// discoveryTimeout bounds the wait for the discovery informers' first sync
// at Open.
const discoveryTimeout = time.Minute

// discovery is a Soldier's discovery of its domain's apps on a real
// cluster: a kube.Discoverer whose lists of workloads become the domain's
// apps (domains.Config.WithDiscovered). The first list makes the apps the
// process opens with; once the Soldier runs (live), every later one is a
// reload of its apps (soldier.Soldier.ReloadApps), which moves the
// Observer and the Actuator with it between two ticks.
type discovery struct {
	client   kubernetes.Interface
	di       int
	mu       sync.Mutex // serialises lists and reloads
	found    []domains.FoundWorkload
	problems []string      // of the last list, logged when they change
	first    chan struct{} // closed at the first list
	live     bool
}

// startDiscovery, for a domain with a discover block on a real cluster,
// runs its Discoverer until Close and waits for the first list, whose apps
// become the domain's in p.cfg.
func (p *SoldierProcess) startDiscovery(ctx context.Context) error {
	di := p.cfg.Domain(p.opts.Domain)
	if p.view != nil || p.opts.Kubeconfig == "" || di < 0 || p.cfg.Domains[di].Discover == nil {
		return nil
	}
	client, err := p.kubeClient()
	if err != nil {
		return err
	}
	p.disc = &discovery{client: client, di: di, first: make(chan struct{})}
	x := kube.NewDiscoverer(client, *p.cfg.Domains[di].Discover)
	dctx, stop := context.WithCancel(context.Background()) // until Close
	var wg sync.WaitGroup
	wg.Go(func() { x.Run(dctx, p.onFound) })
	p.onClose(func() error { stop(); wg.Wait(); return nil })
	select {
	case <-p.disc.first:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(discoveryTimeout):
		return fmt.Errorf("discover the apps of %s: informers not synced within %s", p.opts.Domain, discoveryTimeout)
	}
}

// onFound takes a list of the domain's workloads.
func (p *SoldierProcess) onFound(found []domains.FoundWorkload) {
	d := p.disc
	d.mu.Lock()
	defer d.mu.Unlock()
	d.found = found
	select {
	case <-d.first:
	default:
		next := p.discovered(p.config())
		p.setConfig(next)
		close(d.first)
		p.log.Info("apps discovered", "apps", len(soldier.Apps(next, d.di)))
		return
	}
	if d.live {
		p.applyFound()
	}
}

// discoveryLive makes later lists reload the Soldier's apps, and applies
// any that came while the process opened.
func (p *SoldierProcess) discoveryLive() {
	if d := p.disc; d != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.live = true
		p.applyFound()
	}
}

// applyFound reloads the Soldier's apps from the last list. d.mu is held.
func (p *SoldierProcess) applyFound() {
	cur := p.config()
	next := p.discovered(cur)
	before, after := appNames(cur, p.disc.di), appNames(next, p.disc.di)
	if slices.Equal(before, after) && reflect.DeepEqual(cur.Domains[p.disc.di].AppSets, next.Domains[p.disc.di].AppSets) {
		return
	}
	if err := p.reloadApps(next); err != nil {
		p.log.Error("discovered apps not applied", "error", err)
		return
	}
	p.setConfig(next)
	p.log.Info("discovered apps changed", "apps", len(after), "added", strings.Join(missing(after, before), ","),
		"removed", strings.Join(missing(before, after), ","))
}

// discovered is cfg with the last list's apps, logging workloads that
// could not be apps when that changes. d.mu is held.
func (p *SoldierProcess) discovered(cfg *domains.Config) *domains.Config {
	next, problems := cfg.WithDiscovered(p.disc.di, p.disc.found)
	if !slices.Equal(problems, p.disc.problems) {
		for _, why := range problems {
			p.log.Warn("workload not discovered", "reason", why)
		}
		p.disc.problems = problems
	}
	return next
}

// reloadApps moves the Soldier and its cluster adapter to next's apps.
func (p *SoldierProcess) reloadApps(next *domains.Config) error {
	v, ok := p.view.(*kubeView)
	if !ok {
		return errors.New("discovery without a kubernetes adapter")
	}
	return p.sd.ReloadApps(next, func() error { return v.SetApps(next, p.opts.Domain) })
}

// reloadDiscovered is Reload's apply for a discovering Soldier: cfg, as
// read from the file, gets the last list's apps and the Soldier moves to
// them. The cluster, the domains and the discover block's selection
// (namespaces, selector, annotation, kinds) need a restart: the informers
// were built for them.
func (p *SoldierProcess) reloadDiscovered(cfg *domains.Config) error {
	d := p.disc
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := p.config()
	if why := shapeChange(cur, cfg); why != "" && why != "the set of apps changed" {
		return errors.New(why + ": restart to apply")
	}
	a, b := cur.Domains[d.di].Discover, cfg.Domains[d.di].Discover
	if b == nil || !slices.Equal(a.Namespaces, b.Namespaces) || a.Selector != b.Selector || a.Annotation != b.Annotation || !slices.Equal(a.Kinds, b.Kinds) {
		return errors.New("the discover block's selection changed: restart to apply")
	}
	next := p.discovered(cfg)
	if err := p.reloadApps(next); err != nil {
		return err
	}
	*cfg = *next
	p.setConfig(cfg)
	return nil
}

// setConfig makes cfg the config in force.
func (p *SoldierProcess) setConfig(cfg *domains.Config) {
	p.cfgMu.Lock()
	p.cfg = cfg
	p.cfgMu.Unlock()
	p.recordApps(cfg)
}

// appNames are the names of domain di's apps.
func appNames(cfg *domains.Config, di int) []string {
	var out []string
	for _, a := range soldier.Apps(cfg, di) {
		out = append(out, a.Name)
	}
	return out
}

// missing is what of a is not in b.
func missing(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

// kubeView is the Soldier's view of a real cluster. After each observation
// it reads the Observer's staleness flags: it warns when apps' metrics turn
// stale or missing (the Observer then holds last values or size-holding
// stand-ins) and when they recover, and says which apps at Debug per tick.
type kubeView struct {
	*kube.Adapter
	log    hclog.Logger
	stale  int // apps with a metric not fresh at the last observation
	domain string
	owners map[string]kube.Owner // apps left alone at the last observation
	owned  *prometheus.GaugeVec  // regiment_soldier_app_foreign_owner
	// restored: the apps were given back since the mode turned off.
	restored bool
}

// restoreWhenOff gives the domain's apps back (kube.Adapter.Restore: their
// original specs, Regiment's marks removed) at the first tick in mode off,
// and again after the mode left off and came back; a failed restore is
// tried again at the next tick.
func (v *kubeView) restoreWhenOff(ctx context.Context, mode domains.Mode) {
	if mode != domains.ModeOff {
		v.restored = false
		return
	}
	if v.restored {
		return
	}
	done, err := v.Restore(ctx)
	if err != nil {
		v.log.Warn("mode off: restoring the apps failed, retrying at the next tick", "restored", len(done), "error", err)
		return
	}
	v.restored = true
	v.log.Info("mode off: apps given back", "restored", len(done))
}

// newKubeView registers the foreign-owner gauge on reg.
func newKubeView(ad *kube.Adapter, log hclog.Logger, reg prometheus.Registerer, domain string) *kubeView {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "regiment_soldier_app_foreign_owner",
		Help: "1 while another controller (an HPA, a KEDA ScaledObject, a field manager) sets the app's replicas and the Soldier leaves it alone."},
		[]string{"domain", "app", "owner"})
	reg.MustRegister(g)
	return &kubeView{Adapter: ad, log: log, domain: domain, owned: g}
}

// reportOwners logs the apps that came to have, or no longer have, another
// owner, and keeps the gauge to the last observation.
func (v *kubeView) reportOwners() {
	now := v.Observer.Owners()
	for app, o := range now {
		if v.owners[app] != o {
			v.log.Warn("app left alone: another controller sets its replicas", "app", app, "owner", o.String())
			if old, ok := v.owners[app]; ok {
				v.owned.DeleteLabelValues(v.domain, strings.TrimPrefix(app, v.domain+"/"), old.String())
			}
			v.owned.WithLabelValues(v.domain, strings.TrimPrefix(app, v.domain+"/"), o.String()).Set(1)
		}
	}
	for app, o := range v.owners {
		if _, ok := now[app]; !ok {
			v.log.Info("app no longer has another owner: the soldier acts on it again", "app", app, "owner", o.String())
			v.owned.DeleteLabelValues(v.domain, strings.TrimPrefix(app, v.domain+"/"), o.String())
		}
	}
	v.owners = now
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
	v.reportOwners()
	return nil
}

func (v *kubeView) Apply(ctx context.Context, changes []soldier.Change) error {
	return v.Actuator.Apply(ctx, changes)
}

// Apps is the apps the Soldier runs now: its domain's, with those
// discovered since it opened.
func (p *SoldierProcess) Apps() []soldier.App { return p.sd.Apps() }
