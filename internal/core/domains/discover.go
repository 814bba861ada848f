package domains

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Discover selects a domain's apps on the cluster instead of listing them:
// every workload of Kinds in Namespaces whose labels match Selector and
// whose annotations match Annotation is one app of the domain
// (Config.WithDiscovered). Only daemons run with a kubeconfig discover.
type Discover struct {
	// Namespaces are searched; at least one.
	Namespaces []string
	// Selector selects workloads by label, equality only: "k=v[,k=v]".
	// Empty: every workload (Annotation then selects).
	Selector string
	// Annotation selects workloads by one annotation, "k=v". Empty: none.
	// At least one of Selector and Annotation is set.
	Annotation string
	// Kinds are the workload kinds searched. Default [Deployment].
	Kinds []WorkloadKind
	// App holds every discovered app's attributes: MinReplicas,
	// MaxReplicas, ServiceTime, Concurrency, StartupTime, Timeout and
	// CPULimitRatio, with AppSet's defaults; annotations on a workload
	// override some (AnnotationMinReplicas, ...). Its CPUPerReplica is only
	// for workloads whose pods request no CPU; 0 (the default) skips those.
	// A ServiceTime of 0 (not set) is learned: every app whose annotations
	// set none has Learn, and PriorServiceTime until its Soldier learned it.
	App AppSet
}

// Annotations on a discovered workload that override its domain's
// Discover.App for that app.
const (
	AnnotationMinReplicas = "regiment.io/min-replicas" // whole number >= 1
	AnnotationMaxReplicas = "regiment.io/max-replicas" // whole number >= 1
	AnnotationServiceTime = "regiment.io/service-time" // duration, e.g. "25ms"
	AnnotationConcurrency = "regiment.io/concurrency"  // whole number >= 1
	AnnotationHPA         = "regiment.io/hpa"          // the app's HPA; default the workload's name
)

// PriorServiceTime is the service time of an app whose service time is
// learned (AppSet.Learn) until its Soldier has observed enough load to
// learn it (soldier.Learning).
const PriorServiceTime = 50 * time.Millisecond

func (d *Discover) defaults() {
	if len(d.Kinds) == 0 {
		d.Kinds = []WorkloadKind{KindDeployment}
	}
	d.App.sizeDefaults()
	if d.App.ServiceTime == 0 {
		d.App.ServiceTime, d.App.Learn = PriorServiceTime, true
	}
}

// FoundWorkload is one workload as discovery sees it.
type FoundWorkload struct {
	Kind                WorkloadKind
	Namespace, Name     string
	Labels, Annotations map[string]string
	// PodSelector is the workload's pod selector as "k=v[,k=v]", sorted
	// by key; "" when it has match expressions, which apps do not support.
	PodSelector string
	// CPURequest is the CPU request of one pod, in cores: the sum over the
	// pod template's containers.
	CPURequest float64
}

// WithDiscovered returns c with domain di's discovered apps replaced by
// one app per workload of found that the domain's Discover selects, and
// why any selected workload is not an app. c is not changed. An app set
// written in the config wins: a workload that any written app maps to (by
// kind, namespace and name) is not discovered. A discovered app's name is
// a function of its workload and the config alone (AppName), never of the
// other workloads found, so its history keeps one name. Two workloads
// whose names would clash (a Deployment and a StatefulSet of one name and
// namespace, or a workload named like a written app of the domain) are
// not both apps: the written app, else the workload first in kind order,
// keeps the name, and the problem names both. Its CPUPerReplica is the
// pods' CPU request. The result is in namespace, name, kind order, so the
// same workloads give the same apps. c must have Defaults applied.
func (c *Config) WithDiscovered(di int, found []FoundWorkload) (*Config, []string) {
	d := &c.Domains[di]
	if d.Discover == nil {
		return c, nil
	}
	written := map[WorkloadRef]bool{}
	for _, a := range c.Apps() {
		if !a.AppSet.Discovered {
			r := c.Workload(a)
			written[WorkloadRef{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}] = true
		}
	}
	sets := slices.DeleteFunc(slices.Clone(d.AppSets), func(s AppSet) bool { return s.Discovered })
	owner := map[string]string{} // app name -> who holds it, for a clash's problem
	for _, a := range c.Apps() {
		if a.Domain == di && !a.AppSet.Discovered {
			r := c.Workload(a)
			owner[strings.TrimPrefix(a.Name, d.Name+"/")] = fmt.Sprintf("the written app %s (%s %s/%s)", a.Name, r.Kind, r.Namespace, r.Name)
		}
	}
	var problems []string
	var picked []FoundWorkload
	for _, w := range found {
		if d.Discover.selects(w) && !written[WorkloadRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}] {
			picked = append(picked, w)
		}
	}
	slices.SortFunc(picked, func(a, b FoundWorkload) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
	})
	for _, w := range picked {
		name := d.Discover.AppName(w.Namespace, w.Name)
		s, why := d.Discover.app(w, name)
		if o, ok := owner[name]; why == "" && ok {
			why = fmt.Sprintf("its app name %q is %s's: rename one, or list this one in an apps block with a workload block", name, o)
		}
		if why != "" {
			problems = append(problems, fmt.Sprintf("%s %s/%s: %s", w.Kind, w.Namespace, w.Name, why))
			continue
		}
		owner[name] = fmt.Sprintf("%s %s/%s", w.Kind, w.Namespace, w.Name)
		sets = append(sets, s)
	}
	out := *c
	out.Domains = slices.Clone(c.Domains)
	out.Domains[di].AppSets = sets
	return &out, problems
}

