package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/adapter/store"
)

// TestMisspellingsGetASuggestion: a misspelt flag of every subcommand, a
// misspelt subcommand and a misspelt domain or app wherever one is looked
// up is a usage error (exit 2) that names the closest, and not the whole
// help. Every command of the table appears, so a new one must be added.
func TestMisspellingsGetASuggestion(t *testing.T) {
	dir := epFixture(t)
	tests := []struct {
		rule string
		args []string
		want string // in stderr
	}{
		// A misspelt flag, for each subcommand.
		{"run", []string{"run", "--durtion", "1h"}, "did you mean --duration?"},
		{"validate", []string{"validate", "--confg", "x.hcl"}, "did you mean --config?"},
		{"sim", []string{"sim", "--scenaro", "x.hcl"}, "did you mean --scenario?"},
		{"eval", []string{"eval", "--polices", "hpa"}, "did you mean --policies?"},
		{"episodes list", []string{"episodes", "list", "--dat", dir}, "did you mean --data?"},
		{"episodes show", []string{"episodes", "show", "--episod", "x"}, "did you mean --episode?"},
		{"episodes why", []string{"episodes", "why", "--domian", "payment"}, "did you mean --domain?"},
		{"episodes export", []string{"episodes", "export", "--fromat", "csv"}, "did you mean --format?"},
		{"episodes stats", []string{"episodes", "stats", "--dat", dir}, "did you mean --data?"},
		{"episodes prune", []string{"episodes", "prune", "--older-then", "1h"}, "did you mean --older-than?"},
		{"episodes repair", []string{"episodes", "repair", "--outt", "x"}, "did you mean --out?"},
		{"override", []string{"override", "share", "--domian", "payment"}, "did you mean --domain?"},
		{"nats-config", []string{"nats-config", "--seed", "d"}, "did you mean --seeds?"},
		{"forecast", []string{"forecast", "--trac", "t.csv"}, "did you mean --trace?"},
		{"calibrate", []string{"calibrate", "--episods", "d"}, "did you mean --episodes?"},
		{"report", []string{"report", "--episods", "d"}, "did you mean --episodes?"},
		{"train", []string{"train", "--stge", "soldier"}, "did you mean --stage?"},
		{"kube", []string{"kube", "restore", "--domian", "payment"}, "did you mean --domain?"},

		// A misspelt subcommand.
		{"command", []string{"rnu"}, "did you mean run?"},
		{"episodes subcommand", []string{"episodes", "wyh"}, "did you mean why?"},
		{"override subcommand", []string{"override", "shar", "--config", "x.hcl"}, "did you mean share?"},
		{"kube subcommand", []string{"kube", "restor"}, "did you mean restore?"},

		// A misspelt name where one is looked up.
		{"episodes why domain", []string{"episodes", "why", "--data", dir, "--domain", "paymnt", "--at", "2024-05-01T12:00:15Z"}, "did you mean payment?"},
		{"episodes why app", []string{"episodes", "why", "--data", dir, "--domain", "payment", "--app", "chekout", "--at", "2024-05-01T12:00:15Z"}, "did you mean checkout?"},
		{"episodes list domain", []string{"episodes", "list", "--data", dir, "--domain", "paymnt"}, "did you mean payment?"},
		{"episodes export domain", []string{"episodes", "export", "--data", dir, "--domain", "fruad"}, "did you mean fraud?"},
		{"override domain", []string{"override", "share", "--config", "../../examples/small.hcl", "--domain", "paymnt", "--share", "0.3", "--for", "1h", "--reason", "r"}, `did you mean "payment"?`},
		{"override list domain", []string{"override", "list", "--config", "../../examples/small.hcl", "--domain", "paymnt"}, `did you mean "payment"?`},
		{"train stage", []string{"train", "--config", "c.hcl", "--scenario", "s.hcl", "--out", "o", "--stage", "soldeir"}, "did you mean soldier?"},
		{"sim policy", []string{"sim", "--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl", "--policy", "hap"}, "did you mean hpa?"},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.args[0]] = true
		t.Run(tt.rule, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := dispatch(context.Background(), tt.args, &stdout, &stderr)
			if code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("regiment %s: exit %d, stderr:\n%s\nwant exit 2 and %q", strings.Join(tt.args, " "), code, stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "Flags:") || strings.Contains(stderr.String(), "Examples:") {
				t.Errorf("a misspelling prints the whole help:\n%s", stderr.String())
			}
		})
	}
	for _, c := range commands {
		if !covered[c.name] {
			t.Errorf("regiment %s has no misspelt flag in the table", c.name)
		}
	}
}

