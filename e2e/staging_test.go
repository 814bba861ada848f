package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/offline/report"
)

// guideBlock is one ```sh block of a guide, under its section heading.
type guideBlock struct {
	section string // the "## " heading above it
	script  string
}

// readGuide returns the sh blocks of a markdown guide in order.
func readGuide(t *testing.T, path string) []guideBlock {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []guideBlock
	section, in, cur := "", false, ""
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !in && strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		case !in && line == "```sh":
			in, cur = true, ""
		case in && line == "```":
			in = false
			blocks = append(blocks, guideBlock{section, cur})
		case in:
			cur += line + "\n"
		}
	}
	return blocks
}

// rewrite stands in for a guide command that needs a running pod (kwok's
// pods run no process): the line matching pattern becomes with, for the
// reason given. A rewrite that matches no line fails the test: the guide
// changed under it.
type rewrite struct {
	pattern *regexp.Regexp
	with    string
	reason  string
}

// guideRunner runs a guide's blocks in order, each as one `sh -e` script,
// in a work directory holding a copy of deploy/, with the tools on PATH
// (kubectl, helm, regiment) and KUBECONFIG set to the admin's.
type guideRunner struct {
	t      *testing.T
	blocks []guideBlock
	next   int
	work   string   // cwd of every command but make and go
	env    []string // the scripts' environment
}

// run runs the guide's next block, which must be under a heading starting
// with section, with the rewrites applied (each must match).
func (g *guideRunner) run(section string, rws ...rewrite) string {
	t := g.t
	t.Helper()
	if g.next >= len(g.blocks) {
		t.Fatalf("the guide has no block left for %q", section)
	}
	b := g.blocks[g.next]
	g.next++
	if !strings.HasPrefix(b.section, section) {
		t.Fatalf("the guide's block %d is under %q, want %q", g.next, b.section, section)
	}
	script := b.script
	for _, rw := range rws {
		if !rw.pattern.MatchString(script) {
			t.Fatalf("section %q: no line matches %s (the guide changed?)", section, rw.pattern)
		}
		script = rw.pattern.ReplaceAllLiteralString(script, rw.with)
		t.Logf("section %q: %s stood in for by %q: %s", section, rw.pattern, rw.with, rw.reason)
	}
	dir := g.work
	if strings.HasPrefix(script, "make ") {
		dir = ".." // make image and go tool run in the repository
	}
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir, cmd.Env = dir, g.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("section %q:\n%s\n%v:\n%s", section, script, err, out.String())
	}
	t.Logf("section %q ran in %s:\n%s", section, time.Since(t0).Round(time.Millisecond), tail(out.String(), 15))
	return out.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// stagingApps are the test cluster's apps: namespace, team label, count,
// and the domain docs/staging.md's labels put them in.
var stagingApps = []struct {
	ns, team, domain string
	n                int
}{
	{"payments", "payments", "payment", 20},
	{"risk", "risk", "fraud", 20},
	{"storefront", "checkout", "payment", 10},
	{"storefront", "catalog", "merchant", 10},
}

