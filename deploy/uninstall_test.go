package deploy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/adapter/kube"
	"github.com/regimentd/regiment/internal/adapter/kube/leader"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// uninstallBlock is the sh block of docs/kubernetes.md that follows the
// heading "### What uninstall leaves".
func uninstallBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../docs/kubernetes.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)### What uninstall leaves\n.*?```sh\n(.*?)```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/kubernetes.md: no sh block under \"### What uninstall leaves\"")
	}
	return string(m[1])
}

// TestUninstallLeavesWhatTheDocsSay installs the staging values and config
// (three domains) with the real helm into a real kube-apiserver, creates
// what the running release would have created besides its objects (each
// StatefulSet's claims, as its controller names and labels them, and the
// daemons' Leases, by the daemons' own names), uninstalls, and finds what
// docs/kubernetes.md says is left: 6 PersistentVolumeClaims and 4 Leases.
// The guide's commands, run as written (the release and namespace
// renamed), then leave none.
func TestUninstallLeavesWhatTheDocsSay(t *testing.T) {
	env := testenv.Require(t)
	const release, ns = "uninst", "regiment-uninst"
	ctx := context.Background()
	c := env.Client
	for _, n := range []string{ns, "payments", "storefront", "risk"} {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil &&
			!strings.Contains(err.Error(), "already exists") {
			t.Fatal(err)
		}
	}
	helm, err := helmPath()
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The balloons' PriorityClass is cluster-wide, and TestChartOnTheAPIServer's
	// (not a Helm release's) would make the install refuse to take it over.
	run(helm, "install", release, chartDir, "--namespace", ns, "--values=staging/values.yaml", "--set-file=config.hcl=staging/regiment.hcl",
		"--set=commander.balloons.enabled=false")

	// What the StatefulSet controller creates from the claim templates, and
	// the daemons' Leases.
	sets, err := c.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets.Items {
		for _, tpl := range s.Spec.VolumeClaimTemplates {
			for i := range *s.Spec.Replicas {
				claim := tpl.DeepCopy()
				claim.Name, claim.Namespace = fmt.Sprintf("%s-%s-%d", tpl.Name, s.Name, i), ns
				claim.Labels = s.Spec.Selector.MatchLabels
				if _, err := c.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	leases := []string{leader.CommanderLease}
	for _, d := range []string{"payment", "fraud", "merchant"} {
		leases = append(leases, kube.SoldierLeaseName(d))
	}
	for _, name := range leases {
		if err := kube.NewLease(c, ns, name, "test", 40*time.Second).Renew(ctx); err != nil {
			t.Fatal(err)
		}
	}

	run(helm, "uninstall", release, "--namespace", ns, "--no-hooks")
	left := func() (claims, leases []string) {
		pvcs, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pvcs.Items {
			if p.DeletionTimestamp == nil {
				claims = append(claims, p.Name)
			}
		}
		ls, err := c.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls.Items {
			leases = append(leases, l.Name)
		}
		return claims, leases
	}
	claims, held := left()
	t.Logf("left after helm uninstall: claims %v, leases %v", claims, held)
	if len(claims) != 6 || len(held) != 4 {
		t.Errorf("helm uninstall left %d claims %v and %d leases %v; docs/kubernetes.md says 6 and 4", len(claims), claims, len(held), held)
	}

	// kubectl delete waits for a claim to go, which its finalizer
	// (kubernetes.io/pvc-protection) holds until kube-controller-manager,
	// not run here, lifts it: the claims are marked deleted, not waited for.
	script := strings.NewReplacer("-n regiment ", "-n "+ns+" ", "app.kubernetes.io/instance=regiment", "app.kubernetes.io/instance="+release,
		"delete pvc ", "delete --wait=false pvc ").Replace(uninstallBlock(t))
	run("bash", "-euo", "pipefail", "-c", "PATH="+pathWith(testenv.Kubectl())+"\n"+script)
	// A claim marked deleted (its finalizer holding it) counts as gone.
	if claims, held := left(); len(claims) != 0 || len(held) != 0 {
		t.Errorf("after the guide's commands: claims %v and leases %v remain", claims, held)
	}
}

// pathWith is $PATH with the directory of bin first.
func pathWith(bin string) string {
	return bin[:strings.LastIndex(bin, "/")] + ":" + os.Getenv("PATH")
}
