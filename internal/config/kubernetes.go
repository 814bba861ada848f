package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/core/domains"
)

// This file holds the blocks that map the config onto a Kubernetes cluster
// (the prometheus block is in prometheus.go):
//
//	kubernetes {
//	  namespace       = "shop"      # workloads of apps that name none
//	  lease_namespace = "regiment"  # Soldier leases and the Commander's election lease
//	  lease_duration  = "40s"
//	  hpa_headroom    = 0.5         # hpa-bounds: max = ceil(target x 1.5) within max_replicas
//	  writes_per_second = 50        # a Soldier's write rate limit
//	  write_burst       = 100
//	  pool_node_selector = "pool=general"  # the contested pool's nodes
//	  pool_max_cores     = 4000            # the most they may grow to
//	  balloon_pod_cores  = 4               # hold the capacity plan with balloon pods
//	  balloon_priority_class = "regiment-balloon"
//	  balloon_image      = "registry.k8s.io/pause:3.10"
//	  balloon_tolerations = ["dedicated=apps:NoSchedule"]  # onto a tainted pool
//	}
//	domain "payment" {
//	  apps "checkout" {
//	    count = 3
//	    workload {
//	      kind      = "Deployment"          # or "StatefulSet"
//	      name      = "checkout-{i}"        # {i}: the app's index in its set
//	      namespace = "payments"
//	      selector  = "app=checkout-{i}"
//	      hpa       = "checkout-{i}"
//	    }
//	  }
//	}

type kubernetesHCL struct {
	Def            hcl.Range
	Namespace      stringAttr   `hcl:"namespace"`
	LeaseNamespace stringAttr   `hcl:"lease_namespace"`
	LeaseDuration  durationAttr `hcl:"lease_duration"`
	HPAHeadroom    numberAttr   `hcl:"hpa_headroom"`
	// Write rate limit of a Soldier (see domains.Kubernetes).
	WritesPerSecond numberAttr `hcl:"writes_per_second"`
	WriteBurst      intAttr    `hcl:"write_burst"`
	// The contested pool on the cluster (see domains.Kubernetes).
	PoolNodeSelector stringAttr `hcl:"pool_node_selector"`
	PoolMaxCores     numberAttr `hcl:"pool_max_cores"`
	// Balloon pods holding the capacity plan (see domains.Kubernetes).
	BalloonPodCores      numberAttr `hcl:"balloon_pod_cores"`
	BalloonPriorityClass stringAttr `hcl:"balloon_priority_class"`
	BalloonImage         stringAttr `hcl:"balloon_image"`
	BalloonTolerations   listAttr   `hcl:"balloon_tolerations"`
}

func (k *kubernetesHCL) children() []child { return nil }

func (k *kubernetesHCL) translate() domains.Kubernetes {
	return domains.Kubernetes{
		Namespace: k.Namespace.V, LeaseNamespace: k.LeaseNamespace.V,
		LeaseDuration: k.LeaseDuration.V, HPAHeadroom: k.HPAHeadroom.V,
		WritesPerSecond: k.WritesPerSecond.V, WriteBurst: k.WriteBurst.V,
		PoolNodeSelector: k.PoolNodeSelector.V, PoolMaxCores: k.PoolMaxCores.V,
		BalloonPodCores: k.BalloonPodCores.V, BalloonPriorityClass: k.BalloonPriorityClass.V, BalloonImage: k.BalloonImage.V,
		BalloonTolerations: tolerations(k.BalloonTolerations.V),
	}
}

type workloadHCL struct {
	Def       hcl.Range
	Kind      stringAttr `hcl:"kind"`
	Name      stringAttr `hcl:"name"`
	Namespace stringAttr `hcl:"namespace"`
	Selector  stringAttr `hcl:"selector"`
	HPA       stringAttr `hcl:"hpa"`
}

func (w *workloadHCL) children() []child { return nil }

func (w *workloadHCL) translate() domains.Workload {
	return domains.Workload{
		Kind: domains.WorkloadKind(w.Kind.V), Name: w.Name.V, Namespace: w.Namespace.V,
		Selector: w.Selector.V, HPA: w.HPA.V,
	}
}

// writeRates and writeBursts bound the write rate limit: 10,000 writes a
// second is far beyond what one API server takes from one client.
var (
	writeRates  = interval{lo: 0, hi: 10_000, loOpen: true}
	writeBursts = interval{lo: 1, hi: 10_000}
)

