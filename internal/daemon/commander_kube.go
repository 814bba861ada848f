package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/kube/leader"
	"github.com/regimentd/regiment/internal/adapter/kube/pool"
	"github.com/regimentd/regiment/internal/core/commander"
	"github.com/regimentd/regiment/internal/core/domains"
)

// poolWatcher follows the contested pool's nodes when the config names
// them (kubernetes.pool_node_selector); nil otherwise. Without a dynamic
// client it reads no Karpenter limits.
func (p *CommanderProcess) poolWatcher(cfg *domains.Config, client kubernetes.Interface) *pool.Watcher {
	k := cfg.Kubernetes
	if k.PoolNodeSelector == "" {
		return nil
	}
	dyn, err := kube.DynamicClient(p.opts.Kubeconfig, k)
	if err != nil {
		p.log.Warn("no dynamic client: karpenter nodepool limits not read", "error", err)
		dyn = nil
	}
	var discover []domains.Discover
	for _, d := range cfg.Domains {
		if d.Discover != nil {
			discover = append(discover, *d.Discover)
		}
	}
	maxCores := cfg.Cluster.CapacityCores // the largest the pool may grow to; pool_max_cores may say less
	if k.PoolMaxCores > 0 {
		maxCores = min(maxCores, k.PoolMaxCores)
	}
	w, err := pool.NewWatcher(client, dyn, pool.Config{NodeSelector: k.PoolNodeSelector, MaxCores: maxCores,
		Managed: pool.ManagedPods(cfg), Discover: discover})
	if err != nil { // validated: not reached
		p.log.Error("pool capacity not followed", "error", err)
		return nil
	}
	p.log.Info("following the pool's nodes for its capacity", "pool_node_selector", k.PoolNodeSelector,
		"pool_max_cores", k.PoolMaxCores, "capacity_cores", cfg.Cluster.CapacityCores)
	return w
}

// balloons returns the Balloons that hold the capacity plan on the pool, or
// nil when kubernetes { balloon_pod_cores } is unset or the plan is off.
//
// The balloons are owned by the controller of the Commander's own pod (its
// StatefulSet, found by the pod's name, its hostname, in the lease
// namespace), so that they go when the Commander is uninstalled; a
// Commander run outside the cluster leaves them unowned.
func (p *CommanderProcess) balloons(ctx context.Context, cfg *domains.Config, client kubernetes.Interface, w *pool.Watcher) *pool.Balloons {
	k := cfg.Kubernetes
	if k.BalloonPodCores <= 0 || cfg.Commander.CapacityPlan != domains.PlanForecast {
		return nil
	}
	host, _ := os.Hostname()
	owner, ownerErr := pool.ControllerOf(ctx, client, k.LeaseNamespace, host)
	if ownerErr != nil { // not fatal: the balloons are held, unowned
		p.log.Info("balloons without an owner: delete Deployment regiment-balloon by hand after uninstalling", "reason", ownerErr)
	}
	sel, err := pool.SelectorMap(k.PoolNodeSelector) // validated: no error
	b, err2 := pool.NewBalloons(client, pool.BalloonConfig{Namespace: k.LeaseNamespace, NodeSelector: sel, PodCores: k.BalloonPodCores,
		PriorityClass: k.BalloonPriorityClass, Image: k.BalloonImage, Tolerations: pool.Tolerations(k.BalloonTolerations), Owner: owner}, w.ManagedCores)
	if err = errors.Join(err, err2); err != nil {
		p.log.Error("capacity plan not held: no balloons", "error", err)
		return nil
	}
	ownerName := "none"
	if owner != nil {
		ownerName = owner.Kind + "/" + owner.Name
	}
	p.log.Info("holding the capacity plan with balloon pods", "deployment", k.LeaseNamespace+"/"+pool.BalloonName,
		"pod_cores", k.BalloonPodCores, "priority_class", k.BalloonPriorityClass, "tolerations", k.BalloonTolerations, "owner", ownerName)
	return b
}

// The pool watcher counts the Commander's nodes.
var _ commander.NodeCounter = (*pool.Watcher)(nil)

// sizer is the pool's size as logCapacity reads it: pool.Watcher.
type sizer interface {
	Size() (pool.Size, bool)
}

