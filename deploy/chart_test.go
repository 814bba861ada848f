package deploy

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
)

const chartDir = "chart/regiment"

// chartCase is one install of the chart: a values file (testdata/, "" for
// the defaults) into a release namespace.
type chartCase struct {
	name, values, namespace string
}

var chartCases = []chartCase{
	{"defaults", "", "regiment"},
	{"three domains, NATS cluster, ServiceMonitor", "testdata/chart-three-domains.yaml", "regiment-three"},
	{"external NATS, Prometheus auth, no persistence", "testdata/chart-external-nats.yaml", "regiment-ext"},
}

// values reads a case's values file (nil for the defaults).
func (c chartCase) userValues(t *testing.T) map[string]any {
	t.Helper()
	if c.values == "" {
		return map[string]any{}
	}
	b, err := os.ReadFile(c.values)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", c.values, err)
	}
	return v
}

// renderChart renders the chart as `helm install --dry-run=client` (or
// `helm template`) does, with helm v4's engine: release "regiment" in
// c.namespace. It returns the manifests' objects, NOTES.txt aside, and the
// merged values.
func renderChart(t *testing.T, c chartCase) ([]*unstructured.Unstructured, common.Values) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	opts := common.ReleaseOptions{Name: "regiment", Namespace: c.namespace, Revision: 1, IsInstall: true}
	vals, err := util.ToRenderValues(ch, c.userValues(t), opts, common.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("render %s: %v", c.name, err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, n := range names {
		if strings.HasSuffix(n, "NOTES.txt") {
			continue
		}
		objs = append(objs, decodeManifests(t, n, files[n])...)
	}
	merged, _ := vals["Values"].(common.Values)
	return objs, merged
}

// decodeManifests splits a rendered file into its objects.
func decodeManifests(t *testing.T, name, text string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(text)), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, text)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// TestChartValuesMatchTheirConfig: the config each case ships names the
// domains the values list, their apps' namespaces among the domain's,
// the release namespace as lease namespace, the same actuation, with the
// chart's NATS as many bucket replicas as NATS servers and, with balloons,
// the chart's balloon PriorityClass and rights, so the Soldiers the chart
// runs are the ones the config has, their Roles cover their apps, a NATS
// cluster keeps every bucket on each server and the Commander may write the
// balloons.
func TestChartValuesMatchTheirConfig(t *testing.T) {
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			_, vals := renderChart(t, c)
			hcl, _ := vals["config"].(map[string]any)["hcl"].(string)
			if existing, _ := vals["config"].(map[string]any)["existingConfigMap"].(string); existing != "" {
				t.Skipf("the config is the existing ConfigMap %s", existing)
			}
			path := filepath.Join(t.TempDir(), "regiment.hcl")
			if err := os.WriteFile(path, []byte(hcl), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadFile(path)
			if err != nil {
				t.Fatalf("config.hcl: %v", err)
			}
			if cfg.Kubernetes.LeaseNamespace != c.namespace {
				t.Errorf("lease_namespace %q, want the release namespace %q", cfg.Kubernetes.LeaseNamespace, c.namespace)
			}
			if string(cfg.Soldier.Actuation) != vals["actuation"] {
				t.Errorf("soldier.actuation %q, values actuation %q", cfg.Soldier.Actuation, vals["actuation"])
			}
			if nats := vals["nats"].(map[string]any); nats["url"] == "" {
				servers := nats["embedded"].(map[string]any)["replicas"]
				if fmt.Sprint(cfg.NATS.Replicas) != fmt.Sprint(servers) {
					t.Errorf("nats.replicas %d, values nats.embedded.replicas %v", cfg.NATS.Replicas, servers)
				}
			}
			if k := cfg.Kubernetes; k.BalloonPodCores > 0 {
				cv := vals["commander"].(map[string]any)
				bv := cv["balloons"].(map[string]any)
				if bv["enabled"] != true || cv["readNodes"] != true || bv["priorityClass"] != k.BalloonPriorityClass {
					t.Errorf("balloon_pod_cores %v of class %q: values commander.readNodes %v, commander.balloons %v (want both enabled, the same class)",
						k.BalloonPodCores, k.BalloonPriorityClass, cv["readNodes"], bv)
				}
			}
			byName := map[string]map[string]any{}
			var names []string
			for _, d := range vals["domains"].([]any) {
				dm := d.(map[string]any)
				byName[dm["name"].(string)] = dm
				names = append(names, dm["name"].(string))
			}
			var cfgNames []string
			for _, d := range cfg.Domains {
				cfgNames = append(cfgNames, d.Name)
			}
			if !slices.Equal(names, cfgNames) {
				t.Fatalf("values domains %v, config domains %v", names, cfgNames)
			}
			for _, a := range cfg.Apps() {
				d := byName[cfg.Domains[a.Domain].Name]
				w := cfg.Workload(a)
				if !slices.Contains(d["namespaces"].([]any), any(w.Namespace)) {
					t.Errorf("app %s is in namespace %s, not among domain %s's %v", a.Name, w.Namespace, d["name"], d["namespaces"])
				}
				if w.Kind == domains.KindStatefulSet && d["statefulSets"] != true {
					t.Errorf("app %s is a StatefulSet; domain %s needs statefulSets: true", a.Name, d["name"])
				}
			}
		})
	}
}