// AppName is the name of the app discovered for the workload called name
// in namespace ns: the workload's name ("." becomes "_") when d searches
// one namespace, else "<namespace>_<name>", in every namespace from the
// start. A namespace has no "_", so no two workloads of different
// namespaces share an app name, and the name does not depend on which
// other workloads exist; listing a second namespace renames the apps of
// the first.
func (d *Discover) AppName(ns, name string) string {
	name = strings.ReplaceAll(name, ".", "_")
	if len(slices.Compact(slices.Sorted(slices.Values(d.Namespaces)))) > 1 {
		return ns + "_" + name
	}
	return name
}

// selects reports whether d selects w.
func (d *Discover) selects(w FoundWorkload) bool {
	return slices.Contains(d.Kinds, w.Kind) && slices.Contains(d.Namespaces, w.Namespace) &&
		matchesAll(d.Selector, w.Labels) && matchesAll(d.Annotation, w.Annotations)
}

// matchesAll reports whether m holds every k=v of the equality selector sel.
func matchesAll(sel string, m map[string]string) bool {
	if sel == "" {
		return true
	}
	for _, term := range strings.Split(sel, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(term), "=")
		got, ok := m[strings.TrimSpace(k)]
		if !ok || got != strings.TrimSpace(strings.TrimPrefix(v, "=")) {
			return false
		}
	}
	return true
}

// app is w as an app set named name, or why it cannot be one.
func (d *Discover) app(w FoundWorkload, name string) (AppSet, string) {
	s := d.App
	s.Name, s.Count, s.Discovered = name, 1, true
	s.DependsOn = nil
	s.Workload = Workload{Kind: w.Kind, Name: w.Name, Namespace: w.Namespace, Selector: w.PodSelector, HPA: w.Name}
	switch {
	case len(name) > 64:
		return s, "its app name would be longer than 64 characters"
	case w.PodSelector == "":
		return s, "its pod selector has match expressions; only matchLabels are supported"
	case w.CPURequest > 0:
		s.CPUPerReplica = w.CPURequest
	case s.CPUPerReplica == 0:
		return s, "its pods request no CPU and discover sets no cpu_per_replica"
	}
	if h := w.Annotations[AnnotationHPA]; h != "" {
		s.Workload.HPA = h
	}
	for _, o := range []struct {
		key string
		dst *int
		max int
	}{{AnnotationMinReplicas, &s.MinReplicas, MaxReplicas}, {AnnotationMaxReplicas, &s.MaxReplicas, MaxReplicas}, {AnnotationConcurrency, &s.Concurrency, MaxConcurrency}} {
		if v, ok := w.Annotations[o.key]; ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > o.max {
				return s, fmt.Sprintf("annotation %s=%q is not a whole number in [1, %d]", o.key, v, o.max)
			}
			*o.dst = n
		}
	}
	if v, ok := w.Annotations[AnnotationServiceTime]; ok {
		st, err := time.ParseDuration(v)
		if err != nil || st <= 0 {
			return s, fmt.Sprintf("annotation %s=%q is not a positive duration (example: \"25ms\")", AnnotationServiceTime, v)
		}
		s.ServiceTime, s.Learn = st, false
	}
	if s.MinReplicas > s.MaxReplicas {
		return s, fmt.Sprintf("min replicas %d is above max replicas %d", s.MinReplicas, s.MaxReplicas)
	}
	return s, ""
}
