package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// Target is one app of a domain and the Kubernetes objects it maps to.
type Target struct {
	App soldier.App
	domains.WorkloadRef
	// Pods selects the app's pods (from WorkloadRef.Selector).
	Pods labels.Selector
	// Queries are the app's Prometheus queries (domains.Config.Queries);
	// an empty Template is the default query.
	Queries domains.PrometheusQueries
}

// Targets maps the apps of domain name, in soldier.Apps order, to their
// workloads (see domains.Config.Workload for the mapping and its defaults).
// cfg must be validated.
func Targets(cfg *domains.Config, name string) ([]Target, error) {
	di := cfg.Domain(name)
	if di < 0 {
		return nil, fmt.Errorf("kube: unknown domain %q", name)
	}
	apps := soldier.Apps(cfg, di)
	var out []Target
	for _, a := range cfg.Apps() {
		if a.Domain != di {
			continue
		}
		t, err := targetOf(cfg, a, apps[len(out)])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// targetOf maps app a of cfg, described to its Soldier as app, to its
// workload.
func targetOf(cfg *domains.Config, a domains.App, app soldier.App) (Target, error) {
	ref := cfg.Workload(a)
	sel, err := labels.Parse(ref.Selector)
	if err != nil {
		return Target{}, fmt.Errorf("kube: app %s: selector %q: %w", a.Name, ref.Selector, err)
	}
	return Target{App: app, WorkloadRef: ref, Pods: sel, Queries: cfg.Queries(a)}, nil
}

// CallerTargets are the apps, in any domain, that call a domain's apps
// (depends_on): the Observer reads their request rates with the domain's
// metrics, and reports each app's callers' calls as its CallerRPS
// (soldier.AppObservation).
type CallerTargets struct {
	// Targets are the calling apps, each once; only their request rate is
	// read.
	Targets []Target
	// Of are, per app of the domain in Targets order, its callers;
	// soldier.Caller.App indexes Targets above.
	Of [][]soldier.Caller
}

// CallerTargetsOf maps the callers of domain's apps of cfg (validated) to their
// workloads; nil when nobody calls them.
func CallerTargetsOf(cfg *domains.Config, domain string) (*CallerTargets, error) {
	di := cfg.Domain(domain)
	if di < 0 {
		return nil, fmt.Errorf("kube: unknown domain %q", domain)
	}
	all := cfg.Apps()
	pos, count := make([]int, len(all)), map[int]int{} // each app's index in its domain
	for _, a := range all {
		pos[a.ID] = count[a.Domain]
		count[a.Domain]++
	}
	c := &CallerTargets{Of: soldier.Callers(cfg, di)}
	index := map[int]int{} // app id -> index in c.Targets
	described := map[int][]soldier.App{}
	for _, callers := range c.Of {
		for j := range callers {
			id := callers[j].App
			k, ok := index[id]
			if !ok {
				a := all[id]
				if described[a.Domain] == nil {
					described[a.Domain] = soldier.Apps(cfg, a.Domain)
				}
				t, err := targetOf(cfg, a, described[a.Domain][pos[id]])
				if err != nil {
					return nil, err
				}
				k, index[id] = len(c.Targets), len(c.Targets)
				c.Targets = append(c.Targets, t)
			}
			callers[j].App = k
		}
	}
	if len(c.Targets) == 0 {
		return nil, nil
	}
	return c, nil
}

// namespaces lists the distinct namespaces of ts, in first-seen order.
func namespaces(ts []Target) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range ts {
		if !seen[t.Namespace] {
			seen[t.Namespace] = true
			out = append(out, t.Namespace)
		}
	}
	return out
}
