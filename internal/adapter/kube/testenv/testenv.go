// Package testenv starts a real Kubernetes control plane for integration
// tests: etcd and kube-apiserver, and with Full also kube-controller-manager,
// kube-scheduler and kwok (fake nodes whose pods become Running). The
// binaries come from the cache that hack/k8s-testenv.sh (make k8s-env) fills;
// nothing is downloaded here.
//
// Every process listens on loopback only, on free ports picked at start, with
// its state in a temporary directory, so several test binaries can each run
// their own control plane. Start it once per test binary, from TestMain (see
// Main), and share it between tests by giving each test its own namespace
// (Namespace); Eventually polls the cluster with a deadline.
//
// When the binaries are absent and the tests are required (RequiredEnv=1,
// which `make test` exports, or CI=true), Main fails the test binary, naming
// the missing binaries, so the suite never passes by skipping. Otherwise
// (plain `go test`, `make test-short`) Require skips them, and Main says so
// on stderr even without -v, naming RequiredEnv and `make k8s-env`.
package testenv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// K8sVersion is the Kubernetes version the binaries are built at; it must
// match K8S_VERSION in hack/k8s-testenv.sh.
const K8sVersion = "1.37.2"

// AdminToken is the bearer token of the system:masters user "admin".
const AdminToken = "regiment-admin-token"

// Assets is the directory holding the binaries: $REGIMENT_K8S_ASSETS, else
// the cache directory hack/k8s-testenv.sh builds into.
func Assets() string {
	if d := os.Getenv("REGIMENT_K8S_ASSETS"); d != "" {
		return d
	}
	root := os.Getenv("REGIMENT_K8S_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = filepath.Join(os.TempDir(), "cache")
		}
		root = filepath.Join(cache, "regiment", "k8s")
	}
	return filepath.Join(root, "v"+K8sVersion)
}

// Kubectl is the kubectl binary of Assets, built with the full control
// plane (Options.Full): tests run the commands a guide gives with it.
func Kubectl() string { return filepath.Join(Assets(), "kubectl") }

// Env is a running control plane.
type Env struct {
	// Config is an admin (system:masters) client config.
	Config *rest.Config
	Client kubernetes.Interface
	// Kubeconfig is a kubeconfig file for Config.
	Kubeconfig string
	// Full says whether the controller-manager, scheduler and kwok run.
	Full bool
	// Dir holds every process's state and log (<name>.log).
	Dir string
	// AuditLog is the apiserver's audit log (JSON lines), when started
	// with Options.Audit; empty otherwise.
	AuditLog string

	procs []*proc
	audit bool
}

// proc is one started binary.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when it exited
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Options says what to start.
type Options struct {
	// Full also starts kube-controller-manager, kube-scheduler and kwok.
	Full bool
	// Dir is where state and logs go; empty: a new temporary directory,
	// removed by Stop.
	Dir string
	// Audit makes the apiserver log every request's metadata to Env.AuditLog
	// (Env.Audit reads it): who wrote what, as the server saw it.
	Audit bool
}

// Missing lists the binaries Options need that are absent from Assets.
func Missing(o Options) []string {
	names := []string{"etcd", "kube-apiserver"}
	if o.Full {
		names = append(names, "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml", "kubectl")
	}
	var miss []string
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(Assets(), n)); err != nil {
			miss = append(miss, n)
		}
	}
	return miss
}

