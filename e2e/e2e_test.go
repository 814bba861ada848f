package e2e

import (
	"context"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/bus/bustest"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/wire"
)

// domainNames are the domains of examples/small.hcl.
var domainNames = []string{"payment", "fraud", "merchant", "data", "platform"}

// fastConfig returns examples/small.hcl with the given commander tick,
// directive TTL and soldier tick, after edits (old, new pairs) are applied.
func fastConfig(t *testing.T, commanderTick, ttl, soldierTick string, edits ...string) string {
	t.Helper()
	b, err := config.ReadPortable("../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	edits = append([]string{
		`  tick   = "60s"`, "  tick          = \"" + commanderTick + "\"\n  directive_ttl = \"" + ttl + "\"",
		`  tick = "10s"`, `  tick = "` + soldierTick + `"`,
	}, edits...)
	src := string(b)
	for i := 0; i < len(edits); i += 2 {
		if strings.Count(src, edits[i]) != 1 {
			t.Fatalf("examples/small.hcl: want exactly one %q to edit", edits[i])
		}
		src = strings.Replace(src, edits[i], edits[i+1], 1)
	}
	return src
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startNATS starts a real nats-server with JetStream on a loopback port.
func startNATS(t *testing.T) *bus.Embedded {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: filepath.Join(t.TempDir(), "nats")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// watch connects to the bus as the test's own observer of the KV.
func watch(t *testing.T, url string) *bus.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := bus.Connect(ctx, bus.ConnectOptions{URL: url, Name: "e2e", Cluster: "small"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func lastDirective(t *testing.T, c *bus.Conn, domain string) (wire.Directive, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	d, ok, err := c.LastDirective(ctx, domain)
	if err != nil {
		t.Logf("last directive for %s: %v", domain, err)
		return wire.Directive{}, false
	}
	return d, ok
}

func scenarioPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../cmd/regiment/testdata/small-sample.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func startSoldier(t *testing.T, cfg, url, data, domain string) *proc {
	t.Helper()
	return start(t, "soldier-"+domain, "soldier", "--config", cfg, "--domain", domain, "--nats", url,
		"--scenario", scenarioPath(t), "--data", data)
}

func waitReady(t *testing.T, ps ...*proc) {
	t.Helper()
	for _, p := range ps {
		waitFor(t, 15*time.Second, p.name+" ready", func() (bool, string) {
			code, body, err := p.get("/readyz")
			return code == http.StatusOK, strings.TrimSpace(body) + errString(err)
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// stopAll sends SIGTERM to every process and checks each exits 0 after
// logging the last shutdown stage.
func stopAll(t *testing.T, ps ...*proc) {
	t.Helper()
	for _, p := range ps {
		p.signal(syscall.SIGTERM)
	}
	for _, p := range ps {
		if code := p.exitCode(15 * time.Second); code != 0 {
			t.Errorf("%s exited with %d after SIGTERM, want 0", p.name, code)
		}
		if p.logCount(`store closed`) != 1 {
			t.Errorf("%s did not log its last shutdown stage \"store closed\"", p.name)
		}
	}
}

// TestDaemonsRunTheLoop runs a Commander and five Soldiers as processes
// against a real nats-server: directives flow, Soldiers actuate their
// simulated clusters, SIGHUP reloads (or keeps) the config, SIGTERM shuts
// everything down cleanly, and every store holds its episode.
func TestDaemonsRunTheLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test; skipped with -short")
	}
	t0 := time.Now()
	srv := startNATS(t)
	url := srv.ClientURL()
	data := t.TempDir()
	cfgPath := filepath.Join(data, "fast.hcl")
	writeFile(t, cfgPath, fastConfig(t, "1s", "5s", "200ms"))

	cmd := start(t, "commander", "commander", "--config", cfgPath, "--nats", url, "--data", data)
	var soldiers []*proc
	for _, d := range domainNames {
		soldiers = append(soldiers, startSoldier(t, cfgPath, url, data, d))
	}
	all := append([]*proc{cmd}, soldiers...)
	waitReady(t, all...)
	for _, p := range all {
		if code, _, err := p.get("/healthz"); code != http.StatusOK {
			t.Fatalf("%s /healthz: %d %v", p.name, code, err)
		}
	}

	// Directives flow: every Soldier accepts some, reports reach the
	// Commander, and Soldiers write replicas to their simulated clusters.
	for _, s := range soldiers {
		waitFor(t, 15*time.Second, s.name+" accepts directives", func() (bool, string) {
			v := s.metric("received_messages_total")
			return v > 0, "received_messages_total " + strconv.FormatFloat(v, 'g', -1, 64)
		})
	}
	waitFor(t, 15*time.Second, "the commander hears reports and ticks", func() (bool, string) {
		r, d := cmd.metric("received_messages_total"), cmd.metric("decisions_total")
		return r > 0 && d >= 2, "reports " + strconv.FormatFloat(r, 'g', -1, 64) + ", decisions " + strconv.FormatFloat(d, 'g', -1, 64)
	})
	waitFor(t, 15*time.Second, "a soldier actuates", func() (bool, string) {
		total := 0.0
		for _, s := range soldiers {
			total += max(0, s.metric("actuations_total"))
		}
		return total > 0, "actuations_total summed " + strconv.FormatFloat(total, 'g', -1, 64)
	})
	t.Logf("directives flowing and soldiers actuating %s after start", time.Since(t0).Round(time.Millisecond))

	// SIGHUP with a broken file: both keep running on the old config and
	// log every problem with file:line:col.
	payment := soldiers[0]
	good := fastConfig(t, "1s", "5s", "200ms")
	writeFile(t, cfgPath, fastConfig(t, "1s", "5s", "200ms",
		`  tick          = "1s"`, `  tick          = "fast"`,
		`  actuation = "replicas"`, "  actuation = \"replicas\"\n  bogus_knob = 1"))
	decisions := cmd.metric("decisions_total")
	for _, p := range []*proc{cmd, payment} {
		p.signal(syscall.SIGHUP)
	}
	for _, p := range []*proc{cmd, payment} {
		p.waitLog(`\[ERROR\].*config reload rejected, keeping the running config:.*problem=.*fast\.hcl:\d+,\d+`, 10*time.Second)
		waitFor(t, 5*time.Second, p.name+" logs both problems", func() (bool, string) {
			n := p.logCount(`config reload rejected.*problem=`)
			return n >= 2, strconv.Itoa(n) + " problems logged"
		})
	}
	waitFor(t, 10*time.Second, "the commander ticks on after a rejected reload", func() (bool, string) {
		d := cmd.metric("decisions_total")
		return d > decisions, "decisions_total " + strconv.FormatFloat(d, 'g', -1, 64)
	})
	for _, p := range []*proc{cmd, payment} {
		if code, _, _ := p.get("/healthz"); !p.running() || code != http.StatusOK {
			t.Fatalf("%s after a rejected reload: running %v, /healthz %d", p.name, p.running(), code)
		}
	}

	// SIGHUP with a good file: payment's floor rises to 0.45 and the next
	// directive honours it; the Soldier takes its new target utilisation.
	writeFile(t, cfgPath, strings.Replace(strings.Replace(good, "floor    = 0.15", "floor    = 0.45", 1),
		`  scale_down_cooldown = "5m"`, "  scale_down_cooldown = \"5m\"\n  target_utilisation = 0.6", 1))
	for _, p := range []*proc{cmd, payment} {
		p.signal(syscall.SIGHUP)
	}
	cmd.waitLog(`config reloaded:.*reserve_min=`, 10*time.Second)
	payment.waitLog(`config reloaded:.*target_utilisation=0.6`, 10*time.Second)
	obs := watch(t, url)
	waitFor(t, 10*time.Second, "payment's directive honours the reloaded floor", func() (bool, string) {
		d, ok := lastDirective(t, obs, "payment")
		return ok && d.Share >= 0.45-1e-9, "share " + strconv.FormatFloat(d.Share, 'g', 4, 64)
	})

	// SIGHUP with a new set of apps: a restart is needed, the Soldier says so.
	writeFile(t, cfgPath, strings.Replace(good, `apps "tools"`, `apps "toolbox"`, 1))
	payment.signal(syscall.SIGHUP)
	payment.waitLog(`config reload rejected.*the set of apps changed: restart to apply`, 10*time.Second)

	// SIGTERM: clean exits, then every store holds one ended episode with
	// steps, and the Soldiers' steps carry their budgets.
	t1 := time.Now()
	stopAll(t, all...)
	t.Logf("all six processes stopped in %s", time.Since(t1).Round(time.Millisecond))
	files := []string{filepath.Join(data, "commander.db")}
	for _, d := range domainNames {
		files = append(files, filepath.Join(data, "soldier-"+d+".db"))
	}
	for _, f := range files {
		checkStore(t, f)
		code, out := runBinary(t, "regiment", "episodes", "stats", "--db", f)
		m := regexp.MustCompile(`(?m)^steps\s+(\d+)`).FindStringSubmatch(out)
		if code != 0 || m == nil || m[1] == "0" {
			t.Errorf("regiment episodes stats --db %s: exit %d, want steps > 0:\n%s", f, code, out)
		}
	}
	t.Logf("whole test %s", time.Since(t0).Round(time.Millisecond))
}

// checkStore reopens a daemon's store: one ended episode with steps; a
// Soldier's has steps with a budget in force.
func checkStore(t *testing.T, path string) {
	t.Helper()
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reopen %s: %v", path, err)
	}
	defer st.Close()
	eps, err := st.Episodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 || eps[0].Running() {
		t.Fatalf("%s: %d episodes (%+v), want one ended", path, len(eps), eps)
	}
	steps, budgeted := 0, 0
	if err := st.Steps(eps[0].ID, time.Time{}, time.Time{}, func(s store.Step) error {
		steps++
		if s.Action["budget_cores"] > 0 {
			budgeted++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if steps == 0 {
		t.Errorf("%s: episode %s has no steps", path, eps[0].ID)
	}
	if eps[0].Level == "soldier" && budgeted == 0 {
		t.Errorf("%s: none of %d steps ran with a directive's budget", path, steps)
	}
	t.Logf("%s: episode %s, %d steps, %d with a budget", filepath.Base(path), eps[0].ID, steps, budgeted)
}

// TestSoldierResumesFromTheLastDirective stops the Commander after it has
// published, then starts a Soldier: it has its directive from the KV at once,
// with no Commander running. A restarted Commander continues the sequence.
func TestSoldierResumesFromTheLastDirective(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test; skipped with -short")
	}
	t0 := time.Now()
	srv := startNATS(t)
	url := srv.ClientURL()
	data := t.TempDir()
	cfgPath := filepath.Join(data, "fast.hcl")
	writeFile(t, cfgPath, fastConfig(t, "1s", "10m", "200ms"))
	obs := watch(t, url)

	cmd := start(t, "commander", "commander", "--config", cfgPath, "--nats", url, "--data", data)
	waitFor(t, 10*time.Second, "the commander publishes", func() (bool, string) {
		_, ok := lastDirective(t, obs, "payment")
		if !ok {
			bustest.Report(t, obs, "small", "payment") // as payment's Soldier would: the Commander directs only domains it has heard from
		}
		return ok, "no directive for payment in the KV"
	})
	stopAll(t, cmd)
	last, ok := lastDirective(t, obs, "payment")
	if !ok || last.Cores <= 0 {
		t.Fatalf("last directive for payment %+v, %v: want one with cores", last, ok)
	}

	// No Commander runs now: the directive can only come from the KV.
	t1 := time.Now()
	s := startSoldier(t, cfgPath, url, data, "payment")
	s.waitLog(`resumed from the last directive:.*seq=`+strconv.FormatUint(last.Seq, 10), 5*time.Second)
	waitReady(t, s)
	if got := s.metric("received_messages_total"); got != 1 {
		t.Errorf("received_messages_total %v, want 1 (the KV's directive)", got)
	}
	if got := s.metric("rejected_messages_total"); got > 0 {
		t.Errorf("rejected_messages_total %v, want none", got)
	}
	if got := s.metric("fallback"); got != 0 {
		t.Errorf("fallback %v, want 0: the resumed directive is in force", got)
	}
	t.Logf("soldier started, resumed and ticked in %s", time.Since(t1).Round(time.Millisecond))
	stopAll(t, s)

	// Its first step ran on the resumed budget.
	st, err := store.Open(filepath.Join(data, "soldier-payment.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	eps, err := st.Episodes()
	if err != nil || len(eps) != 1 {
		t.Fatalf("episodes %v, %v: want one", eps, err)
	}
	var first *store.Step
	err = st.Steps(eps[0].ID, time.Time{}, time.Time{}, func(s store.Step) error {
		if first == nil {
			first = &s
		}
		return nil
	})
	st.Close()
	if err != nil || first == nil {
		t.Fatalf("steps: %v, first %v", err, first)
	}
	if got := first.Action["budget_cores"]; math.Abs(got-last.Cores) > 1e-9 {
		t.Errorf("first step's budget_cores %v, want the resumed directive's %v", got, last.Cores)
	}

	// A restarted Commander starts a new term and continues the sequence.
	cmd = start(t, "commander-restarted", "commander", "--config", cfgPath, "--nats", url, "--data", data)
	var d wire.Directive
	waitFor(t, 10*time.Second, "the restarted commander publishes", func() (bool, string) {
		d, _ = lastDirective(t, obs, "payment")
		if d.Term == last.Term {
			bustest.Report(t, obs, "small", "payment")
		}
		return d.Term != last.Term, "term still " + strconv.FormatUint(d.Term, 10)
	})
	if d.Term <= last.Term || d.Seq != last.Seq+1 {
		t.Errorf("after restart: term %d seq %d, want a term after %d and seq %d", d.Term, d.Seq, last.Term, last.Seq+1)
	}
	stopAll(t, cmd)
	t.Logf("whole test %s", time.Since(t0).Round(time.Millisecond))
}
