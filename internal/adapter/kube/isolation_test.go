package kube_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/daemon"
)

// isolationRun is what one run of the isolation test saw.
type isolationRun struct {
	ns      string
	written []map[string]int32 // per tick, the targets written by app name
	failing [][]soldier.Failing
	minimum map[string]int32 // each HPA's minReplicas at the end
	reg     *prometheus.Registry
	events  *kube.Events
}

// runIsolation runs a Soldier over 50 apps ("web-<i>", a Deployment and an
// HPA each, hpa-bounds) for ticks ticks of demand that moves every tick,
// with the HPAs of the apps in missing deleted and updates of app denied's
// HPA refused by a ValidatingAdmissionPolicy (denied < 0: none). Each tick
// feeds the daemon's per-app metrics and the adapter's Events, as the
// daemon does.
func runIsolation(t *testing.T, env *testenv.Env, apps, ticks int, missing []int, denied int) isolationRun {
	t.Helper()
	ctx := context.Background()
	ns := testenv.Namespace(t, env.Client)
	names := make([]string, apps)
	for i := range apps {
		names[i] = fmt.Sprintf("web-%d", i)
		kube.CreateDeployment(t, env.Client, ns, names[i], 1)
		kube.CreateHPA(t, env.Client, ns, names[i], 1, 100)
	}
	for _, i := range missing {
		if err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Delete(ctx, names[i], metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if denied >= 0 {
		freezeHPA(t, env.Client, ns, names[denied])
	}
	prom := kube.NewPromServer(t)
	cfg := kube.SoldierTestConfig(t, ns, prom.URL(), apps, `  actuation = "hpa-bounds"
  target_utilisation = 0.5`)
	ad, err := kube.NewAdapter(env.Client, cfg, "shop", "soldier-0")
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ad.Run(rctx, hclog.NewNullLogger()) }()
	t.Cleanup(func() { cancel(); <-done })
	scfg, err := soldier.NewConfig(cfg, "shop")
	if err != nil {
		t.Fatal(err)
	}
	rec := &lastRecord{}
	s := soldier.New(scfg, &soldier.SqrtStaffing{}, ad.Observer, ad.Actuator, nil, rec)
	run := isolationRun{ns: ns, reg: prometheus.NewPedanticRegistry(), events: ad.Events, minimum: map[string]int32{}}
	m := daemon.NewMetrics(run.reg, "soldier")

	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rps := make([]float64, apps)
	for tick := range ticks {
		for i := range rps { // 10+i rps, up 20% a tick: targets move every tick
			rps[i] = float64(10+i) * (1 + 0.2*float64(tick))
		}
		prom.SetAppRates(t, ns, names, rps, 0.5)
		if tick%6 == 0 {
			acceptDirective(t, s, cfg, uint64(tick+1), now)
		}
		res, err := s.Tick(ctx, now)
		if err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		written := map[string]int32{}
		for _, c := range rec.r.Changes {
			written[strings.TrimPrefix(c.App, "shop/")] = c.Replicas
		}
		run.written = append(run.written, written)
		run.failing = append(run.failing, slices.Clone(res.Failing))
		m.AppFailures("shop", s.Apps(), res.Failing)
		ad.Events.Report(now, res.Failing)
		now = now.Add(10 * time.Second)
	}
	list, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range list.Items {
		run.minimum[h.Name] = *h.Spec.MinReplicas
	}
	return run
}

type lastRecord struct{ r soldier.Record }

func (l *lastRecord) Record(r soldier.Record) { l.r = r }

// freezeHPA installs a ValidatingAdmissionPolicy, bound to ns, whose CEL
// rule denies every update of the HPA name, and waits until it is in force.
func freezeHPA(t *testing.T, c kubernetes.Interface, ns, name string) {
	t.Helper()
	ctx := context.Background()
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-freeze"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{"autoscaling"}, APIVersions: []string{"*"},
						Resources: []string{"horizontalpodautoscalers"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: fmt.Sprintf("object.metadata.name != '%s'", name),
				Message: "the HPA " + name + " is frozen"}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-freeze"},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}},
		},
	}
	vap := c.AdmissionregistrationV1()
	if _, err := vap.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		vap.ValidatingAdmissionPolicies().Delete(context.Background(), policy.Name, metav1.DeleteOptions{})
	})
	if _, err := vap.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		vap.ValidatingAdmissionPolicyBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	// The apiserver loads policies asynchronously: probe with a label update.
	hpas := c.AutoscalingV2().HorizontalPodAutoscalers(ns)
	for k, deadline := 0, time.Now().Add(30*time.Second); ; k++ {
		h, err := hpas.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h.Labels == nil {
			h.Labels = map[string]string{}
		}
		h.Labels["probe"] = fmt.Sprint(k)
		_, err = hpas.Update(ctx, h, metav1.UpdateOptions{})
		if err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ValidatingAdmissionPolicy is not in force after 30s: last update: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // polling the apiserver's policy load, with a deadline
	}
}