// serviceMonitorCRD is a minimal CustomResourceDefinition of the Prometheus
// Operator's ServiceMonitor (monitoring.coreos.com/v1): the fields the chart
// sets, with their types, so that strict field validation checks them; the
// test apiserver has no Prometheus Operator.
const serviceMonitorCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [endpoints, selector]
            properties:
              selector:
                type: object
                properties:
                  matchLabels: {type: object, additionalProperties: {type: string}}
                  matchExpressions:
                    type: array
                    items:
                      type: object
                      properties:
                        key: {type: string}
                        operator: {type: string}
                        values: {type: array, items: {type: string}}
              namespaceSelector:
                type: object
                properties:
                  any: {type: boolean}
                  matchNames: {type: array, items: {type: string}}
              endpoints:
                type: array
                items:
                  type: object
                  properties:
                    port: {type: string}
                    path: {type: string}
                    scheme: {type: string, enum: [http, https]}
                    interval: {type: string, pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'}
                    honorLabels: {type: boolean}
                    authorization:
                      type: object
                      properties:
                        type: {type: string}
                        credentials:
                          type: object
                          required: [key]
                          properties:
                            name: {type: string}
                            key: {type: string}
                            optional: {type: boolean}
                    relabelings:
                      type: array
                      items:
                        type: object
                        properties:
                          sourceLabels: {type: array, items: {type: string, pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$'}}
                          targetLabel: {type: string}
                          regex: {type: string}
                          replacement: {type: string}
                          action: {type: string}
`

// prometheusRuleCRD is a minimal CustomResourceDefinition of the Prometheus
// Operator's PrometheusRule (monitoring.coreos.com/v1): the fields the chart
// sets, with their types.
const prometheusRuleCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: prometheusrules.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: PrometheusRule, listKind: PrometheusRuleList, plural: prometheusrules, singular: prometheusrule}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              groups:
                type: array
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    rules:
                      type: array
                      items:
                        type: object
                        required: [expr]
                        properties:
                          alert: {type: string}
                          expr: {type: string}
                          for: {type: string}
                          labels: {type: object, additionalProperties: {type: string}}
                          annotations: {type: object, additionalProperties: {type: string}}
`

// TestChartOnTheAPIServer installs each case's objects into a namespace
// that enforces Pod Security "restricted" (server-side apply, strict field
// validation) and fails on any error or warning; each workload's pod is
// created as a dry run, where Pod Security rejects what violates it.
func TestChartOnTheAPIServer(t *testing.T) {
	a := newAPIServer(t)
	crd := decodeManifests(t, "ServiceMonitor CRD", serviceMonitorCRD)
	crd = append(crd, decodeManifests(t, "PrometheusRule CRD", prometheusRuleCRD)...)
	a.applyAll(crd, false)
	a.waitEstablished("servicemonitors.monitoring.coreos.com")
	a.waitEstablished("prometheusrules.monitoring.coreos.com")
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			a.t = t
			objs, _ := renderChart(t, c)
			t.Logf("%d objects: %s", len(objs), kinds(objs))
			namespaces := []*unstructured.Unstructured{restricted(c.namespace)}
			seen := map[string]bool{c.namespace: true}
			for _, o := range objs {
				if ns := o.GetNamespace(); ns != "" && !seen[ns] {
					seen[ns] = true
					namespaces = append(namespaces, restricted(ns))
				}
			}
			a.applyAll(append(namespaces, objs...), false)
		})
	}
}

