package deploy

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// warnings records the apiserver's warning headers (Pod Security's
// "would violate PodSecurity", deprecations, unknown fields).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns the warnings since the last take.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.list
	w.list = nil
	return l
}

// apiServer applies manifests to the test control plane the way
// `kubectl apply --server-side --field-manager ... --validate=strict` does,
// and fails the test on any error or warning.
type apiServer struct {
	t      *testing.T
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	warn   *warnings
}

func newAPIServer(t *testing.T) *apiServer {
	env := testenv.Require(t)
	cfg := rest.CopyConfig(env.Config)
	w := &warnings{}
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(env.Client.Discovery()))
	return &apiServer{t: t, dyn: dyn, mapper: mapper, warn: w}
}

func (a *apiServer) resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if ns := o.GetNamespace(); ns != "" {
		return a.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

// apply server-side applies o (strict field validation, forced ownership),
// for real or as a dry run.
func (a *apiServer) apply(o *unstructured.Unstructured, dryRun bool) error {
	ri, err := a.resource(o)
	if err != nil {
		return err
	}
	data, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: "regiment-deploy-test", FieldValidation: "Strict", Force: &force}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Patch(context.Background(), o.GetName(), types.ApplyPatchType, data, opts)
	return err
}

// applyAll applies objs: Namespaces and CRDs first and for real (the rest
// needs them), then every other object (dryRun: as a dry run), then, as a
// dry run, a Pod made from each workload's template, which Pod Security
// admission enforces on (a workload only gets warnings). Every error and
// every warning is a test error naming the object.
func (a *apiServer) applyAll(objs []*unstructured.Unstructured, dryRun bool) {
	a.t.Helper()
	first := func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Namespace" || o.GetKind() == "CustomResourceDefinition"
	}
	for _, o := range objs {
		if first(o) {
			a.check(o, a.apply(o, false))
		}
	}
	a.mapper.Reset()
	for _, o := range objs {
		if !first(o) {
			a.check(o, a.apply(o, dryRun))
		}
	}
	for _, o := range objs {
		if pod := podOf(o); pod != nil {
			a.check(pod, a.createDryRun(pod))
		}
	}
}

func (a *apiServer) check(o *unstructured.Unstructured, err error) {
	a.t.Helper()
	what := fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
	if err != nil {
		a.t.Errorf("%s: %v", what, err)
	}
	for _, w := range a.warn.take() {
		a.t.Errorf("%s: warning: %s", what, w)
	}
}

func (a *apiServer) createDryRun(o *unstructured.Unstructured) error {
	ri, err := a.resource(o)
	if err != nil {
		return err
	}
	_, err = ri.Create(context.Background(), o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	return err
}

// podOf is the Pod a Deployment or StatefulSet would create (its volume
// claim templates as claims), or nil for other kinds.
func podOf(o *unstructured.Unstructured) *unstructured.Unstructured {
	if o.GetKind() != "Deployment" && o.GetKind() != "StatefulSet" {
		return nil
	}
	tmpl, _ := field(o.Object, "spec", "template").(map[string]any)
	spec, _ := tmpl["spec"].(map[string]any)
	if spec == nil {
		return nil
	}
	spec = deepCopy(spec).(map[string]any)
	claims, _ := field(o.Object, "spec", "volumeClaimTemplates").([]any)
	for _, c := range claims {
		name := str(c.(map[string]any), "metadata", "name")
		vols, _ := spec["volumes"].([]any)
		spec["volumes"] = append(vols, map[string]any{"name": name,
			"persistentVolumeClaim": map[string]any{"claimName": name + "-" + o.GetName() + "-0"}})
	}
	meta := map[string]any{"name": strings.ToLower(o.GetKind()) + "-" + o.GetName(), "namespace": o.GetNamespace()}
	if labels, ok := field(tmpl, "metadata", "labels").(map[string]any); ok {
		meta["labels"] = deepCopy(labels)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}}
}

// deepCopy copies the maps and slices of a decoded manifest (kustomize's
// hold ints, which unstructured's DeepCopy refuses).
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = deepCopy(e)
		}
		return s
	default:
		return v
	}
}

// restricted is a Namespace that enforces, and warns about, Pod Security
// "restricted".
func restricted(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "labels": map[string]any{
			"pod-security.kubernetes.io/enforce": "restricted",
			"pod-security.kubernetes.io/warn":    "restricted",
			"pod-security.kubernetes.io/audit":   "restricted",
		}}}}
}

// waitEstablished waits until the CRD named name serves its resources.
func (a *apiServer) waitEstablished(name string) {
	a.t.Helper()
	crds := a.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		o, err := crds.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			a.t.Fatal(err)
		}
		if o != nil {
			conds, _ := field(o.Object, "status", "conditions").([]any)
			for _, c := range conds {
				cm := c.(map[string]any)
				if cm["type"] == "Established" && cm["status"] == "True" {
					a.mapper.Reset()
					return
				}
			}
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("CRD %s not established in 30s", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kinds counts objs by kind, "Kind=n" sorted, for logs.
func kinds(objs []*unstructured.Unstructured) string {
	n := map[string]int{}
	for _, o := range objs {
		n[o.GetKind()]++
	}
	var out []string
	for k, c := range n {
		out = append(out, fmt.Sprintf("%s=%d", k, c))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