// Start starts the control plane and waits until the apiserver is ready (and,
// with Full, the controllers run). On error everything started is stopped.
func Start(ctx context.Context, o Options) (env *Env, err error) {
	if miss := Missing(o); len(miss) > 0 {
		return nil, fmt.Errorf("testenv: %s missing from %s; run make k8s-env", strings.Join(miss, ", "), Assets())
	}
	e := &Env{Full: o.Full, Dir: o.Dir, audit: o.Audit}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "regiment-k8s-"); err != nil {
			return nil, fmt.Errorf("testenv: %w", err)
		}
	}
	defer func() {
		if err != nil {
			e.Stop()
			err = fmt.Errorf("%w (logs in %s)", err, e.Dir)
		}
	}()
	if err := e.startEtcdAndAPIServer(ctx); err != nil {
		return nil, err
	}
	if o.Full {
		if err := e.startControllers(ctx); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (e *Env) startEtcdAndAPIServer(ctx context.Context) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	if err := e.start("etcd", "--name", "local", "--data-dir", filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "local="+peerURL, "--unsafe-no-fsync", "--log-level", "warn",
		"--listen-metrics-urls", "http://127.0.0.1:0"); err != nil {
		return err
	}
	if err := e.waitHTTP(ctx, etcdURL+"/health", "", 30*time.Second); err != nil {
		return fmt.Errorf("testenv: etcd: %w", err)
	}

	pki := filepath.Join(e.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	if err := writeKeyPair(pki); err != nil {
		return err
	}
	tokens := AdminToken + `,admin,admin-uid,"system:masters"` + "\n"
	if err := os.WriteFile(filepath.Join(pki, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	// No insecure port exists any more: a self-signed cert goes to --cert-dir.
	// A loopback --advertise-address needs --endpoint-reconciler-type=none.
	// ServiceAccount admission is off: it would wait for default service accounts.
	kas := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	auditFlags, err := e.auditFlags()
	if err != nil {
		return err
	}
	if err := e.start("kube-apiserver", append([]string{"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[2]), "--cert-dir=" + pki,
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=10.96.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--token-auth-file=" + filepath.Join(pki, "tokens.csv"), "--authorization-mode=RBAC",
		"--disable-admission-plugins=ServiceAccount"}, auditFlags...)...); err != nil {
		return err
	}
	if err := e.waitHTTP(ctx, kas+"/readyz", AdminToken, 120*time.Second); err != nil {
		return fmt.Errorf("testenv: kube-apiserver: %w", err)
	}
	e.Config = &rest.Config{Host: kas, BearerToken: AdminToken, TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS: 200, Burst: 400}
	if e.Client, err = kubernetes.NewForConfig(e.Config); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	e.Kubeconfig = filepath.Join(e.Dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: %q}
contexts:
- name: local
  context: {cluster: local, user: admin, namespace: default}
current-context: local
`, kas, AdminToken)
	if err := os.WriteFile(e.Kubeconfig, []byte(kc), 0o600); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	return nil
}

// HPASyncPeriod is how often the test controller-manager's HPA controller
// reconciles (production default 15s).
const HPASyncPeriod = 2 * time.Second

func (e *Env) startControllers(ctx context.Context) error {
	// The apiserver is ready before its bootstrap namespaces exist; the
	// controllers look for kube-system at start.
	if err := wait(ctx, 30*time.Second, func() error {
		_, err := e.Client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("testenv: namespace kube-system: %w", err)
	}
	kc, pki := e.Kubeconfig, filepath.Join(e.Dir, "pki")
	if err := e.start("kube-controller-manager", "--kubeconfig="+kc,
		"--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0",
		// Only the controllers the tests exercise: less CPU on small machines.
		// node-lifecycle-controller lifts the not-ready taint admission puts on new nodes.
		"--controllers=deployment-controller,replicaset-controller,statefulset-controller,node-lifecycle-controller,"+
			"horizontal-pod-autoscaler-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller",
		"--horizontal-pod-autoscaler-sync-period="+HPASyncPeriod.String(),
		"--service-account-private-key-file="+filepath.Join(pki, "sa.key"),
		"--use-service-account-credentials=false"); err != nil {
		return err
	}
	if err := e.start("kube-scheduler", "--kubeconfig="+kc,
		"--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=0"); err != nil {
		return err
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	if err := e.start("kwok", "--kubeconfig="+kc, "--config="+filepath.Join(Assets(), "kwok-stages.yaml"),
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector="+FakeNodeAnnotation+"=fake",
		"--node-ip=10.0.0.1", "--cidr=10.0.0.1/24", "--node-lease-duration-seconds=40",
		"--server-address=127.0.0.1:"+strconv.Itoa(ports[0])); err != nil {
		return err
	}
	// The processes have no readiness endpoint here (--secure-port=0): give
	// them a moment, then check that none exited.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(2 * time.Second):
	}
	for _, p := range e.procs {
		if p.exited() {
			return fmt.Errorf("testenv: %s exited: %s", p.name, e.Log(p.name, 20))
		}
	}
	// Prove the chain works: the scheduler binds a pod to a fake node once
	// the node lifecycle controller lifts its not-ready taint, and kwok runs it.
	if err := e.probe(ctx, 60*time.Second); err != nil {
		return fmt.Errorf("testenv: pods do not run on fake nodes: %w", err)
	}
	return nil
}

// probe runs a pod on a fake node and removes both.
func (e *Env) probe(ctx context.Context, timeout time.Duration) error {
	const name = "testenv-probe"
	nodes, pods := e.Client.CoreV1().Nodes(), e.Client.CoreV1().Pods(metav1.NamespaceDefault)
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	defer func() {
		pods.Delete(context.Background(), name, now)
		nodes.Delete(context.Background(), name, now)
		wait(context.Background(), 30*time.Second, func() error {
			if _, err := pods.Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("probe pod still there: %v", err)
			}
			return nil
		})
	}()
	if _, err := nodes.Create(ctx, FakeNode(name, "1"), metav1.CreateOptions{}); err != nil {
		return err
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		NodeSelector: map[string]string{"kubernetes.io/hostname": name},
		Tolerations:  []corev1.Toleration{{Key: FakeNodeTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Containers:   []corev1.Container{{Name: "probe", Image: "example.invalid/probe"}},
	}}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait(ctx, timeout, func() error {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		switch {
		case err != nil:
			return err
		case p.Spec.NodeName == "":
			return errors.New("probe pod not bound to a node")
		case p.Status.Phase != corev1.PodRunning:
			return fmt.Errorf("probe pod bound but %s", p.Status.Phase)
		}
		return nil
	})
}

// FakeNode is a node kwok manages, with cpu cores, 64Gi of memory and room
// for 110 pods, tainted FakeNodeTaint (pods need a toleration).
func FakeNode(name, cpu string) *corev1.Node {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Annotations: map[string]string{FakeNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": name}},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: FakeNodeTaint, Value: "fake", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Allocatable: res, Capacity: res},
	}
}

// wait calls f every 100ms until it returns nil, ctx ends or timeout passes.
func wait(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// FakeNodeAnnotation marks nodes kwok manages (value "fake").
const FakeNodeAnnotation = "kwok.x-k8s.io/node"

// FakeNodeTaint is the taint key AddFakeNode puts on nodes; pods need a
// toleration for it to run there.
const FakeNodeTaint = "kwok.x-k8s.io/node"

func (e *Env) start(name string, args ...string) error {
	log, err := os.Create(e.logPath(name))
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	cmd := exec.Command(filepath.Join(Assets(), name), args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Own process group, and killed with the test binary on Linux.
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("testenv: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	e.procs = append(e.procs, p)
	go func() {
		cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return nil
}

func (e *Env) logPath(name string) string { return filepath.Join(e.Dir, name+".log") }

// Log returns the tail of a process's log, for failure messages.
func (e *Env) Log(name string, lines int) string {
	b, _ := os.ReadFile(e.logPath(name))
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// Stop stops every process, newest first, and waits for each to exit. It is
// idempotent.
func (e *Env) Stop() {
	for i := len(e.procs) - 1; i >= 0; i-- {
		p := e.procs[i]
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	e.procs = nil
}

// Close stops the control plane and removes its directory.
func (e *Env) Close() {
	e.Stop()
	os.RemoveAll(e.Dir)
}

func (e *Env) waitHTTP(ctx context.Context, url, token string, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: insecureTLS()}}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		for _, p := range e.procs {
			if p.exited() {
				return fmt.Errorf("%s exited: %s", p.name, e.Log(p.name, 20))
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("not ready after %s: %v", timeout, last)
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("testenv: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// writeKeyPair writes the service-account signing key pair sa.key and sa.pub.
func writeKeyPair(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), priv, 0o600); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return fmt.Errorf("testenv: %w", err)
	}
	return nil
}

// RequiredEnv names the variable that makes absent control-plane binaries a
// failure rather than a skip. `make test` exports it as 1.
const RequiredEnv = "REGIMENT_K8S_REQUIRED"

// CI reports whether the tests run in CI (CI=true), where integration tests
// must run rather than skip.
func CI() bool { v := os.Getenv("CI"); return v == "true" || v == "1" }

// Required reports whether the Kubernetes tests must run rather than skip:
// RequiredEnv=1 (make test) or CI=true.
func Required() bool { v := os.Getenv(RequiredEnv); return v == "1" || v == "true" || CI() }

// shared is the control plane Main started, or nil.
var (
	shared     *Env
	skipReason string // why there is no control plane
	fullSkip   string // why it runs without the controllers
)

// howToBuild ends every skip and failure message about absent binaries.
func howToBuild(dir string) string {
	return "missing from " + dir + "; run `make k8s-env` (builds them from the Go module proxy once, 15-20 min cold on 2 cores) or set REGIMENT_K8S_ASSETS"
}

// plan is what Main does before the tests run: start a control plane with
// opts, or not and skip (skip), or fail the test binary (fail). fullSkip is
// set when it starts without the controllers that RequireFull needs.
type plan struct {
	start    bool
	full     bool // start with Options.Full
	skip     string
	fullSkip string
	fail     string
}

// decide is Main's rule. short is -short; required is Required();
// missingFull and missingBasic are Missing for the options asked for and
// for etcd and kube-apiserver alone; dir is where they were looked for.
// -short always skips. Otherwise absent binaries fail when required and
// skip, naming RequiredEnv, when not; with only the controllers absent an
// unrequired run starts the basic control plane and skips RequireFull.
func decide(short, required, wantFull bool, missingFull, missingBasic []string, dir string) plan {
	switch {
	case short:
		return plan{skip: "-short: no Kubernetes control plane (make test runs these tests)"}
	case len(missingFull) == 0:
		return plan{start: true, full: wantFull}
	case required:
		return plan{fail: fmt.Sprintf("testenv: the Kubernetes tests are required (%s=1, set by make test, or CI=true) but %s: %s",
			RequiredEnv, strings.Join(missingFull, ", "), howToBuild(dir))}
	}
	notRequired := fmt.Sprintf("; SKIPPED because %s is not set (make test sets it and fails instead)", RequiredEnv)
	if wantFull && len(missingBasic) == 0 {
		return plan{start: true, fullSkip: fmt.Sprintf("%s: %s%s", strings.Join(missingFull, ", "), howToBuild(dir), notRequired)}
	}
	return plan{skip: fmt.Sprintf("%s: %s%s", strings.Join(missingFull, ", "), howToBuild(dir), notRequired)}
}

// Main starts a control plane for the test binary, runs m and stops it. With
// -short, or when the binaries are absent and Required is false, it runs m
// without one and Require skips the tests that need it (RequireFull, when
// only the controllers are absent), saying so on stderr. When Required,
// absent binaries fail the run before any test. It returns the exit code.
func Main(m *testing.M, o Options) int {
	flag.Parse() // testing.Short needs the flags; m.Run does not parse twice
	// client-go's klog output (leader election, reflectors) would drown the
	// test output; failures are reported by the tests themselves.
	klog.SetLogger(logr.Discard())
	p := decide(testing.Short(), Required(), o.Full, Missing(o), Missing(Options{Dir: o.Dir}), Assets())
	if p.fail != "" {
		fmt.Fprintln(os.Stderr, p.fail)
		return 1
	}
	skipReason, fullSkip = p.skip, p.fullSkip
	if p.start {
		o.Full = p.full
	} else if !testing.Short() {
		fmt.Fprintf(os.Stderr, "testenv: SKIPPING every Kubernetes test: %s\n", p.skip)
	}
	if fullSkip != "" {
		fmt.Fprintf(os.Stderr, "testenv: SKIPPING the Kubernetes tests that need the controllers: %s\n", fullSkip)
	}
	if skipReason == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		t0 := time.Now()
		env, err := Start(ctx, o)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "testenv: control plane (full=%v) ready in %s at %s\n", o.Full, time.Since(t0).Round(time.Millisecond), env.Config.Host)
		shared = env
	}
	code := m.Run()
	if shared != nil {
		if code != 0 {
			fmt.Fprintf(os.Stderr, "testenv: logs kept in %s\n", shared.Dir)
			shared.Stop()
		} else {
			shared.Close()
		}
	}
	return code
}

// Require returns the control plane Main started, or skips the test saying why.
func Require(t testing.TB) *Env {
	t.Helper()
	if shared == nil {
		if skipReason == "" {
			skipReason = "no control plane: call testenv.Main from TestMain"
		}
		t.Skip(skipReason)
	}
	return shared
}

// RequireFull is Require for tests that need the controllers and fake nodes.
func RequireFull(t testing.TB) *Env {
	t.Helper()
	e := Require(t)
	if !e.Full {
		if fullSkip == "" {
			fullSkip = "the control plane was started without Options.Full"
		}
		t.Skip(fullSkip)
	}
	return e
}

func insecureTLS() *tls.Config { return &tls.Config{InsecureSkipVerify: true} } // self-signed test apiserver