// podSpec is a workload's pod template spec.
func podSpec(o *unstructured.Unstructured) map[string]any {
	s, _ := field(o.Object, "spec", "template", "spec").(map[string]any)
	return s
}

func args(o *unstructured.Unstructured) []string {
	cs, _ := podSpec(o)["containers"].([]any)
	var out []string
	for _, a := range cs[0].(map[string]any)["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

// TestChartRenders pins what each case must hold: a Soldier per domain (one
// replica, Recreate, its own ServiceAccount, Roles in its namespaces only),
// the Commander's PDB and node reader, episodes on claims, NATS as asked.
func TestChartRenders(t *testing.T) {
	for _, c := range chartCases {
		t.Run(c.name, func(t *testing.T) {
			objs, vals := renderChart(t, c)
			for _, o := range objs {
				if ns := o.GetNamespace(); !clusterScoped[o.GetKind()] && ns == "" {
					t.Errorf("%s %s has no namespace", o.GetKind(), o.GetName())
				}
			}
			checkSoldiers(t, objs, vals, c.namespace)
			checkCommander(t, objs, vals)
			checkNATS(t, objs, vals)
			checkRestoreHook(t, objs, vals, c.namespace)
			if sm := find(objs, "ServiceMonitor", "regiment"); (sm != nil) != vals["serviceMonitor"].(map[string]any)["enabled"].(bool) {
				t.Errorf("ServiceMonitor present %v, serviceMonitor.enabled %v", sm != nil, vals["serviceMonitor"].(map[string]any)["enabled"])
			}
			if pr := find(objs, "PrometheusRule", "regiment"); (pr != nil) != vals["prometheusRule"].(map[string]any)["enabled"].(bool) {
				t.Errorf("PrometheusRule present %v, prometheusRule.enabled %v", pr != nil, vals["prometheusRule"].(map[string]any)["enabled"])
			}
			dash := find(objs, "ConfigMap", "regiment-dashboard")
			if dash == nil || dash.GetLabels()["grafana_dashboard"] != "1" || !strings.Contains(str(dash.Object, "data", "regiment.json"), `"uid": "regiment"`) {
				t.Error("no dashboard ConfigMap labelled grafana_dashboard holding the dashboard")
			}
		})
	}
}

func checkSoldiers(t *testing.T, objs []*unstructured.Unstructured, vals common.Values, ns string) {
	t.Helper()
	persist := vals["persistence"].(map[string]any)["enabled"].(bool)
	soldiers := 0
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			soldiers++
		}
	}
	if ds := vals["domains"].([]any); soldiers != len(ds) {
		t.Errorf("%d Soldier Deployments for %d domains", soldiers, len(ds))
	}
	for _, d := range vals["domains"].([]any) {
		dm := d.(map[string]any)
		name := "regiment-soldier-" + dm["name"].(string)
		dep := find(objs, "Deployment", name)
		if dep == nil {
			t.Errorf("no Deployment %s", name)
			continue
		}
		if field(dep.Object, "spec", "replicas") != int64(1) && field(dep.Object, "spec", "replicas") != float64(1) || str(dep.Object, "spec", "strategy", "type") != "Recreate" {
			t.Errorf("%s: replicas %v strategy %q, want 1 and Recreate", name, field(dep.Object, "spec", "replicas"), str(dep.Object, "spec", "strategy", "type"))
		}
		if sa := podSpec(dep)["serviceAccountName"]; sa != name || find(objs, "ServiceAccount", name) == nil {
			t.Errorf("%s runs as %v, want its own ServiceAccount %s", name, sa, name)
		}
		if !slices.Contains(args(dep), "--domain="+dm["name"].(string)) {
			t.Errorf("%s args %v", name, args(dep))
		}
		byPath, byName := mounts(t, dep)
		data := byName[byPath["/data"]]
		if persist && str(data, "persistentVolumeClaim", "claimName") != name+"-data" {
			t.Errorf("%s: /data is %v, want its claim %s-data", name, data, name)
		}
		var roleNamespaces []any
		for _, o := range objs {
			if o.GetKind() == "RoleBinding" && o.GetName() == name && o.GetNamespace() != ns {
				roleNamespaces = append(roleNamespaces, o.GetNamespace())
			}
		}
		if !slices.Equal(roleNamespaces, dm["namespaces"].([]any)) {
			t.Errorf("%s is bound in %v, want exactly its namespaces %v", name, roleNamespaces, dm["namespaces"])
		}
	}
}