// validateKubernetes checks the kubernetes and prometheus blocks and every
// app set's workload block.
func validateKubernetes(cfg *domains.Config, h *configHCL, c checker) {
	k, hk := &cfg.Kubernetes, &h.Kubernetes
	c.dnsLabel(&hk.Namespace, k.Namespace)
	c.dnsLabel(&hk.LeaseNamespace, k.LeaseNamespace)
	c.duration(&hk.LeaseDuration, k.LeaseDuration, positive)
	c.number(&hk.HPAHeadroom, k.HPAHeadroom, ratios)
	c.number(&hk.WritesPerSecond, k.WritesPerSecond, writeRates)
	c.integer(&hk.WriteBurst, k.WriteBurst, writeBursts)
	if s := &hk.PoolNodeSelector; s.ok() {
		if bad := selectorProblem(s.V); bad != "" {
			c.ds.add(s.Range, "Invalid pool_node_selector", "%s (example: \"karpenter.sh/nodepool=general\")", bad)
		}
	}
	c.number(&hk.PoolMaxCores, k.PoolMaxCores, cores)
	validateBalloons(cfg, hk, c)

	validatePrometheus(cfg, h, c)

	for i := range cfg.Domains {
		for j := range cfg.Domains[i].AppSets {
			a, ha := &cfg.Domains[i].AppSets[j], h.Domains[i].AppSets[j]
			validateWorkload(a, &ha.Workload, c)
		}
	}
}

// validateBalloons checks the balloon attributes: a pod of at most a node,
// on a pool the Commander follows, of a valid PriorityClass name, with
// tolerations in kubectl's taint syntax (parseToleration). Tolerations without
// balloon_pod_cores are allowed: they do nothing.
func validateBalloons(cfg *domains.Config, hk *kubernetesHCL, c checker) {
	k := &cfg.Kubernetes
	c.number(&hk.BalloonPodCores, k.BalloonPodCores, interval{lo: 0, hi: cfg.Cluster.NodeCores, loOpen: true})
	if a := &hk.BalloonPodCores; a.ok() && k.PoolNodeSelector == "" {
		c.ds.add(a.Range, "Balloons without a pool", "balloon_pod_cores places balloon pods on the pool's nodes: set pool_node_selector too")
	}
	if a := &hk.BalloonPriorityClass; a.ok() {
		if bad := dnsSubdomain(a.V); bad != "" {
			c.ds.add(a.Range, "Invalid balloon_priority_class", "%s %s", clip(a.V), bad)
		}
	}
	if a := &hk.BalloonImage; a.ok() && strings.TrimSpace(a.V) == "" {
		c.ds.add(a.Range, "Invalid balloon_image", "an image reference, e.g. %q", domains.DefaultBalloonImage)
	}
	if a := &hk.BalloonTolerations; a.ok() {
		for i, t := range a.V {
			if _, bad := parseToleration(t); bad != "" {
				c.ds.add(a.Ranges[i], "Invalid balloon_tolerations", "%s %s (KEY[=VALUE][:EFFECT], example: \"dedicated=apps:NoSchedule\")", clip(t), bad)
			}
		}
	}
}

// parseToleration reads s, a toleration in kubectl's taint syntax
// KEY[=VALUE][:EFFECT]: KEY a qualified name (a label key), VALUE a label
// value, not empty (KEY alone tolerates any value), EFFECT one of
// domains.TaintEffects (none: every effect). It returns why s is not one,
// or "".
func parseToleration(s string) (domains.Toleration, string) {
	keyValue, effect, hasEffect := strings.Cut(s, ":")
	key, value, hasValue := strings.Cut(keyValue, "=")
	switch {
	case !labelKey(key):
		return domains.Toleration{}, fmt.Sprintf("has key %s, not a qualified name (a label key, e.g. \"example.com/dedicated\")", clip(key))
	case hasValue && value == "":
		return domains.Toleration{}, fmt.Sprintf("has an empty value; write %q to tolerate any value", key+strings.TrimPrefix(s, keyValue))
	case hasValue && !labelValue(value):
		return domains.Toleration{}, fmt.Sprintf("has value %s, not a label value", clip(value))
	case hasEffect && !slices.Contains(domains.TaintEffects, effect):
		return domains.Toleration{}, fmt.Sprintf("has effect %s, not one of %s", clip(effect), strings.Join(domains.TaintEffects, ", "))
	}
	return domains.Toleration{Key: key, Value: value, Effect: effect}, ""
}

