package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/promclient"
	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// pod creates a pod of app with the given status (nodeName "" leaves it
// unscheduled: no fake node tolerates it).
func pod(t *testing.T, c kubernetes.Interface, ns, name, app, node string, phase corev1.PodPhase, ready bool, restarts int32) {
	t.Helper()
	ctx := context.Background()
	p, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app}},
		// No scheduler serves this name: the pod keeps the node it was given,
		// or none, whatever controllers run beside the test.
		Spec: corev1.PodSpec{NodeName: node, SchedulerName: "regiment-test-unscheduled",
			Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	// Controllers running beside the test (kwok, the node lifecycle controller)
	// may write the pod too: retry on conflict from the latest version.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if p, err = c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		p.Status = corev1.PodStatus{Phase: phase,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "example.invalid/app", RestartCount: restarts, Ready: ready}},
		}
		_, err := c.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// promOver is a client of a Prometheus serving series.
func promOver(t *testing.T, series ...fmt.Stringer) *promclient.Client {
	t.Helper()
	p, err := promclient.New(domains.Prometheus{URL: promtest.New(t, promtest.Script(series...)).URL, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestObserverCountsPodsAndReadsMetrics(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "web", 0, false)
	deployment(t, env.Client, ns, "api", 0, false)
	// web: 2 ready (one restarted 3 times), 1 starting, 1 pending, 1 finished.
	pod(t, env.Client, ns, "web-a", "web", "node-x", corev1.PodRunning, true, 3)
	pod(t, env.Client, ns, "web-b", "web", "node-x", corev1.PodRunning, true, 0)
	pod(t, env.Client, ns, "web-c", "web", "node-x", corev1.PodRunning, false, 1)
	pod(t, env.Client, ns, "web-d", "web", "", corev1.PodPending, false, 0)
	pod(t, env.Client, ns, "web-e", "web", "node-x", corev1.PodSucceeded, false, 9)
	pod(t, env.Client, ns, "other", "api", "node-x", corev1.PodRunning, true, 0)

	// web's two pods serve 300 rps, 1% failed; api 100 rps, 5% failed.
	p := promOver(t,
		appSeries{ns: ns, pod: "web-6d4cf-x2k4p", ok: 148.5, failed: 1.5, cpu: 0.8, mem: 600, rpm: 2},
		appSeries{ns: ns, pod: "web-6d4cf-b7n2c", ok: 148.5, failed: 1.5, cpu: 0.8, mem: 200, rpm: 0},
		appSeries{ns: ns, pod: "api-7c9bd-q8r2m", ok: 95, failed: 5, cpu: 0.3, mem: 100, rpm: 0},
	)
	targets := []Target{target(0, ns, "web", domains.KindDeployment, 1, 50), target(1, ns, "api", domains.KindDeployment, 1, 50)}
	obs := NewObserver(env.Client, ObserverConfig{Actuation: domains.ActuateReplicas, Targets: targets, Prometheus: p,
		MaxAge: time.Minute, TargetUtilisation: 0.5})
	runObserver(t, obs)

	o := &soldier.Observation{Apps: make([]soldier.AppObservation, 2)}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		if err := obs.Observe(context.Background(), o); err != nil {
			return false, err.Error()
		}
		w := o.Apps[0]
		return w.Ready == 2 && w.Starting == 1 && w.Pending == 1 && o.Apps[1].Ready == 1, fmt.Sprintf("%+v", o.Apps)
	})
	st := obs.Status()
	if st[0].Restarts != 4 || !st[0].Found || st[0].Stale() {
		t.Errorf("web status %+v, want 4 restarts (the finished pod not counted), found, fresh", st[0])
	}
	w := o.Apps[0]
	if !near(w.RPS, 300) || !near(w.P99, p99InBucket) || !near(w.ErrorRate, 0.01) || !near(w.CPUUtil, 0.8) ||
		!near(w.MemUtil, 0.4) || !near(w.RestartRate, 2) {
		t.Errorf("web metrics %+v", w)
	}
	// Domain: the largest p99, the request-weighted error rate.
	if !near(o.P99, p99InBucket) || !near(o.ErrorRate, (300*0.01+100*0.05)/400) {
		t.Errorf("domain p99 %g, error rate %g", o.P99, o.ErrorRate)
	}

	// A workload that does not exist is reported, not an error.
	gone := NewObserver(env.Client, ObserverConfig{Actuation: domains.ActuateReplicas, TargetUtilisation: 0.5,
		Targets: []Target{target(0, ns, "gone", domains.KindDeployment, 1, 5)}})
	runObserver(t, gone)
	o1 := &soldier.Observation{Apps: make([]soldier.AppObservation, 1)}
	if err := gone.Observe(context.Background(), o1); err != nil || gone.Status()[0].Found {
		t.Errorf("missing workload: %v, %+v", err, gone.Status())
	}
}