// createStagingApps creates the 60 Deployments (one replica each, 250m of
// CPU requested) and their HPAs (1 to 10), unlabelled for Regiment.
func createStagingApps(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []string{"payments", "risk", "storefront"} {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range stagingApps {
		for i := range set.n {
			name := fmt.Sprintf("%s-%d", set.team, i)
			labels := map[string]string{"app": name, "team": set.team}
			one := int32(1)
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: set.ns, Labels: map[string]string{"team": set.team}},
				Spec: appsv1.DeploymentSpec{
					Replicas: &one,
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{
							Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1",
								Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}}}},
							Tolerations: []corev1.Toleration{{Key: testenv.FakeNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
						},
					},
				},
			}
			if _, err := c.AppsV1().Deployments(set.ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			h := &autoscalingv2.HorizontalPodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: set.ns},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
					ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
					MinReplicas:    &one, MaxReplicas: 10,
				},
			}
			if _, err := c.AutoscalingV2().HorizontalPodAutoscalers(set.ns).Create(ctx, h, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// addPoolNode adds a kwok node of 16 cores to the pool the staging config
// names (pool=general).
func addPoolNode(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	n := testenv.FakeNode(name, "16")
	n.Labels["pool"] = "general"
	if _, err := c.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// hpaBounds is every app HPA's [min, max] by namespace/name.
func hpaBounds(t *testing.T, c kubernetes.Interface) map[string][2]int32 {
	t.Helper()
	out := map[string][2]int32{}
	for _, ns := range []string{"payments", "risk", "storefront"} {
		l, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range l.Items {
			out[ns+"/"+h.Name] = [2]int32{*h.Spec.MinReplicas, h.Spec.MaxReplicas}
		}
	}
	return out
}

// podDaemon is a daemon the chart installed, run here as its pod would
// run it: its container's arguments, its ServiceAccount's token.
type podDaemon struct {
	binary string   // commander or soldier
	args   []string // the container's args
	sa     string   // its ServiceAccount
}

func chartDaemon(t *testing.T, c kubernetes.Interface, kind, name string) podDaemon {
	t.Helper()
	ctx := context.Background()
	var spec corev1.PodSpec
	switch kind {
	case "Deployment":
		d, err := c.AppsV1().Deployments("regiment").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec = d.Spec.Template.Spec
	default:
		s, err := c.AppsV1().StatefulSets("regiment").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec = s.Spec.Template.Spec
	}
	ctr := spec.Containers[0]
	return podDaemon{binary: filepath.Base(ctr.Command[0]), args: ctr.Args, sa: spec.ServiceAccountName}
}

// start runs the daemon with its pod's arguments, but for where things are
// on this machine: the config file, the data directory, NATS, the
// kubeconfig (its ServiceAccount's token) and the listen address.
func (d podDaemon) start(t *testing.T, env *testenv.Env, label, config, data, natsURL string) *proc {
	t.Helper()
	tok, err := env.Client.CoreV1().ServiceAccounts("regiment").CreateToken(context.Background(), d.sa,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of %s: %v", d.sa, err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	writeFile(t, kc, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: %s, user: {token: %q}}]
contexts: [{name: test, context: {cluster: test, user: %s}}]
current-context: test
`, env.Config.Host, d.sa, tok.Status.Token, d.sa))
	local := map[string]string{"--config": config, "--data": data, "--nats": natsURL, "--kubeconfig": kc}
	var args []string
	for _, a := range d.args {
		k, _, _ := strings.Cut(a, "=")
		switch v, ok := local[k]; {
		case k == "--listen": // start listens on loopback
		case ok:
			args = append(args, k+"="+v)
		default:
			args = append(args, a)
		}
	}
	return start(t, label, d.binary, args...)
}

// localConfig is the config the chart installed (ConfigMap regiment-config),
// run faster and against promURL instead of the cluster's Prometheus: 300 ms
// Soldier ticks, a 3 s Commander tick.
func localConfig(t *testing.T, c kubernetes.Interface, path, promURL string) {
	t.Helper()
	cm, err := c.CoreV1().ConfigMaps("regiment").Get(context.Background(), "regiment-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hcl, ok := cm.Data["regiment.hcl"]
	if !ok {
		t.Fatalf("ConfigMap regiment-config has no regiment.hcl: %v", cm.Data)
	}
	for _, r := range [][2]string{{`tick   = "60s"`, `tick   = "3s"`}, {`tick      = "10s"`, `tick      = "300ms"`},
		{`url = "http://prometheus.monitoring.svc:9090"`, `url = "` + promURL + `"`}} {
		if !strings.Contains(hcl, r[0]) {
			t.Fatalf("the installed config has no %q", r[0])
		}
		hcl = strings.Replace(hcl, r[0], r[1], 1)
	}
	writeFile(t, path, hcl)
}

// soldierWrites counts the audit log's write requests by each Soldier's
// ServiceAccount to the apps' workloads and HPAs (their Leases excluded).
func soldierWrites(t *testing.T, env *testenv.Env) map[string]int {
	t.Helper()
	evs, err := env.Audit()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, ev := range evs {
		user, ok := strings.CutPrefix(ev.User.Username, "system:serviceaccount:regiment:regiment-soldier-")
		if !ok || !ev.Writes() {
			continue
		}
		switch ev.ObjectRef.Resource {
		case "deployments", "statefulsets", "horizontalpodautoscalers":
			out[user]++
		}
	}
	return out
}

// TestStagingGuide runs docs/staging.md, every block in order, against a real
// kube-apiserver with kwok nodes: 60 Deployments with HPAs in 3 namespaces
// are labelled into 3 domains, the chart installs Regiment in recommend
// mode, and the Commander and Soldiers (run here as their pods would) find
// the apps without a list, recommend for 30 ticks with zero writes to any
// workload or HPA (the apiserver's audit log) and export the per-app gauges.
// The report is made from the running Soldier's store, copied out over
// HTTP as the guide says, and has a row for each of payment's 30
// discovered apps, non-zero core-hours both ways and a plot with data. Switching payment to active
// (helm upgrade, then SIGHUP) makes its Soldier write its HPAs' bounds while
// fraud's and merchant's write nothing and their HPAs stay as they were.
func TestStagingGuide(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test on a control plane; skipped with -short")
	}
	env := testenv.RequireFull(t)
	c := env.Client
	for i := range 3 {
		addPoolNode(t, c, fmt.Sprintf("staging-%d", i))
	}
	createStagingApps(t, c)
	g := newGuideRunner(t, env)

	g.run("1. Build the image")
	g.run("2. Choose the apps")
	g.run("3. Install it in recommend mode")

	// The daemons, as the chart's pods would run them.
	srv := startNATS(t)
	data, cfgPath := t.TempDir(), filepath.Join(t.TempDir(), "regiment.hcl")
	// A Prometheus that has no series of these apps: every query answers an
	// empty vector, and the Soldiers size the apps from what they see.
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	t.Cleanup(prom.Close)
	localConfig(t, c, cfgPath, prom.URL)
	cmd := chartDaemon(t, c, "StatefulSet", "regiment-commander").start(t, env, "commander", cfgPath, data, srv.ClientURL())
	soldiers := map[string]*proc{}
	for _, d := range []string{"payment", "fraud", "merchant"} {
		soldiers[d] = chartDaemon(t, c, "Deployment", "regiment-soldier-"+d).start(t, env, "soldier-"+d, cfgPath, data, srv.ClientURL())
	}
	// The leading Commander sizes the pool from the nodes (pool=general), and
	// follows a node added.
	cmd.waitLog(`pool capacity:.* cores=48 nodes=3 `, 60*time.Second)
	addPoolNode(t, c, "staging-3")
	cmd.waitLog(`pool capacity:.* cores=64 nodes=4 `, 60*time.Second)
	want := map[string]int{"payment": 30, "fraud": 20, "merchant": 10}
	for d, p := range soldiers {
		waitFor(t, 90*time.Second, d+" recommends for 30 ticks for its discovered apps", func() (bool, string) {
			n, apps := p.metric("decisions_total"), p.series("regiment_soldier_recommended_replicas")
			return n >= 30 && apps == want[d], fmt.Sprintf("%g ticks, %d apps recommended", n, apps)
		})
	}
	for d, p := range soldiers { // the directives share capacity_cores less what others request on the nodes
		if acc, rej := p.metric("received_messages_total"), p.metric("rejected_messages_total"); acc < 1 || rej > 0 {
			t.Errorf("%s accepted %g directives and rejected %g, want some and none", d, acc, rej)
		}
	}
	if w := soldierWrites(t, env); len(w) != 0 {
		t.Fatalf("Soldiers in recommend mode wrote to workloads or HPAs: %v", w)
	}
	for d, p := range soldiers {
		if live := p.metric("regiment_soldier_live_replicas"); live != float64(want[d]) {
			t.Errorf("%s: live replicas summed %g, want %d (one per Deployment)", d, live, want[d])
		}
	}
	before := hpaBounds(t, c)

	out := g.run("4. Watch it recommend",
		rewrite{regexp.MustCompile(`(?m)^kubectl .* port-forward .*$`), "true", "kwok's pods serve nothing: the Soldier runs here"},
		rewrite{regexp.MustCompile(`localhost:9465`), soldiers["payment"].addr, "the Soldier's own address"})
	if n := strings.Count(out, "regiment_soldier_recommended_replicas{"); n != 30 {
		t.Errorf("the guide's curl shows %d recommended_replicas lines for payment, want 30:\n%s", n, out)
	}

	// The copy out of the running Soldier, as written: its store's snapshot
	// over HTTP, while it goes on recording.
	out = g.run("5. Read the report",
		rewrite{regexp.MustCompile(`(?m)^kubectl .* port-forward .*$`), "true", "kwok's pods serve nothing: the Soldier runs here"},
		rewrite{regexp.MustCompile(`localhost:9465`), soldiers["payment"].addr, "the Soldier's own address"})
	if !strings.Contains(out, "payment: ") || !strings.Contains(out, fmt.Sprintf(", %d apps, ", want["payment"])) {
		t.Errorf("regiment report does not report payment's %d apps:\n%s", want["payment"], out)
	}
	checkStagingReport(t, g.work, want["payment"])

	// Payment goes active, as the guide says: its mode, then helm upgrade.
	hclPath := filepath.Join(g.work, "deploy/staging/regiment.hcl")
	b, err := os.ReadFile(hclPath)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(domain "payment" \{[^}]*?mode\s*=\s*)"recommend"`)
	if !re.Match(b) {
		t.Fatal(`deploy/staging/regiment.hcl: no mode = "recommend" in domain "payment"`)
	}
	writeFile(t, hclPath, string(re.ReplaceAll(b, []byte(`${1}"active"`))))
	g.run("6. Let it act on one domain")
	localConfig(t, c, cfgPath, prom.URL)
	for _, p := range soldiers {
		p.signal(syscall.SIGHUP)
	}
	soldiers["payment"].waitLog(`config reloaded`, 10*time.Second)
	// Every payment HPA's minReplicas at the domain's floor (2) or above;
	// waited for as such, since a write count can be reached by a subset
	// of the apps on a loaded machine.
	raised := func(bounds map[string][2]int32) int {
		n := 0
		for _, set := range stagingApps {
			for i := range set.n {
				if set.domain == "payment" && bounds[fmt.Sprintf("%s/%s-%d", set.ns, set.team, i)][0] >= 2 {
					n++
				}
			}
		}
		return n
	}
	waitFor(t, 60*time.Second, "payment raises all 30 HPAs' minReplicas to its floor", func() (bool, string) {
		n := raised(hpaBounds(t, c))
		return n == 30, fmt.Sprintf("%d of payment's 30 HPAs have minReplicas >= 2; soldier writes %v", n, soldierWrites(t, env))
	})
	time.Sleep(2 * time.Second) // a few more ticks of the others
	if w := soldierWrites(t, env); w["fraud"]+w["merchant"] != 0 {
		t.Errorf("fraud and merchant, still recommending, wrote: %v", w)
	}
	after := hpaBounds(t, c)
	for _, set := range stagingApps {
		for i := range set.n {
			if key := fmt.Sprintf("%s/%s-%d", set.ns, set.team, i); set.domain != "payment" && after[key] != before[key] {
				t.Errorf("%s (%s) HPA bounds %v, were %v: a recommending domain's app changed", key, set.domain, after[key], before[key])
			}
		}
	}
	t.Logf("soldier writes after payment went active: %v", soldierWrites(t, env))
	stopAll(t, append([]*proc{cmd}, soldiers["payment"], soldiers["fraud"], soldiers["merchant"])...)
	g.run("6. Let it act on one domain", // helm uninstall
		rewrite{regexp.MustCompile(`(?m)^helm uninstall (.*)$`),
			"regiment kube restore --all --namespaces=payments,risk,storefront --stop-soldiers=regiment\nhelm uninstall --no-hooks regiment --namespace regiment",
			"kwok's pods run no process: the chart's pre-delete hook Job's command here"})
	if got := hpaBounds(t, c); !maps.Equal(got, before) {
		for key, b := range before {
			if got[key] != b {
				t.Errorf("%s HPA bounds %v after uninstalling, want its own %v", key, got[key], b)
			}
		}
	}
	if g.next != len(g.blocks) {
		t.Fatalf("ran %d of the guide's %d blocks", g.next, len(g.blocks))
	}
}

// newGuideRunner prepares docs/staging.md's run: the tools on PATH, a copy
// of deploy/ to work in, and a registry on loopback (REGISTRY).
func newGuideRunner(t *testing.T, env *testenv.Env) *guideRunner {
	t.Helper()
	work, tools := t.TempDir(), t.TempDir()
	for name, path := range map[string]string{"kubectl": testenv.Kubectl(), "helm": bin["helm"], "regiment": bin["regiment"]} {
		if err := os.Symlink(path, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", "-r", "../deploy", work).CombinedOutput(); err != nil {
		t.Fatalf("copy deploy/: %v: %s", err, out)
	}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	return &guideRunner{t: t, blocks: readGuide(t, "../docs/staging.md"), work: work,
		env: append(os.Environ(), "PATH="+tools+string(os.PathListSeparator)+os.Getenv("PATH"),
			"KUBECONFIG="+env.Kubeconfig, "REGISTRY="+strings.TrimPrefix(reg.URL, "http://"),
			"HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())}
}

// series counts the samples of metric name (every label set).
func (p *proc) series(name string) int {
	_, body, err := p.get("/metrics")
	if err != nil {
		return -1
	}
	return strings.Count(body, "\n"+name+"{")
}

// checkStagingReport checks the report docs/staging.md's step 5 wrote into
// work/review for payment's store: a row for each of the domain's apps
// found by label, with its namespace and workload, non-zero core-hours
// both ways, and a replicas plot with data (plotHasData).
func checkStagingReport(t *testing.T, work string, apps int) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(work, "review", report.MarkdownName))
	if err != nil {
		t.Fatalf("the report: %v", err)
	}
	names := map[string]bool{}
	// payment searches two namespaces: its apps are <namespace>_<workload>.
	for _, m := range regexp.MustCompile(`(?m)^\| payment/((payments|storefront)_((payments|checkout)-\d+)) \| (payments|storefront) \| deployment/([a-z]+-\d+) \|`).FindAllStringSubmatch(string(md), -1) {
		if m[3] != m[6] || m[2] != m[5] || (m[4] == "payments") != (m[5] == "payments") {
			t.Errorf("report.md row of %s names workload %s/%s", m[1], m[5], m[6])
		}
		names[m[1]] = true
	}
	if len(names) != apps {
		t.Errorf("report.md has rows for %d of payment's %d discovered apps (with namespace and workload):\n%s", len(names), apps, md)
	}
	row := regexp.MustCompile(`(?m)^\| payment \| [0-9.]+ \| ([0-9.e+-]+) \| ([0-9.e+-]+) \|`).FindStringSubmatch(string(md))
	if row == nil {
		t.Fatalf("report.md has no row for payment:\n%s", md)
	}
	for i, way := range []string{"live", "regiment"} {
		if v, err := strconv.ParseFloat(row[1+i], 64); err != nil || v <= 0 {
			t.Errorf("payment's core-hours %s are %q, want more than 0: %s", way, row[1+i], row[0])
		}
	}
	f, err := os.Open(filepath.Join(work, "review", report.PlotName))
	if err != nil {
		t.Fatalf("the report's plot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", report.PlotName, err)
	}
	if err := plotHasData(img, report.LiveColor, report.RecommendedColor); err != nil {
		t.Errorf("%s: %v", report.PlotName, err)
	}
}

// plotHasData checks the first plot of a report's replicas.png (the domain
// summed, the top 2.4 inches at 96 dpi) for lines of each colour standing
// clear of zero: the median row of a colour's pixels left of the legend
// (the middle of the plot's width) lies at least a sixth of the plot's
// height above its x axis (the lowest row drawn across most of the width).
// An empty series draws its line on zero, just above the axis, or not at
// all (under the other colour's).
func plotHasData(img image.Image, colours ...color.RGBA) error {
	b := img.Bounds()
	h := min(b.Dy(), (4+24)*96/10) // 2.8 inches: the padding and the first plot
	near := func(c color.Color, want color.RGBA, tol int) bool {
		r, g, bl, _ := c.RGBA()
		d := func(x uint32, y uint8) int { return max(int(x>>8)-int(y), int(y)-int(x>>8)) }
		return d(r, want.R) <= tol && d(g, want.G) <= tol && d(bl, want.B) <= tol
	}
	axis := -1
	for y := b.Min.Y + h - 1; y >= b.Min.Y && axis < 0; y-- {
		drawn := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			if !near(img.At(x, y), color.RGBA{R: 0xff, G: 0xff, B: 0xff}, 40) {
				drawn++
			}
		}
		if drawn > b.Dx()/2 {
			axis = y
		}
	}
	if axis < 0 {
		return fmt.Errorf("no x axis (a row drawn across most of the width) in the first %d rows", h)
	}
	for _, c := range colours {
		var rows []int
		for y := b.Min.Y; y < axis; y++ {
			for x := b.Min.X + b.Dx()/10; x < b.Min.X+b.Dx()*6/10; x++ {
				if near(img.At(x, y), c, 30) {
					rows = append(rows, y)
				}
			}
		}
		if len(rows) < b.Dx()/10 {
			return fmt.Errorf("%d pixels of the line of colour %v in the first plot: no line", len(rows), c)
		}
		if median := rows[len(rows)/2]; axis-median < h/6 {
			return fmt.Errorf("the line of colour %v lies %d pixels above the x axis (row %d), under a sixth of the plot's %d: flat at zero", c, axis-median, axis, h)
		}
	}
	return nil
}