// tolerations are the entries of specs that parseToleration reads, in
// order; validateBalloons reports the others. None is none.
func tolerations(specs []string) []domains.Toleration {
	var ts []domains.Toleration
	for _, s := range specs {
		if t, bad := parseToleration(s); bad == "" {
			ts = append(ts, t)
		}
	}
	return ts
}

func validateWorkload(a *domains.AppSet, hw *workloadHCL, c checker) {
	w := &a.Workload
	c.oneOf(&hw.Kind, string(w.Kind), []string{string(domains.KindDeployment), string(domains.KindStatefulSet)})
	c.dnsLabel(&hw.Namespace, w.Namespace)
	for _, n := range []*stringAttr{&hw.Name, &hw.HPA} {
		if !c.perApp(n, a.Count, "checkout-{i}") {
			continue
		}
		if bad := dnsSubdomain(strings.ReplaceAll(n.V, domains.AppIndex, "0")); bad != "" {
			c.ds.add(n.Range, "Invalid "+n.Name, "%s %s", clip(n.V), bad)
		}
	}
	if s := &hw.Selector; c.perApp(s, a.Count, "app=checkout-{i}") {
		if bad := selectorProblem(strings.ReplaceAll(s.V, domains.AppIndex, "0")); bad != "" {
			c.ds.add(s.Range, "Invalid selector", "%s (example: \"app=checkout,tier=web\")", bad)
		}
	}
}

// perApp reports whether a set attribute may be checked further: a set of
// more than one app needs "{i}" in it, or every app would share one object.
func (c checker) perApp(a *stringAttr, count int, example string) bool {
	if !a.ok() {
		return false
	}
	if count > 1 && !strings.Contains(a.V, domains.AppIndex) {
		c.ds.add(a.Range, "Invalid "+a.Name, "the set has %d apps, so %s must contain %s, their index in the set (example: %q)", count, a.Name, domains.AppIndex, example)
		return false
	}
	return true
}

// dnsLabel checks a namespace: an RFC 1123 label.
func (c checker) dnsLabel(a *stringAttr, v string) {
	if !a.ok() {
		return
	}
	if bad := dnsLabel(v); bad != "" {
		c.ds.add(a.Range, "Invalid "+a.Name, "%s %s", clip(v), bad)
	}
}

// dnsLabel returns why s is not an RFC 1123 label, or "".
func dnsLabel(s string) string {
	if len(s) == 0 || len(s) > 63 {
		return "must be 1 to 63 characters"
	}
	for i, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		if !alnum && (r != '-' || i == 0 || i == len(s)-1) {
			return "must be lowercase letters, digits and \"-\", starting and ending with a letter or digit"
		}
	}
	return ""
}

// dnsSubdomain returns why s is not an RFC 1123 subdomain (an object name), or "".
func dnsSubdomain(s string) string {
	if len(s) == 0 || len(s) > 253 {
		return "must be 1 to 253 characters"
	}
	for _, part := range strings.Split(s, ".") {
		if dnsLabel(part) != "" {
			return "must be lowercase letters, digits, \"-\" and \".\", each part starting and ending with a letter or digit"
		}
	}
	return ""
}

// selectorProblem returns why s is not an equality-based label selector
// "k=v[,k=v]", or "".
func selectorProblem(s string) string {
	for _, term := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(term), "=")
		v = strings.TrimPrefix(v, "=")
		switch {
		case !ok || strings.ContainsAny(v, "=!"):
			return fmt.Sprintf("%s is not key=value; only equality selectors are supported", clip(term))
		case !labelKey(k):
			return fmt.Sprintf("%s is not a label key", clip(k))
		case !labelValue(v):
			return fmt.Sprintf("%s is not a label value", clip(v))
		}
	}
	return ""
}

func labelKey(k string) bool {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name = prefix
	} else if dnsSubdomain(prefix) != "" {
		return false
	}
	return len(name) > 0 && labelValue(name)
}

func labelValue(v string) bool {
	if len(v) > 63 {
		return false
	}
	for i, r := range v {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (!strings.ContainsRune("-_.", r) || i == 0 || i == len(v)-1) {
			return false
		}
	}
	return true
}
