package kube

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Metric names the signals an app has, in domains.Signals order.
type Metric int

const (
	MetricRPS Metric = iota
	MetricP99
	MetricErrorRate
	MetricCPU
	MetricMemory
	MetricRestarts
	numMetrics
)

func (m Metric) String() string { return domains.Signals[m] }

// sizing reports whether the Soldier sizes apps from m: a missing sizing
// metric blinds the app; memory and restarts only inform the Commander.
func (m Metric) sizing() bool { return m <= MetricCPU }

// request is one Prometheus query of a tick: a signal's query for one app
// (per app) or for every app that shares a batched query.
type request struct {
	metric  Metric
	query   string   // rendered
	apps    []int    // target indexes
	batchBy []string // empty: per app, apps has one entry
	// keys are, when batched, each app's values of the batchBy labels
	// (joined by keySep), aligned with apps; "" when the app has no such
	// label (appErr says why).
	keys   []string
	appErr []error // per app of apps: why it cannot be read (nil: fine)
	err    error   // rendering failed: no query is sent, every app has it
}

const keySep = "\xff"

// planQueries turns targets' queries (domains.DefaultPrometheusQueries for
// those a target leaves empty) into the requests of one tick: one per
// per-app query and app, one per distinct batched query. The plan depends
// only on the targets, so it is made once.
func planQueries(targets []Target) []request {
	parsed := map[string]*template.Template{}
	parse := func(text string) (*template.Template, error) {
		if t, ok := parsed[text]; ok {
			return t, nil
		}
		t, err := template.New("query").Option("missingkey=error").Parse(text)
		parsed[text] = t
		return t, err
	}
	var out []request
	for m := range numMetrics {
		batches := map[string]int{} // template and batch_by -> index in out
		for i := range targets {
			q := targetQuery(&targets[i], m)
			if len(q.BatchBy) == 0 {
				r := request{metric: m, apps: []int{i}}
				r.query, r.err = render(parse, q.Template, perAppVars(&targets[i]))
				out = append(out, r)
				continue
			}
			id := q.Template + keySep + strings.Join(q.BatchBy, ",")
			b, ok := batches[id]
			if !ok {
				b, batches[id] = len(out), len(out)
				out = append(out, request{metric: m, query: q.Template, batchBy: q.BatchBy})
			}
			key, err := batchKey(&targets[i], q.BatchBy)
			r := &out[b]
			r.apps, r.keys, r.appErr = append(r.apps, i), append(r.keys, key), append(r.appErr, err)
		}
		for _, b := range batches {
			r := &out[b]
			r.query, r.err = render(parse, r.query, batchVars(targets, r.apps))
		}
	}
	return out
}

func targetQuery(t *Target, m Metric) domains.Query {
	if q := *t.Queries.List()[m]; q.Template != "" {
		return q
	}
	return *domains.DefaultPrometheusQueries.List()[m]
}

func render(parse func(string) (*template.Template, error), text string, vars any) (string, error) {
	t, err := parse(text)
	if err != nil {
		return "", fmt.Errorf("kube: prometheus query template: %w", err)
	}
	var b strings.Builder
	if err := t.Execute(&b, vars); err != nil {
		return "", fmt.Errorf("kube: prometheus query template: %w", err)
	}
	return b.String(), nil
}

// batchKey is t's values of the labels by, joined by keySep.
func batchKey(t *Target, by []string) (string, error) {
	vals := make([]string, len(by))
	for i, l := range by {
		switch l {
		case "namespace":
			vals[i] = t.Namespace
		case "workload":
			vals[i] = t.Name
		default:
			v, ok := selectorValue(t.Selector, l)
			if !ok {
				return "", fmt.Errorf("kube: batch_by label %q is not namespace, workload or a key of selector %q", l, t.Selector)
			}
			vals[i] = v
		}
	}
	return strings.Join(vals, keySep), nil
}

// seriesKey is a series' values of the labels by, joined by keySep.
func seriesKey(labels map[string]string, by []string) string {
	vals := make([]string, len(by))
	for i, l := range by {
		vals[i] = labels[l]
	}
	return strings.Join(vals, keySep)
}

// selectorValue returns the value of the selector key whose PromQL label
// name is label.
func selectorValue(sel, label string) (string, bool) {
	for _, term := range strings.Split(sel, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(term), "=")
		if domains.PromLabel(k) == label {
			return strings.TrimPrefix(v, "="), true
		}
	}
	return "", false
}

func perAppVars(t *Target) domains.QueryVars {
	return domains.QueryVars{Namespace: t.Namespace, Name: t.Name, Selector: t.Selector, Matchers: matchers(t.Selector),
		Pods: "(" + regexLiteral(t.Name) + ")" + podSuffix([]domains.WorkloadKind{t.Kind})}
}

// batchVars are the template variables of a batch of targets' apps.
func batchVars(targets []Target, apps []int) domains.BatchVars {
	var ns, names []string
	var kinds []domains.WorkloadKind
	values := map[string][]string{}
	for _, i := range apps {
		t := &targets[i]
		ns, names, kinds = append(ns, t.Namespace), append(names, t.Name), append(kinds, t.Kind)
		for _, term := range strings.Split(t.Selector, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(term), "=")
			l := domains.PromLabel(k)
			values[l] = append(values[l], strings.TrimPrefix(v, "="))
		}
	}
	workloads := alternation(names)
	v := domains.BatchVars{Namespaces: alternation(ns), Workloads: workloads,
		Pods: "(" + workloads + ")" + podSuffix(kinds), Labels: map[string]string{}}
	for l, vals := range values {
		v.Labels[l] = alternation(vals)
	}
	return v
}

// alternation is an RE2 alternation of the distinct literals vals, longest
// first so that a name wins over its prefixes ("checkout-1" over
// "checkout"). Values are label values and object names ([A-Za-z0-9._-]):
// "." is written [.], so the regex needs no backslash inside a PromQL string.
func alternation(vals []string) string {
	vals = slices.Clone(vals)
	slices.SortFunc(vals, func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b)) })
	vals = slices.Compact(vals)
	for i, v := range vals {
		vals[i] = regexLiteral(v)
	}
	return strings.Join(vals, "|")
}

func regexLiteral(s string) string { return strings.ReplaceAll(s, ".", "[.]") }

// podSuffix matches what follows the workload name in its pods' names:
// -<replicaset hash>-<suffix> for Deployments, -<ordinal> for StatefulSets.
func podSuffix(kinds []domains.WorkloadKind) string {
	deploy, set := false, false
	for _, k := range kinds {
		set = set || k == domains.KindStatefulSet
		deploy = deploy || k != domains.KindStatefulSet
	}
	switch {
	case deploy && set:
		return "-(?:[a-z0-9]+-[a-z0-9]+|[0-9]+)"
	case set:
		return "-[0-9]+"
	default:
		return "-[a-z0-9]+-[a-z0-9]+"
	}
}

// matchers turns an equality selector "k=v,k2=v2" into PromQL matchers
// k="v",k2="v2", label keys as domains.PromLabel names them.
func matchers(sel string) string {
	var parts []string
	for _, term := range strings.Split(sel, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(term), "=")
		parts = append(parts, fmt.Sprintf("%s=%q", domains.PromLabel(k), strings.TrimPrefix(v, "=")))
	}
	return strings.Join(parts, ",")
}
