package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// TestMain starts a kube-apiserver and etcd for the `regiment kube` tests
// (internal/adapter/kube/testenv); without their binaries those tests skip.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

func TestKubeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"kube"}, "Usage: regiment kube restore"},
		{"unknown subcommand", []string{"kube", "undo"}, `unknown subcommand "undo"`},
		{"neither --domain nor --all", []string{"kube", "restore", "--kubeconfig", "k"}, "exactly one of --domain D and --all"},
		{"both --domain and --all", []string{"kube", "restore", "--all", "--domain", "pay", "--kubeconfig", "k"}, "exactly one of"},
		{"a stray argument", []string{"kube", "restore", "--all", "--kubeconfig", "k", "pay"}, `unexpected argument "pay"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := dispatch(context.Background(), c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut.String(), c.want)
			}
		})
	}
}

var nsSeq atomic.Int64

// testNamespace creates a namespace for t, deleted afterwards.
func testNamespace(t *testing.T, c kubernetes.Interface, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nsSeq.Add(1))
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return name
}

// twentyApps creates app-0..app-19 in ns, each a Deployment with an HPA
// of its own bounds [1+i%4, 10+i].
func twentyApps(t *testing.T, c kubernetes.Interface, ns string) []kube.Target {
	t.Helper()
	ctx := context.Background()
	var targets []kube.Target
	for i := range 20 {
		name := fmt.Sprintf("app-%d", i)
		labels := map[string]string{"app": name}
		one, lo, util := int32(1), int32(1+i%4), int32(70)
		_, err := c.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app"}}}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
				MinReplicas:    &lo, MaxReplicas: int32(10 + i),
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &util}}}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, kube.Target{
			App:         soldier.App{Index: i, Name: "pay/" + name, CPU: 0.1, Min: 2, Max: 60, Capacity: 10},
			WorkloadRef: domains.WorkloadRef{Kind: domains.KindDeployment, Namespace: ns, Name: name, Selector: "app=" + name, HPA: name},
		})
	}
	return targets
}

// hpaState is each HPA's spec in ns as JSON and its regiment.io/ keys.
func hpaState(t *testing.T, c kubernetes.Interface, ns string) (specs map[string]string, marks []string) {
	t.Helper()
	l, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	specs = map[string]string{}
	for _, h := range l.Items {
		b, _ := json.Marshal(h.Spec)
		specs[h.Name] = string(b)
		for _, kv := range []map[string]string{h.Labels, h.Annotations} {
			for k := range kv {
				if strings.HasPrefix(k, "regiment.io/") {
					marks = append(marks, h.Name+": "+k)
				}
			}
		}
	}
	return specs, marks
}

// TestKubeRestoreGivesBackTwentyHPAs: a Soldier of domain pay bounds 20
// HPAs of distinct bounds; `regiment kube restore --domain pay` gives every
// one its spec back byte for byte and leaves no regiment.io/ key. The
// Soldier bounds them again; then the chart's uninstall hook runs: the
// pre-delete Job rendered from deploy/chart/regiment, its args run in
// process through dispatch as the Job's ServiceAccount (impersonated, with
// the chart's Roles applied), with a kubeconfig in place of "in-cluster".
// It stops the chart's Soldier and gives the HPAs back byte for byte.
func TestKubeRestoreGivesBackTwentyHPAs(t *testing.T) {
	env := testenv.Require(t)
	ctx := context.Background()
	appNs, relNs := testNamespace(t, env.Client, "shop"), testNamespace(t, env.Client, "regiment")
	targets := twentyApps(t, env.Client, appNs)
	original, _ := hpaState(t, env.Client, appNs)
	act, err := kube.NewActuator(env.Client, kube.ActuatorConfig{Actuation: domains.ActuateHPABounds, HPAHeadroom: 0.5,
		Lease: relNs + "/" + kube.SoldierLeaseName("pay"), Domain: "pay", Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	bound := func() {
		t.Helper()
		var changes []soldier.Change
		for i := range targets {
			changes = append(changes, soldier.Change{App: i, Replicas: int32(30 + i)})
		}
		act.ForgetMarks()
		if err := act.Apply(ctx, changes); err != nil {
			t.Fatal(err)
		}
		specs, marks := hpaState(t, env.Client, appNs)
		if specs["app-7"] == original["app-7"] || len(marks) == 0 {
			t.Fatalf("not bounded: %s, marks %v", specs["app-7"], marks)
		}
	}
	restored := func(when string, args ...string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := dispatch(ctx, args, &out, &errOut); code != 0 {
			t.Fatalf("%s: regiment %s: exit %d\n%s%s", when, strings.Join(args, " "), code, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), "20 objects restored") {
			t.Errorf("%s: output\n%s", when, out.String())
		}
		specs, marks := hpaState(t, env.Client, appNs)
		for name, want := range original {
			if specs[name] != want {
				t.Errorf("%s: %s spec\n%s\nwant the original\n%s", when, name, specs[name], want)
			}
		}
		if len(marks) > 0 {
			t.Errorf("%s: regiment.io/ keys left: %v", when, marks)
		}
	}

	bound()
	restored("regiment kube restore --domain", "kube", "restore", "--domain", "pay", "--namespaces", appNs, "--kubeconfig", env.Kubeconfig)

	// Uninstall: the chart's hook, as its ServiceAccount.
	objs := renderChart(t, relNs, appNs)
	job := hookJob(t, objs)
	soldierName := "regiment-soldier-pay"
	createRendered(t, env.Client, objs, soldierName, "regiment-restore")
	bound()
	c := job.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/regiment"}) || !slices.Contains(c.Args, "--kubeconfig=in-cluster") {
		t.Fatalf("hook job runs %v %v, want /regiment kube restore ... --kubeconfig=in-cluster", c.Command, c.Args)
	}
	args := slices.Clone(c.Args)
	args[slices.Index(args, "--kubeconfig=in-cluster")] = "--kubeconfig=" + impersonating(t, env.Kubeconfig, "system:serviceaccount:"+relNs+":"+job.Spec.Template.Spec.ServiceAccountName)
	t.Logf("hook: /regiment %s", strings.Join(c.Args, " "))
	restored("the chart's pre-delete hook", args...)
	s, err := env.Client.AppsV1().Deployments(relNs).GetScale(ctx, soldierName, metav1.GetOptions{})
	if err != nil || s.Spec.Replicas != 0 {
		t.Errorf("the soldier after the hook: %v replicas, %v; want stopped", s.Spec.Replicas, err)
	}
}

// renderChart renders deploy/chart/regiment as `helm template` does,
// release "regiment" in relNs with one domain, pay, in appNs.
func renderChart(t *testing.T, relNs, appNs string) []*unstructured.Unstructured {
	t.Helper()
	ch, err := loader.Load("../../deploy/chart/regiment")
	if err != nil {
		t.Fatal(err)
	}
	// The chart runs the domains of the config it ships: the hook's objects
	// need no config of their own, so an existing ConfigMap stands in.
	user := map[string]any{"domains": []any{map[string]any{"name": "pay", "namespaces": []any{appNs}}},
		"config": map[string]any{"existingConfigMap": "regiment-config"}}
	opts := common.ReleaseOptions{Name: "regiment", Namespace: relNs, Revision: 1, IsInstall: true}
	vals, err := util.ToRenderValues(ch, user, opts, common.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for name, text := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(m) > 0 {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out
}

// hookJob is the chart's one pre-delete hook, a Job.
func hookJob(t *testing.T, objs []*unstructured.Unstructured) *batchv1.Job {
	t.Helper()
	var jobs []*batchv1.Job
	for _, o := range objs {
		if o.GetAnnotations()["helm.sh/hook"] == "pre-delete" {
			if o.GetKind() != "Job" {
				t.Fatalf("pre-delete hook %s %s is not a Job", o.GetKind(), o.GetName())
			}
			var j batchv1.Job
			convert(t, o, &j)
			jobs = append(jobs, &j)
		}
	}
	if len(jobs) != 1 {
		t.Fatalf("%d pre-delete hook jobs, want 1", len(jobs))
	}
	return jobs[0]
}

func convert(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// createRendered creates, from the rendered objects, the Deployment named
// soldier and the ServiceAccount, Roles and RoleBindings named rbac.
func createRendered(t *testing.T, c kubernetes.Interface, objs []*unstructured.Unstructured, soldier, rbac string) {
	t.Helper()
	ctx, opts := context.Background(), metav1.CreateOptions{}
	for _, o := range objs {
		var err error
		switch {
		case o.GetKind() == "Deployment" && o.GetName() == soldier:
			var d appsv1.Deployment
			convert(t, o, &d)
			_, err = c.AppsV1().Deployments(d.Namespace).Create(ctx, &d, opts)
		case o.GetName() != rbac:
		case o.GetKind() == "ServiceAccount":
			var sa corev1.ServiceAccount
			convert(t, o, &sa)
			_, err = c.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, &sa, opts)
		case o.GetKind() == "Role":
			var r rbacv1.Role
			convert(t, o, &r)
			_, err = c.RbacV1().Roles(r.Namespace).Create(ctx, &r, opts)
		case o.GetKind() == "RoleBinding":
			var b rbacv1.RoleBinding
			convert(t, o, &b)
			_, err = c.RbacV1().RoleBindings(b.Namespace).Create(ctx, &b, opts)
		}
		if err != nil {
			t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
}

// impersonating writes a copy of kubeconfig whose users act as user.
func impersonating(t *testing.T, kubeconfig, user string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = user
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
