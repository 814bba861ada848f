package kube

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// The integration tests share one control plane per test binary (etcd,
// kube-apiserver and, when built, the controller-manager, scheduler and kwok),
// each test in its own namespace.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{Full: true})) }

// deployment creates a Deployment of replicas pods labelled app=name; with
// fake set its pods tolerate kwok's fake nodes.
func deployment(t *testing.T, c kubernetes.Interface, ns, name string, replicas int32, fake bool) *appsv1.Deployment {
	t.Helper()
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}
	if fake {
		spec.Tolerations = []corev1.Toleration{{Key: testenv.FakeNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
	d, err := c.AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func statefulSet(t *testing.T, c kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	_, err := c.AppsV1().StatefulSets(ns).Create(context.Background(), &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// hpa creates an HPA over Deployment name with bounds [lo, hi] and a CPU
// utilisation target.
func hpa(t *testing.T, c kubernetes.Interface, ns, name string, lo, hi int32) {
	t.Helper()
	util := int32(70)
	_, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(context.Background(), &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    &lo, MaxReplicas: hi,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &util}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// writeCounter counts the writes (requests other than GET, LIST or WATCH that
// succeeded; a write refused on a conflict changed nothing) made through a
// rest.Config, by method and resource; with attempts, every request other
// than GET, whatever its answer.
type writeCounter struct {
	attempts bool
	mu       sync.Mutex
	counts   map[string]int // "PUT horizontalpodautoscalers" -> n
}

// client returns a clientset over base whose writes w counts.
func (w *writeCounter) client(t *testing.T, base *rest.Config) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(base)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if r.Method != http.MethodGet && (w.attempts || err == nil && resp.StatusCode < 300) {
				w.mu.Lock()
				if w.counts == nil {
					w.counts = map[string]int{}
				}
				w.counts[r.Method+" "+resourceOf(r.URL.Path)]++
				w.mu.Unlock()
			}
			return resp, err
		})
	})
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// total is the writes counted to resources whose name contains any of kinds.
func (w *writeCounter) total(kinds ...string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for k, v := range w.counts {
		for _, kind := range kinds {
			if strings.Contains(k, kind) {
				n += v
				break
			}
		}
	}
	return n
}

func (w *writeCounter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprint(w.counts)
}

// resourceOf turns /apis/apps/v1/namespaces/ns/deployments/web/scale into
// "deployments/scale".
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			rest := parts[i+2:]
			if len(rest) == 3 {
				return rest[0] + "/" + rest[2]
			}
			return rest[0]
		}
	}
	return path
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// runObserver runs o until the test ends and waits for its first sync.
func runObserver(t *testing.T, o *Observer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		o.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	testenv.Eventually(t, 30*time.Second, func() (bool, string) { return o.Synced(), "informers not synced" })
}
