package config

import (
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/core/domains"
)

// This file holds a domain's discover block, which selects its apps on the
// cluster instead of listing them (domains.Discover):
//
//	domain "payment" {
//	  discover {
//	    namespaces   = ["payments", "shop"]
//	    selector     = "regiment.io/domain=payment"   # workload labels
//	    annotation   = "regiment.io/domain=payment"   # and/or one workload annotation
//	    kinds        = ["Deployment", "StatefulSet"]  # default ["Deployment"]
//	    service_time = "25ms"                         # default: learned
//	    min_replicas = 2
//	    max_replicas = 50
//	  }
//	}

type discoverHCL struct {
	Def           hcl.Range
	Namespaces    listAttr     `hcl:"namespaces"`
	Selector      stringAttr   `hcl:"selector"`
	Annotation    stringAttr   `hcl:"annotation"`
	Kinds         listAttr     `hcl:"kinds"`
	CPUPerReplica numberAttr   `hcl:"cpu_per_replica"`
	MinReplicas   intAttr      `hcl:"min_replicas"`
	MaxReplicas   intAttr      `hcl:"max_replicas"`
	ServiceTime   durationAttr `hcl:"service_time"`
	Concurrency   intAttr      `hcl:"concurrency"`
	StartupTime   durationAttr `hcl:"startup_time"`
	Timeout       durationAttr `hcl:"timeout"`
	CPULimitRatio numberAttr   `hcl:"cpu_limit_ratio"`
}

func (d *discoverHCL) children() []child { return nil }

// translate is the block's Discover, or nil without the block.
func (d *discoverHCL) translate() *domains.Discover {
	if d.Def == (hcl.Range{}) {
		return nil
	}
	var kinds []domains.WorkloadKind
	for _, k := range d.Kinds.V {
		kinds = append(kinds, domains.WorkloadKind(k))
	}
	return &domains.Discover{
		Namespaces: d.Namespaces.V, Selector: d.Selector.V, Annotation: d.Annotation.V, Kinds: kinds,
		App: domains.AppSet{
			CPUPerReplica: d.CPUPerReplica.V, MinReplicas: d.MinReplicas.V, MaxReplicas: d.MaxReplicas.V,
			ServiceTime: d.ServiceTime.V, Concurrency: d.Concurrency.V, StartupTime: d.StartupTime.V,
			Timeout: d.Timeout.V, CPULimitRatio: d.CPULimitRatio.V,
		},
	}
}

// validateDiscover checks a domain's discover block, and that a domain
// without one lists apps.
func validateDiscover(d *domains.Domain, hd *domainHCL, c checker) {
	h := &hd.Discover
	if d.Discover == nil {
		if len(d.AppSets) == 0 {
			c.ds.add(hd.Def, "Missing apps block in domain "+clip(d.Name), "add one (example: %s), or a discover block to find the domain's apps on the cluster", `apps "checkout" { cpu_per_replica = 0.5 ... }`)
		}
		return
	}
	disc := d.Discover
	c.required(&h.Namespaces.attr, `namespaces = ["shop"]`)
	if h.Namespaces.ok() && len(disc.Namespaces) == 0 {
		c.ds.add(h.Namespaces.Range, "Invalid namespaces", "name at least one namespace to search (example: [\"shop\"])")
	}
	for i, ns := range disc.Namespaces {
		if bad := dnsLabel(ns); bad != "" {
			c.ds.add(h.Namespaces.Ranges[i], "Invalid namespaces", "%s %s", clip(ns), bad)
		}
	}
	if !h.Selector.Set && !h.Annotation.Set {
		c.ds.add(h.Def, "Missing selector", "discover needs a selector, an annotation or both, or it would take every workload of its namespaces (example: selector = \"regiment.io/domain=%s\")", d.Name)
	}
	if s := &h.Selector; s.ok() {
		if bad := selectorProblem(s.V); bad != "" {
			c.ds.add(s.Range, "Invalid selector", "%s (example: \"regiment.io/domain=payment\")", bad)
		}
	}
	if a := &h.Annotation; a.ok() {
		k, _, ok := strings.Cut(a.V, "=")
		if !ok || !labelKey(k) {
			c.ds.add(a.Range, "Invalid annotation", "%s is not key=value with an annotation key (example: \"regiment.io/domain=payment\")", clip(a.V))
		}
	}
	kinds := []string{string(domains.KindDeployment), string(domains.KindStatefulSet)}
	for i, k := range h.Kinds.V {
		one := stringAttr{attr: attr{Name: "kinds", Range: h.Kinds.Ranges[i], Set: true}, V: k}
		c.oneOf(&one, k, kinds)
	}
	a := &disc.App
	c.duration(&h.ServiceTime, a.ServiceTime, positive)
	c.number(&h.CPUPerReplica, a.CPUPerReplica, cpuPerReplicas)
	c.integer(&h.MinReplicas, a.MinReplicas, replicaCounts)
	c.integer(&h.MaxReplicas, a.MaxReplicas, replicaCounts)
	if h.MinReplicas.ok() && a.MinReplicas > a.MaxReplicas && replicaCounts.contains(float64(a.MinReplicas)) {
		c.ds.add(h.MinReplicas.Range, "Invalid min_replicas", "min_replicas %d is above max_replicas %d", a.MinReplicas, a.MaxReplicas)
	}
	c.integer(&h.Concurrency, a.Concurrency, concurrencies)
	c.duration(&h.StartupTime, a.StartupTime, startupTimes)
	c.duration(&h.Timeout, a.Timeout, positive)
	c.number(&h.CPULimitRatio, a.CPULimitRatio, cpuLimitRatios)
}
