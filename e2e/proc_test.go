package e2e

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
)

// bin holds the binaries TestMain builds, by name; empty with -short.
var bin = map[string]string{}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "regiment-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := build(dir)
	if code == 0 {
		// TestStagingGuide's control plane; the other tests need none.
		code = testenv.Main(m, testenv.Options{Full: true, Audit: true})
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles the three binaries into dir.
func build(dir string) int {
	t0 := time.Now()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/commander", "./cmd/soldier", "./cmd/regiment",
		"helm.sh/helm/v4/cmd/helm")
	cmd.Dir = ".."
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: build the binaries: %v\n", err)
		return 1
	}
	for _, name := range []string{"commander", "soldier", "regiment", "helm"} {
		bin[name] = filepath.Join(dir, name)
	}
	fmt.Fprintf(os.Stderr, "e2e: built commander, soldier, regiment and helm in %s\n", time.Since(t0).Round(time.Millisecond))
	return 0
}

// proc is one daemon process under test.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	addr string // its HTTP address
}

// start runs binary name with args (plus --listen on a free loopback port)
// and waits until it serves HTTP. The process is killed at cleanup if still
// running, and its log printed if the test failed.
func start(t *testing.T, label, name string, args ...string) *proc {
	t.Helper()
	out := &syncBuffer{}
	cmd := exec.Command(bin[name], append(args, "--listen", "127.0.0.1:0")...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", label, err)
	}
	p := &proc{t: t, name: label, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("--- %s log (last 40 lines) ---\n%s", label, out.tail(40))
		}
	})
	p.addr = p.waitLog(`serving http:.* addr=(\S+)`, 10*time.Second)[1]
	return p
}

// waitLog waits until the log matches re and returns the first match.
func (p *proc) waitLog(re string, timeout time.Duration) []string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for {
		if m := rx.FindStringSubmatch(p.out.String()); m != nil {
			return m
		}
		select {
		case <-p.done:
			if m := rx.FindStringSubmatch(p.out.String()); m != nil {
				return m
			}
			p.t.Fatalf("%s exited (%v) before logging %q", p.name, p.cmd.ProcessState, re)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s did not log %q within %s", p.name, re, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logCount is how many log lines match re.
func (p *proc) logCount(re string) int {
	return len(regexp.MustCompile(re).FindAllStringIndex(p.out.String(), -1))
}

// get fetches path from the process's HTTP server.
func (p *proc) get(path string) (int, string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + p.addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// metric sums the samples of the metric whose name is name or ends in
// "_"+name, over all label values; -1 if it cannot be read.
func (p *proc) metric(name string) float64 {
	code, body, err := p.get("/metrics")
	if err != nil || code != http.StatusOK {
		return -1
	}
	total, found := 0.0, false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, _, _ := strings.Cut(f[0], "{")
		if n != name && !strings.HasSuffix(n, "_"+name) {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			total += v
			found = true
		}
	}
	if !found {
		return -1
	}
	return total
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %s: %v", p.name, err)
	}
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// exitCode waits for the process to exit and returns its exit code.
func (p *proc) exitCode(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		p.t.Fatalf("%s did not exit within %s", p.name, timeout)
		return -1
	}
}

// waitFor polls cond every 50ms until it holds or timeout passes; what and
// cond's detail describe the failure.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (%s)", what, timeout, detail)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runBinary runs a binary to completion and returns its exit code and output.
func runBinary(t *testing.T, name string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin[name], args...).CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("run %s: %v", name, err)
	}
	return 0, string(out)
}

// syncBuffer is a bytes.Buffer safe for a writer and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) tail(n int) string {
	lines := strings.Split(strings.TrimRight(s.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