// clusterScoped are the kinds the chart renders without a namespace.
var clusterScoped = map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "PriorityClass": true}

func checkCommander(t *testing.T, objs []*unstructured.Unstructured, vals common.Values) {
	t.Helper()
	cv := vals["commander"].(map[string]any)
	sts := find(objs, "StatefulSet", "regiment-commander")
	if sts == nil {
		t.Fatal("no Commander StatefulSet")
	}
	if find(objs, "PodDisruptionBudget", "regiment-commander") == nil {
		t.Error("no Commander PodDisruptionBudget")
	}
	persist := vals["persistence"].(map[string]any)["enabled"].(bool)
	claims, _ := field(sts.Object, "spec", "volumeClaimTemplates").([]any)
	if persist != (len(claims) == 1) {
		t.Errorf("persistence %v, Commander claim templates %d", persist, len(claims))
	}
	readsNodes := false
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			rules, _ := field(o.Object, "rules").([]any)
			readsNodes = len(rules) >= 1 && slices.Contains(field(rules[0].(map[string]any), "resources").([]any), any("nodes"))
		}
	}
	if readsNodes != cv["readNodes"].(bool) {
		t.Errorf("a ClusterRole reads nodes: %v, commander.readNodes %v", readsNodes, cv["readNodes"])
	}
	bv := cv["balloons"].(map[string]any)
	pc := find(objs, "PriorityClass", bv["priorityClass"].(string))
	if (pc != nil) != bv["enabled"].(bool) {
		t.Errorf("balloon PriorityClass present %v, commander.balloons.enabled %v", pc != nil, bv["enabled"])
	}
	if pc != nil {
		if v, err := strconv.ParseFloat(fmt.Sprint(field(pc.Object, "value")), 64); err != nil || v >= 0 || field(pc.Object, "preemptionPolicy") != "Never" {
			t.Errorf("balloon PriorityClass value %v, preemptionPolicy %v: want negative, Never", field(pc.Object, "value"), field(pc.Object, "preemptionPolicy"))
		}
	}
}

func checkNATS(t *testing.T, objs []*unstructured.Unstructured, vals common.Values) {
	t.Helper()
	nv := vals["nats"].(map[string]any)
	sts := find(objs, "StatefulSet", "regiment-nats")
	dep := find(objs, "StatefulSet", "regiment-commander")
	url, _ := nv["url"].(string)
	if url != "" {
		if sts != nil {
			t.Error("external NATS, yet the chart runs its own")
		}
		if !slices.Contains(args(dep), "--nats="+url) {
			t.Errorf("Commander args %v, want --nats=%s", args(dep), url)
		}
		return
	}
	if sts == nil {
		t.Fatal("no NATS StatefulSet")
	}
	replicas := nv["embedded"].(map[string]any)["replicas"]
	cluster := replicas == float64(3) || replicas == int64(3)
	// nats-server parses the arguments as the kubelet passes them, with
	// the environment expanded.
	var expanded []string
	for _, a := range args(sts) {
		a = strings.ReplaceAll(a, "$(POD_NAME)", "regiment-nats-0")
		expanded = append(expanded, strings.ReplaceAll(a, "$(NATS_TOKEN)", "secret"))
	}
	opts, err := server.ConfigureOptions(flag.NewFlagSet("nats-server", flag.ContinueOnError), expanded, func() {}, func() {}, func() {})
	if err != nil {
		t.Fatalf("nats-server refuses %q: %v", expanded, err)
	}
	if !opts.JetStream || opts.StoreDir != "/data" || opts.ServerName != "regiment-nats-0" {
		t.Errorf("nats-server: jetstream %v in %q as %q", opts.JetStream, opts.StoreDir, opts.ServerName)
	}
	if cluster != (len(opts.Routes) == 3 && opts.Cluster.Name != "" && opts.Cluster.Port == 6222) {
		t.Errorf("replicas %v: %d routes, cluster %q on port %d", replicas, len(opts.Routes), opts.Cluster.Name, opts.Cluster.Port)
	}
}