// TestKubeRestoreSuggestsAMarkedDomain: restore --domain with a domain
// no object is marked for, close to one that is, is a usage error naming
// it, and restores nothing; a domain unlike every marked one restores
// nothing and says which domains are marked.
func TestKubeRestoreSuggestsAMarkedDomain(t *testing.T) {
	env := testenv.Require(t)
	ctx := context.Background()
	ns := testNamespace(t, env.Client, "shop")
	one, ten, util := int32(1), int32(10), int32(70)
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "checkout", Labels: map[string]string{kube.LabelManagedBy: "payment"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: &one, MaxReplicas: ten,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "checkout"},
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &util}}}}},
	}
	if _, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(domain string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := dispatch(ctx, []string{"kube", "restore", "--domain", domain, "--namespaces", ns, "--kubeconfig", env.Kubeconfig, "--timeout", "30s"}, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := run("paymnt")
	if code != 2 || !strings.Contains(errOut, `"paymnt" is not a domain of the marked objects; did you mean payment?`) || out != "" {
		t.Fatalf("restore --domain paymnt: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, errOut = run("search")
	if code != 0 || !strings.Contains(out, "0 objects restored") || !strings.Contains(errOut, `no object is marked for domain "search" (marked: payment)`) {
		t.Fatalf("restore --domain search: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	got, err := env.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "checkout", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[kube.LabelManagedBy] != "payment" {
		t.Fatalf("the misspelt restore touched payment's HPA: labels %v", got.Labels)
	}
}

// TestEpisodesWhyAppShowsOneApp: --app keeps the domain's own values and
// that app's, no other app's; the short name and domain/app both work.
func TestEpisodesWhyAppShowsOneApp(t *testing.T) {
	dir := whyAppsFixture(t)
	for _, app := range []string{"cart", "payment/cart"} {
		out := mustRun(t, "why", "--data", dir, "--domain", "payment", "--app", app, "--at", "2024-05-01T12:00:05Z")
		wantLines(t, out,
			"app payment/cart only (and the domain's own values)",
			"budget_cores 40",
			"replicas/payment/cart 6",
			"target/payment/cart 6",
			"p99_seconds 0.2",
			"budget-cap replicas/payment/cart 8 -> 6",
		)
		for _, other := range []string{"payment/checkout", "payment/search"} {
			if strings.Contains(out, other) {
				t.Errorf("--app %s shows %s:\n%s", app, other, out)
			}
		}
	}
	// Without --app every app is there.
	out := mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:00:05Z")
	for _, app := range []string{"payment/cart", "payment/checkout", "payment/search"} {
		if !strings.Contains(out, "target/"+app) {
			t.Errorf("without --app, %s is missing:\n%s", app, out)
		}
	}
	if strings.Contains(out, " only (and the domain") {
		t.Errorf("without --app the output says it is restricted:\n%s", out)
	}
}

// TestEpisodesWhyWarnsOfAFarStep: --at far after the last step answers
// from that step with a warning that says how far; near a step, no warning.
func TestEpisodesWhyWarnsOfAFarStep(t *testing.T) {
	dir := whyAppsFixture(t)
	out := mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2051-05-01T12:00:05Z")
	if !hasLine(out, "warning: the nearest step is 9861 days before T, more than 5m0s: the episode has no step near T, and what follows is about 2024-05-01T12:00:00Z") {
		t.Fatalf("no warning for a step 27 years before T:\n%s", out)
	}
	out = mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:04:00Z")
	if strings.Contains(out, "warning:") {
		t.Fatalf("a warning 4 minutes after the step (within the 5m window):\n%s", out)
	}
	out = mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:06:00Z", "--window", "1m")
	if !hasLine(out, "warning: the nearest step is 6m0s before T, more than 5m0s:") {
		t.Fatalf("no warning 6 minutes after the step:\n%s", out)
	}
	out = mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:06:00Z", "--window", "10m")
	if strings.Contains(out, "warning:") {
		t.Fatalf("a warning within a 10m --window:\n%s", out)
	}
}

// whyAppsFixture is a store with one payment Soldier step of three apps,
// keyed as a Soldier records them ("domain/app").
func whyAppsFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.BeginEpisode(store.Episode{ID: "sol-payment", Level: "soldier", Domain: "payment", Cluster: "prod", Policy: "proportional",
		ObsLayout: []string{"rps"}, ObsVersion: 1, Started: epT0.Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	st := store.Step{Episode: "sol-payment", At: epT0, Obs: []float64{100},
		Action:  map[string]float64{"budget_cores": 40},
		Outcome: map[string]float64{"p99_seconds": 0.2},
		Guards: []store.Guard{
			{Name: "budget-cap", Target: "replicas/payment/cart", Before: 8, After: 6, Reason: "over budget"},
			{Name: "budget-cap", Target: "replicas/payment/checkout", Before: 9, After: 7, Reason: "over budget"},
		}}
	for i, app := range []string{"payment/cart", "payment/checkout", "payment/search"} {
		st.Action["replicas/"+app] = float64(6 + i)
		st.Outcome["target/"+app] = float64(6 + i)
		st.Outcome["ready/"+app] = float64(5 + i)
	}
	a := s.NewAppender(4, 0)
	if err := a.Append(st); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}