// TestFailingAppsDoNotHoldBackTheirDomain runs a domain of 50 apps twice on
// a real kube-apiserver: once without faults, once with 5 apps' HPAs
// deleted and updates of a sixth's HPA denied by a ValidatingAdmissionPolicy.
// No tick returns an error; the other 44 apps get the same targets written
// in the same ticks as without faults and end at the same HPA bounds; the 6
// are reported every tick (not found, denied), each has one Warning Event
// on its Deployment (not one per tick), a per-app gauge, and the denied one
// is tried with backoff (ticks 0, 1, 3, 7: four failures).
func TestFailingAppsDoNotHoldBackTheirDomain(t *testing.T) {
	env := testenv.Require(t)
	const apps, ticks = 50, 8
	missing, denied := []int{3, 11, 19, 27, 35}, 42
	clean := runIsolation(t, env, apps, ticks, nil, -1)
	faulty := runIsolation(t, env, apps, ticks, missing, denied)

	bad := map[string]string{fmt.Sprintf("web-%d", denied): soldier.FailDenied}
	for _, i := range missing {
		bad[fmt.Sprintf("web-%d", i)] = soldier.FailNotFound
	}
	writes := 0
	for tick := range ticks {
		if len(clean.failing[tick]) != 0 {
			t.Fatalf("tick %d without faults: failing %+v", tick, clean.failing[tick])
		}
		for app, n := range clean.written[tick] {
			if bad[app] != "" {
				continue
			}
			writes++
			if got, ok := faulty.written[tick][app]; !ok || got != n {
				t.Errorf("tick %d: %s written %d (%v) with faults, %d without", tick, app, got, ok, n)
			}
		}
		for app := range faulty.written[tick] {
			if bad[app] != "" {
				t.Errorf("tick %d: %s written, but its write cannot succeed", tick, app)
			} else if _, ok := clean.written[tick][app]; !ok {
				t.Errorf("tick %d: %s written with faults only", tick, app)
			}
		}
		got := map[string]string{}
		for _, f := range faulty.failing[tick] {
			got[fmt.Sprintf("web-%d", f.App)] = f.Reason
		}
		if !maps.Equal(got, bad) {
			t.Errorf("tick %d: failing %v, want %v", tick, got, bad)
		}
	}
	if writes < 44*3 {
		t.Fatalf("%d writes to the healthy apps over %d ticks: demand should move their targets", writes, ticks)
	}
	for app, lo := range clean.minimum {
		if bad[app] == "" && faulty.minimum[app] != lo {
			t.Errorf("%s ends at minReplicas %d with faults, %d without", app, faulty.minimum[app], lo)
		}
	}
	last := faulty.failing[ticks-1]
	k := slices.IndexFunc(last, func(f soldier.Failing) bool { return f.App == denied })
	if k < 0 || last[k].Failures != 4 || !strings.Contains(last[k].Detail, "ValidatingAdmissionPolicy") {
		t.Errorf("the denied app at the last tick: %+v, want 4 failures (ticks 0, 1, 3, 7) naming the policy", last)
	}
	t.Logf("%d writes to the 44 healthy apps over %d ticks, the same with and without faults; denied app: %s", writes, ticks, last[k].Detail)

	g := gathered(t, faulty.reg)
	for app, reason := range bad {
		key := "regiment_soldier_app_failing{app=" + app + ",domain=shop,reason=" + reason + "}"
		if g[key] != 1 {
			t.Errorf("%s = %v, want 1", key, g[key])
		}
	}
	if n := countPrefix(g, "regiment_soldier_app_failing{"); n != len(bad) {
		t.Errorf("%d app_failing series, want %d", n, len(bad))
	}
	if n := g["regiment_soldier_app_write_failures_total{app=web-42,domain=shop,reason=denied}"]; n != 4 {
		t.Errorf("web-42's failed writes counted %v, want 4", n)
	}
	waitEvents(t, env.Client, faulty.ns, bad)
}

// waitEvents waits for one RegimentWriteFailed Warning on the Deployment of
// each app of bad, and none on the others.
func waitEvents(t *testing.T, c kubernetes.Interface, ns string, bad map[string]string) {
	t.Helper()
	var got map[string]int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		list, err := c.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=" + kube.EventWriteFailed})
		if err != nil {
			t.Fatal(err)
		}
		got = map[string]int{}
		for _, e := range list.Items {
			if e.Type != corev1.EventTypeWarning || e.InvolvedObject.Kind != "Deployment" {
				t.Errorf("event %s on %s %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name)
			}
			got[e.InvolvedObject.Name] += int(max(e.Count, 1))
		}
		if len(got) >= len(bad) {
			break
		}
	}
	for app := range bad {
		if got[app] != 1 {
			t.Errorf("%s: %d RegimentWriteFailed events, want 1 (one per failure, not one per tick)", app, got[app])
		}
	}
	for app := range got {
		if bad[app] == "" {
			t.Errorf("%s: a RegimentWriteFailed event, but its writes succeed", app)
		}
	}
}

// gathered is every sample of reg as "name{label=value,...}" -> value,
// labels in name order.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := mf.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

func countPrefix(m map[string]float64, prefix string) int {
	n := 0
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}