// TestObserverReadsCallersCalls: the apps that call the domain's apps are
// queried for their request rate only, and each app's CallerRPS is its
// callers' calls; a caller with no series adds none. Apps given later
// (SetTargets, SetCallers) are read from the next Observe.
func TestObserverReadsCallersCalls(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "scoring", 0, false)
	deployment(t, env.Client, ns, "rules", 0, false)
	// checkout (another domain's app: not watched, only queried) serves 100
	// rps; scoring its own 150, rules 40 and 60.
	p := promOver(t,
		appSeries{ns: ns, pod: "checkout-6d4cf-x2k4p", ok: 100, failed: 0, cpu: 0.5, mem: 100, rpm: 0},
		appSeries{ns: ns, pod: "scoring-6d4cf-x2k4p", ok: 150, failed: 0, cpu: 0.5, mem: 100, rpm: 0},
		appSeries{ns: ns, pod: "rules-7c9bd-q8r2m", ok: 40, failed: 0, cpu: 0.5, mem: 100, rpm: 0},
		appSeries{ns: ns, pod: "rules-7c9bd-b7n2c", ok: 60, failed: 0, cpu: 0.5, mem: 100, rpm: 0},
	)
	scoring, rules := target(0, ns, "scoring", domains.KindDeployment, 1, 50), target(1, ns, "rules", domains.KindDeployment, 1, 50)
	callers := &CallerTargets{
		Targets: []Target{target(0, ns, "checkout", domains.KindDeployment, 1, 50), target(1, ns, "gone", domains.KindDeployment, 1, 50)},
		Of:      [][]soldier.Caller{{{App: 0, Ratio: 2}, {App: 1, Ratio: 5}}},
	}
	obs := NewObserver(env.Client, ObserverConfig{Actuation: domains.ActuateReplicas, Targets: []Target{scoring},
		Callers: callers, Prometheus: p, MaxAge: time.Minute, TargetUtilisation: 0.5})
	runObserver(t, obs)
	o := &soldier.Observation{Apps: make([]soldier.AppObservation, 1)}
	if err := obs.Observe(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if s := o.Apps[0]; !near(s.CallerRPS, 200) || !near(s.RPS, 150) {
		t.Errorf("scoring: %g rps of calls and %g of its own, want 200 (checkout's 100 x 2; gone has no series) and 150", s.CallerRPS, s.RPS)
	}

	// Discovery adds rules, called by checkout three times a request, before
	// scoring: both are read at the next Observe.
	if err := obs.SetTargets([]Target{rules, scoring}); err != nil {
		t.Fatal(err)
	}
	obs.SetCallers(&CallerTargets{Targets: callers.Targets[:1], Of: [][]soldier.Caller{{{App: 0, Ratio: 3}}, {{App: 0, Ratio: 2}}}})
	o = &soldier.Observation{Apps: make([]soldier.AppObservation, 2)}
	if err := obs.Observe(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if r, s := o.Apps[0], o.Apps[1]; !near(r.RPS, 100) || !near(r.CallerRPS, 300) || !near(s.RPS, 150) || !near(s.CallerRPS, 200) {
		t.Errorf("after SetTargets: rules %g rps, %g of calls (want 100, 300); scoring %g, %g (want 150, 200)", r.RPS, r.CallerRPS, s.RPS, s.CallerRPS)
	}
	if st := obs.Status(); st[0].Metrics[MetricRPS].Freshness != Fresh {
		t.Errorf("rules' request rate %v, want fresh", st[0].Metrics[MetricRPS])
	}

	// No callers: no calls.
	obs.SetCallers(nil)
	if err := obs.Observe(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if o.Apps[0].CallerRPS != 0 || o.Apps[1].CallerRPS != 0 {
		t.Errorf("without callers: %+v", o.Apps)
	}
}

// readyAfter sets ready pod name's Ready condition to have turned true d
// after the pod's creation.
func readyAfter(t *testing.T, c kubernetes.Interface, ns, name string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady {
				p.Status.Conditions[i].LastTransitionTime = metav1.NewTime(p.CreationTimestamp.Add(d))
			}
		}
		_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestObserverMeasuresPodStartup: an app's StartupSeconds is the median,
// over its ready pods, of creation to ready; pods not ready do not count.
func TestObserverMeasuresPodStartup(t *testing.T) {
	env := testenv.Require(t)
	ns := testenv.Namespace(t, env.Client)
	deployment(t, env.Client, ns, "web", 0, false)
	deployment(t, env.Client, ns, "api", 0, false)
	for name, d := range map[string]time.Duration{"web-a": 10 * time.Second, "web-b": 30 * time.Second, "web-c": 14 * time.Second} {
		pod(t, env.Client, ns, name, "web", "node-x", corev1.PodRunning, true, 0)
		readyAfter(t, env.Client, ns, name, d)
	}
	pod(t, env.Client, ns, "web-d", "web", "node-x", corev1.PodRunning, false, 0) // starting: no startup yet
	pod(t, env.Client, ns, "api-a", "api", "node-x", corev1.PodRunning, false, 0)
	targets := []Target{target(0, ns, "web", domains.KindDeployment, 1, 50), target(1, ns, "api", domains.KindDeployment, 1, 50)}
	obs := NewObserver(env.Client, ObserverConfig{Actuation: domains.ActuateReplicas, Targets: targets, MaxAge: time.Minute, TargetUtilisation: 0.5})
	runObserver(t, obs)
	o := &soldier.Observation{Apps: make([]soldier.AppObservation, 2)}
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		if err := obs.Observe(context.Background(), o); err != nil {
			return false, err.Error()
		}
		return o.Apps[0].Ready == 3 && o.Apps[0].StartupSeconds == 14, fmt.Sprintf("%+v", o.Apps[0])
	})
	if s := o.Apps[1].StartupSeconds; s != 0 {
		t.Errorf("api, no pod ready, has startup %g s, want 0 (unknown)", s)
	}
}
