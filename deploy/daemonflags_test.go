package deploy

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// httpTokenDir is where the chart mounts the daemons' HTTP token
// (http.tokenSecret).
const httpTokenDir = "/etc/regiment-http"

// daemons are the rendered Commander StatefulSet and Soldier Deployments.
func daemons(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		c := o.GetLabels()["app.kubernetes.io/component"]
		if (o.GetKind() == "StatefulSet" || o.GetKind() == "Deployment") && (c == "commander" || c == "soldier") {
			out = append(out, o)
		}
	}
	return out
}

// flagValues are the values of --name=... among a container's args.
func flagValues(as []string, name string) []string {
	var out []string
	for _, a := range as {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestHelmTemplateHTTPTokenAndLogFormat: `helm template` passes every
// daemon (the Commander and each Soldier) --log-format from logFormat, and,
// exactly when http.tokenSecret names a Secret, --http-token-file naming the
// file that the Secret's key is mounted as (read-only, group-readable, no
// other key), with the ServiceMonitor sending the same Secret's key as its
// bearer token; without it no such flag, volume, mount or authorization.
// No other pod (NATS, the restore hook) gets the token.
func TestHelmTemplateHTTPTokenAndLogFormat(t *testing.T) {
	cases := []struct {
		name        string
		set         []string
		secret, key string // "": no token
		format      string
		monitor     bool
	}{
		{"defaults: text logs, no token", nil, "", "", "text", false},
		{"defaults with a ServiceMonitor: no authorization", []string{"serviceMonitor.enabled=true"}, "", "", "text", true},
		{"json logs alone", []string{"logFormat=json"}, "", "", "json", false},
		{"a token, its default key, no ServiceMonitor", []string{"http.tokenSecret.name=regiment-http"}, "regiment-http", "token", "text", false},
		{"a token under its own key, json logs, a ServiceMonitor",
			[]string{"http.tokenSecret.name=scrape-auth", "http.tokenSecret.key=bearer", "logFormat=json", "serviceMonitor.enabled=true"},
			"scrape-auth", "bearer", "json", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var set []string
			for _, s := range c.set {
				set = append(set, "--set", s)
			}
			out, stderr, ok := helmTemplate(t, set...)
			if !ok {
				t.Fatal(stderr)
			}
			objs := decodeManifests(t, "helm template", out)
			ds := daemons(objs)
			if len(ds) != 3 { // the Commander, payment's and fraud's Soldiers
				t.Fatalf("%d daemons rendered, want 3", len(ds))
			}
			for _, d := range ds {
				as := args(d)
				if got := flagValues(as, "log-format"); !slices.Equal(got, []string{c.format}) {
					t.Errorf("%s: --log-format %v, want exactly [%s] (args %v)", d.GetName(), got, c.format, as)
				}
				files := flagValues(as, "http-token-file")
				byPath, byName := mounts(t, d)
				vol, mounted := byPath[httpTokenDir]
				if c.secret == "" {
					if len(files) > 0 || mounted || byName["http-token"] != nil {
						t.Errorf("%s: no token asked, but --http-token-file %v, mount %v, volume %v", d.GetName(), files, mounted, byName["http-token"])
					}
					continue
				}
				if len(files) != 1 {
					t.Errorf("%s: --http-token-file %v, want once (args %v)", d.GetName(), files, as)
					continue
				}
				if !mounted || path.Dir(files[0]) != httpTokenDir {
					t.Errorf("%s: --http-token-file=%s, but nothing mounted at %s (mounts %v)", d.GetName(), files[0], path.Dir(files[0]), byPath)
					continue
				}
				if !readOnlyMount(d, httpTokenDir) {
					t.Errorf("%s: %s is not mounted read-only", d.GetName(), httpTokenDir)
				}
				sec, _ := byName[vol]["secret"].(map[string]any)
				items, _ := sec["items"].([]any)
				want := fmt.Sprint([]any{map[string]any{"key": c.key, "path": path.Base(files[0])}})
				if sec["secretName"] != c.secret || fmt.Sprint(items) != want {
					t.Errorf("%s: volume %s is %v, want Secret %s with only key %s as %s", d.GetName(), vol, byName[vol], c.secret, c.key, path.Base(files[0]))
				}
				if mode := fmt.Sprint(sec["defaultMode"]); mode != "288" { // 0440
					t.Errorf("%s: token file mode %s, want 288 (0440: the pods' group, fsGroup 65532, reads it)", d.GetName(), mode)
				}
			}
			for _, o := range objs {
				if spec := podSpec(o); spec != nil && !slices.Contains(ds, o) && strings.Contains(fmt.Sprint(spec), "http-token") {
					t.Errorf("%s %s is given the daemons' HTTP token: %v", o.GetKind(), o.GetName(), spec)
				}
			}
			sm := find(objs, "ServiceMonitor", "regiment")
			if (sm != nil) != c.monitor {
				t.Fatalf("ServiceMonitor present %v, want %v", sm != nil, c.monitor)
			}
			if sm == nil {
				return
			}
			eps, _ := field(sm.Object, "spec", "endpoints").([]any)
			if len(eps) != 1 {
				t.Fatalf("ServiceMonitor endpoints %v, want one", eps)
			}
			auth := field(eps[0].(map[string]any), "authorization")
			want := "<nil>"
			if c.secret != "" {
				want = fmt.Sprint(map[string]any{"type": "Bearer", "credentials": map[string]any{"name": c.secret, "key": c.key}})
			}
			if got := fmt.Sprint(auth); got != want {
				t.Errorf("ServiceMonitor authorization %s, want %s", got, want)
			}
		})
	}
}

// readOnlyMount reports whether o's first container mounts dir read-only.
func readOnlyMount(o *unstructured.Unstructured, dir string) bool {
	cs, _ := podSpec(o)["containers"].([]any)
	ms, _ := cs[0].(map[string]any)["volumeMounts"].([]any)
	for _, m := range ms {
		mm := m.(map[string]any)
		if mm["mountPath"] == dir {
			return mm["readOnly"] == true
		}
	}
	return false
}

// TestHelmTemplateRefusesBadHTTPAndLogValues: the values schema makes
// `helm template` fail, naming the value, on a log format the daemons do not
// know, a token Secret without a key or with a name Kubernetes refuses, and
// a misspelt field under http.
func TestHelmTemplateRefusesBadHTTPAndLogValues(t *testing.T) {
	for _, c := range []struct {
		set, want string
	}{
		{"logFormat=xml", "/logFormat"},
		{"logFormat=JSON", "/logFormat"},
		{"http.tokenSecret.key=", "/http/tokenSecret/key"},
		{"http.tokenSecret.name=Regiment_HTTP", "/http/tokenSecret/name"},
		{"http.tokenSecret.nmae=regiment-http", "nmae"},
		{"http.token=regiment-http", "token"},
	} {
		t.Run(c.set, func(t *testing.T) {
			out, stderr, ok := helmTemplate(t, "--set", c.set)
			if ok {
				t.Fatalf("helm template --set %s rendered:\n%.300s", c.set, out)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("helm template --set %s: %s\nwant it to name %s", c.set, stderr, c.want)
			}
		})
	}
}

// TestChartUpgradedWithReusedValuesFromAnOlderChart: `helm upgrade
// --reuse-values` renders the new chart with the old release's values
// alone (the new chart's defaults dropped), so a release installed before
// logFormat and http existed has neither; the daemons then log as text and
// have no token, instead of failing to render or starting with an empty
// --log-format.
func TestChartUpgradedWithReusedValuesFromAnOlderChart(t *testing.T) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]any{}
	for k, v := range ch.Values {
		if k != "http" && k != "logFormat" {
			old[k] = v
		}
	}
	old["serviceMonitor"] = map[string]any{"enabled": true, "interval": "30s", "labels": map[string]any{}}
	ch.Values = map[string]any{} // as helm's upgrade with ReuseValues does
	opts := common.ReleaseOptions{Name: "regiment", Namespace: "regiment", Revision: 2, IsUpgrade: true}
	vals, err := util.ToRenderValues(ch, old, opts, common.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("render with an older chart's values: %v", err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, n := range names {
		if !strings.HasSuffix(n, "NOTES.txt") {
			objs = append(objs, decodeManifests(t, n, files[n])...)
		}
	}
	ds := daemons(objs)
	if len(ds) != 3 {
		t.Fatalf("%d daemons rendered, want 3", len(ds))
	}
	for _, d := range ds {
		as := args(d)
		if got := flagValues(as, "log-format"); !slices.Equal(got, []string{"text"}) {
			t.Errorf("%s: --log-format %v, want [text]", d.GetName(), got)
		}
		if got := flagValues(as, "http-token-file"); len(got) > 0 {
			t.Errorf("%s: --http-token-file %v without http.tokenSecret", d.GetName(), got)
		}
		if byPath, _ := mounts(t, d); byPath[httpTokenDir] != "" {
			t.Errorf("%s mounts %s without http.tokenSecret", d.GetName(), httpTokenDir)
		}
	}
	sm := find(objs, "ServiceMonitor", "regiment")
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	if eps, _ := field(sm.Object, "spec", "endpoints").([]any); len(eps) != 1 || field(eps[0].(map[string]any), "authorization") != nil {
		t.Errorf("ServiceMonitor endpoints %v, want one without authorization", eps)
	}
}