// TestChartRefuses: values.schema.json and the templates turn away values
// that would install something broken, naming the value.
func TestChartRefuses(t *testing.T) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		values string
		want   string
	}{
		"a domain without namespaces": {"domains: [{name: payment}]", "namespaces"},
		"a NATS cluster of two":       {"nats: {embedded: {replicas: 2}}", "replicas"},
		"an unknown actuation":        {"actuation: hpa", "actuation"},
		"a misspelt value":            {"persistance: {enabled: false}", "persistance"},
		"a tag as digest":             {"image: {digest: v0.1.0}", "digest"},
		"a domain name with capitals": {"domains: [{name: Payment, namespaces: [shop]}]", "name"},
		"a domain's mode its config contradicts": {"domains: [{name: payment, namespaces: [shop], mode: active}, {name: fraud, namespaces: [shop]}]",
			`domain "payment": domains[].mode is "active" but config.hcl says "recommend"`},
		"a config whose block is not closed": {"config: {hcl: 'cluster \"x\" {\n  capacity_cores = 1\n'}", "config.hcl: a block is not closed"},
		"a config with a stray brace":        {"config: {hcl: 'cluster \"x\" {\n}\n}\n'}", "config.hcl: a } closes no block"},
		"a domain the config lacks":          {"domains: [{name: payment, namespaces: [shop]}, {name: fraud, namespaces: [shop]}, {name: search, namespaces: [search]}]", `domain "search" is in the values' domains but config.hcl has no domain "search" block`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var v map[string]any
			if err := yaml.Unmarshal([]byte(c.values), &v); err != nil {
				t.Fatal(err)
			}
			opts := common.ReleaseOptions{Name: "regiment", Namespace: "regiment", Revision: 1, IsInstall: true}
			vals, err := util.ToRenderValues(ch, v, opts, common.DefaultCapabilities)
			if err == nil {
				_, err = engine.Render(ch, vals)
			}
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one naming %q", err, c.want)
			}
		})
	}
}

// checkRestoreHook: uninstall first runs one pre-delete hook, a Job that
// stops the Soldiers of the release namespace and restores every domain's
// namespaces (`regiment kube restore --all`), as the ServiceAccount
// regiment-restore, whose Roles are in exactly those namespaces.
func checkRestoreHook(t *testing.T, objs []*unstructured.Unstructured, vals common.Values, ns string) {
	t.Helper()
	var hooks []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetAnnotations()["helm.sh/hook"] != "" {
			hooks = append(hooks, o)
		}
	}
	if len(hooks) != 1 || hooks[0].GetKind() != "Job" || hooks[0].GetAnnotations()["helm.sh/hook"] != "pre-delete" {
		t.Fatalf("hooks %v, want one pre-delete Job", kinds(hooks))
	}
	job := hooks[0]
	nss := map[string]bool{}
	for _, d := range vals["domains"].([]any) {
		for _, n := range d.(map[string]any)["namespaces"].([]any) {
			nss[n.(string)] = true
		}
	}
	want := []string{"kube", "restore", "--all", "--namespaces=" + strings.Join(slices.Sorted(maps.Keys(nss)), ","),
		"--kubeconfig=in-cluster", "--stop-soldiers=" + ns}
	got := args(job)
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("hook job args %q, want %q first", got, want)
	}
	if sa := str(podSpec(job), "serviceAccountName"); sa != "regiment-restore" || find(objs, "ServiceAccount", sa) == nil {
		t.Errorf("hook job runs as %q", sa)
	}
	roles := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "Role" && o.GetName() == "regiment-restore" {
			roles[o.GetNamespace()] = true
		}
	}
	nss[ns] = true
	if !maps.Equal(roles, nss) {
		t.Errorf("regiment-restore Roles in %v, want in %v", roles, nss)
	}
}

func TestChartRestoreHookCanBeTurnedOff(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("restoreOnUninstall:\n  enabled: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, _ := renderChart(t, chartCase{"no restore", values, "regiment"})
	for _, o := range objs {
		if o.GetAnnotations()["helm.sh/hook"] != "" || strings.HasSuffix(o.GetName(), "-restore") {
			t.Errorf("restoreOnUninstall.enabled=false renders %s %s", o.GetKind(), o.GetName())
		}
	}
}
