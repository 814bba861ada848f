package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/soldier"
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
		ref := cfg.Workload(a)
		sel, err := labels.Parse(ref.Selector)
		if err != nil {
			return nil, fmt.Errorf("kube: app %s: selector %q: %w", a.Name, ref.Selector, err)
		}
		out = append(out, Target{App: apps[len(out)], WorkloadRef: ref, Pods: sel, Queries: cfg.Queries(a)})
	}
	return out, nil
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