// logCapacity logs the pool's capacity once known and whenever it changes
// by a core or more or a node becomes ready, comes or goes, checking every
// tick. (A node turning ready moves its cores from pending to ready and
// leaves the capacity as it was.)
func logCapacity(ctx context.Context, w sizer, tick time.Duration, log hclog.Logger) {
	t := time.NewTicker(tick)
	defer t.Stop()
	last := pool.Size{Cores: -1}
	for {
		if c, ok := w.Size(); ok && (math.Abs(c.Cores-last.Cores) >= 1 || c.Nodes != last.Nodes || c.PendingNodes != last.PendingNodes) {
			last = c
			log.Info("pool capacity", "cores", c.Cores, "nodes", c.Nodes, "pending_nodes", c.PendingNodes,
				"ready_cores", c.ReadyCores, "pending_cores", c.PendingCores, "reserved_cores", c.ReservedCores,
				"max_cores", c.MaxCores, "capped", c.Capped, "shared_cores", max(c.MaxCores-c.ReservedCores, 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lead runs the tick loop only while this Commander holds the election lease
// (kubernetes.lease_namespace/regiment-commander), so two replicas never both
// publish; while leading it also runs the Reverter, which puts the HPAs of
// Soldiers whose lease lapsed back to their safe bounds. Each leadership
// starts a new term, above every term seen in the directives bucket.
func (p *CommanderProcess) lead(ctx context.Context, client kubernetes.Interface, cmd *commander.Commander, conn *bus.Conn, clock func() time.Time, onTick func(commander.Decision, error)) error {
	host, _ := os.Hostname() // the pod's name in Kubernetes
	id := fmt.Sprintf("%s-%d", host, os.Getpid())
	cfg := p.config() // its domains and apps are the same after any reload
	k := cfg.Kubernetes
	var nss []string
	seen := map[string]bool{}
	for _, a := range cfg.Apps() {
		if ns := cfg.Workload(a).Namespace; !seen[ns] {
			seen[ns] = true
			nss = append(nss, ns)
		}
	}
	for _, d := range cfg.Domains { // the Soldiers' discovered apps: the Commander discovers none itself
		if d.Discover != nil {
			for _, ns := range d.Discover.Namespaces {
				if !seen[ns] {
					seen[ns] = true
					nss = append(nss, ns)
				}
			}
		}
	}
	kube.RouteKlog(p.log.Named("client-go"))
	rev := kube.NewReverter(client, nss)
	rev.Kinds = kube.RevertKinds(cfg.Soldier.Actuation)
	log := p.log.With("lease", k.LeaseNamespace+"/"+leader.CommanderLease, "identity", id)
	log.Info("campaigning for leadership")
	return leader.Elect(ctx, leader.Config{Client: client, Namespace: k.LeaseNamespace}, id,
		func(lctx context.Context) {
			term := commander.FirstTerm(time.Now())
			for _, d := range cfg.Domains {
				if last, ok, err := conn.LastDirective(lctx, d.Name); err == nil && ok {
					term, _ = commander.ResumeTerm(time.Now(), term, last.Term) // a term past any clock is ignored
				}
			}
			cmd.BeginTerm(term)
			log.Info("leading: publishing directives", "term", term)
			var wg sync.WaitGroup
			if pw := p.poolWatcher(cfg, client); pw != nil {
				cmd.SetCapacity(pw)
				wg.Go(func() {
					pw.Run(lctx, func(err error) { log.Warn("read karpenter nodepool limits failed", "error", err) })
				})
				wg.Go(func() { logCapacity(lctx, pw, cfg.Commander.Tick, log) })
				if b := p.balloons(lctx, cfg, client, pw); b != nil {
					cmd.SetPool(b)
				}
			}
			wg.Go(func() {
				rev.Run(lctx, max(k.LeaseDuration/4, time.Second), func(done []kube.Restored, err error) {
					for _, r := range done {
						log.Warn("soldier lease lapsed: object restored", "kind", r.Kind, "object", r.Object, "soldier_lease", r.Lease,
							"from", r.From, "spec", kube.EncodeOriginal(r.Spec))
					}
					if err != nil {
						log.Error("revert failed", "error", err)
					}
				})
			})
			cmd.Run(lctx, clock, onTick)
			wg.Wait()
		},
		func() {
			p.metrics.StoppedLeading()
			log.Info("stopped leading")
		})
}
