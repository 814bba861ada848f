package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// Time scale of the fault tests. The daemons have no clock of their own to
// speed up, so the faults are scaled in the units the daemons act on: the
// Commander tick, the directive TTL and the Soldier tick. A simulated
// cluster advances 10 s of its own time per Soldier tick.
const (
	faultCommanderTick = time.Second
	faultTTL           = 3 * time.Second
	faultSoldierTick   = 200 * time.Millisecond
)

// faultConfig is examples/small.hcl at the fault tests' time scale.
func faultConfig(t *testing.T) string {
	return fastConfig(t, faultCommanderTick.String(), faultTTL.String(), faultSoldierTick.String())
}

// wireTap records, from its own connection, every directive the Commander
// publishes and every report the Soldiers publish, in arrival order.
type wireTap struct {
	mu         sync.Mutex
	directives map[string][]wire.Directive // by domain
	reports    map[string][]wire.DomainReport
}

func tapWire(t *testing.T, c *bus.Conn, domains ...string) *wireTap {
	t.Helper()
	w := &wireTap{directives: map[string][]wire.Directive{}, reports: map[string][]wire.DomainReport{}}
	for _, d := range domains {
		if _, err := c.SubscribeDirectives(d, func(dir wire.Directive, err error) {
			if err == nil {
				w.mu.Lock()
				w.directives[dir.Domain] = append(w.directives[dir.Domain], dir)
				w.mu.Unlock()
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SubscribeReports(func(r wire.DomainReport, err error) {
		if err == nil {
			w.mu.Lock()
			w.reports[r.Domain] = append(w.reports[r.Domain], r)
			w.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

// last returns the last directive seen for domain and how many were seen.
func (w *wireTap) last(domain string) (wire.Directive, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ds := w.directives[domain]
	if len(ds) == 0 {
		return wire.Directive{}, 0
	}
	return ds[len(ds)-1], len(ds)
}

func (w *wireTap) allDirectives(domain string) []wire.Directive {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.directives[domain])
}

func (w *wireTap) allReports(domain string) []wire.DomainReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.reports[domain])
}

// quietMoment waits until, for every domain, the last directive seen is at
// least quiet old (and younger than a Commander tick, so that no other is in
// flight) and the domain's Soldier reports acting on it. A fault injected
// then follows those directives and no later ones; they are returned.
func quietMoment(t *testing.T, w *wireTap, quiet time.Duration, domains ...string) map[string]wire.Directive {
	t.Helper()
	last := map[string]wire.Directive{}
	waitFor(t, 10*faultCommanderTick, fmt.Sprintf("a quiet moment after a directive for %v", domains), func() (bool, string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, dom := range domains {
			ds, rs := w.directives[dom], w.reports[dom]
			if len(ds) == 0 || len(rs) == 0 {
				return false, "no directive or report yet for " + dom
			}
			d, r := ds[len(ds)-1], rs[len(rs)-1]
			if age := time.Since(d.IssuedAt); age < quiet || age > faultCommanderTick-200*time.Millisecond {
				return false, fmt.Sprintf("%s: last directive %s old", dom, age)
			}
			if r.DirectiveTerm != d.Term || r.DirectiveSeq != d.Seq {
				return false, fmt.Sprintf("%s: soldier reports directive %d/%d, last published %s", dom, r.DirectiveTerm, r.DirectiveSeq, seqString(d))
			}
			last[dom] = d
		}
		return true, ""
	})
	return last
}

// soldierSteps reads every step of a stopped Soldier's store, all episodes,
// in time order.
func soldierSteps(t *testing.T, path string) []store.Step {
	t.Helper()
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reopen %s: %v", path, err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatal(err)
	}
	eps, err := st.Episodes()
	if err != nil {
		t.Fatal(err)
	}
	var steps []store.Step
	for _, e := range eps {
		if err := st.Steps(e.ID, time.Time{}, time.Time{}, func(s store.Step) error {
			steps = append(steps, s)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(steps, func(a, b store.Step) int { return a.At.Compare(b.At) })
	return steps
}

// checkMinReplicas checks that in every step every app of domain had a
// replica target at or above its minimum: the target after the tick's writes,
// as recorded, and every write.
func checkMinReplicas(t *testing.T, cfgPath, domain string, steps []store.Step) {
	t.Helper()
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	apps := soldier.Apps(cfg, cfg.Domain(domain))
	for _, s := range steps {
		for _, a := range apps {
			target, ok := s.Outcome[recording.AppKey(recording.AppTarget, a.Name)]
			if !ok {
				t.Fatalf("%s step %d at %s records no target for %s", domain, s.Seq, s.At.Format(time.StampMilli), a.Name)
			}
			if target < float64(a.Min) {
				t.Errorf("%s step %d at %s: %s target %v below its minimum %d (fallback %v)",
					domain, s.Seq, s.At.Format(time.StampMilli), a.Name, target, a.Min, s.Outcome["fallback"])
			}
			if w, ok := s.Action["replicas/"+a.Name]; ok && w < float64(a.Min) {
				t.Errorf("%s step %d: wrote %v replicas for %s, below its minimum %d", domain, s.Seq, w, a.Name, a.Min)
			}
		}
	}
}

// rejected is the count of directives p rejected for reason.
func rejected(p *proc, reason string) float64 {
	_, body, err := p.get("/metrics")
	if err != nil {
		p.t.Fatalf("%s /metrics: %v", p.name, err)
	}
	for _, line := range strings.Split(body, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasSuffix(name, "_rejected_messages_total") || !strings.Contains(rest, `reason="`+reason+`"`) {
			continue
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			p.t.Fatalf("%s /metrics: %q: %v", p.name, line, err)
		}
		return v
	}
	return 0
}

// guardFallback reports whether a Soldier step ran the baseline because the
// rollback ladder reverted the domain or the automatic fallback holds it:
// fallback with a directive in force, which is not a fault's doing.
func guardFallback(s store.Step) bool {
	return s.Outcome["ladder_rung"] == float64(soldier.RungRevert) || s.Outcome["auto_fallback"] == 1
}

// outageDomains are the Soldiers of TestNATSOutage: the top and the bottom
// priority tier.
var outageDomains = []string{"payment", "platform"}

// TestNATSOutage stops the nats-server under a running Commander and two
// Soldiers and restarts it, with its JetStream store, on the same port.
//
// Time scale: the outage lasts 6 directive TTLs (18 s): 18 Commander ticks,
// 90 Soldier ticks, 15 minutes of the simulated clusters' time. The issue's
// 5 minutes of wall-clock time would be 100 TTLs at this scale; what the test
// pins does not change after the first TTL: the Soldiers act on their last
// directive until it expires, then fall back, for as long as the outage lasts.
//
// It pins, from the Soldiers' stores (every tick is a step) and their probes:
//   - every Soldier keeps ticking and stays live (/healthz) while not ready
//     (/readyz says it is reconnecting);
//   - until the last directive issued before the outage expires, its budget
//     is in force and fallback is 0; after it expires, every step until the
//     server returns is a fallback step;
//   - no app's replica target is below its minimum in any step;
//   - after the restart the Soldiers reconnect, accept new directives (a seq
//     after the last one before the outage) and leave fallback.
func TestNATSOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test; skipped with -short")
	}
	const outage = 6 * faultTTL
	t0 := time.Now()
	natsDir := filepath.Join(t.TempDir(), "nats")
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: natsDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown() })
	url, port := srv.ClientURL(), srv.Port()
	data := t.TempDir()
	cfgPath := filepath.Join(data, "fast.hcl")
	writeFile(t, cfgPath, faultConfig(t))
	tap := tapWire(t, watch(t, url), outageDomains...)

	cmd := start(t, "commander", "commander", "--config", cfgPath, "--nats", url, "--data", data)
	var soldiers []*proc
	for _, d := range outageDomains {
		soldiers = append(soldiers, startSoldier(t, cfgPath, url, data, d))
	}
	all := append([]*proc{cmd}, soldiers...)
	waitReady(t, all...)
	for _, s := range soldiers {
		waitFor(t, 15*time.Second, s.name+" follows directives", func() (bool, string) {
			r, f := s.metric("received_messages_total"), s.metric("fallback")
			return r >= 2 && f == 0, fmt.Sprintf("received %v, fallback %v", r, f)
		})
	}

	// Down, just after a directive so that none is in flight.
	before := quietMoment(t, tap, 150*time.Millisecond, outageDomains...)
	down := time.Now()
	srv.Shutdown()
	t.Logf("nats down at %s, %s after start; last directives: payment seq %d, platform seq %d",
		down.Format(time.StampMilli), down.Sub(t0).Round(time.Millisecond), before["payment"].Seq, before["platform"].Seq)

	for _, s := range soldiers {
		waitFor(t, 5*time.Second, s.name+" reports it is reconnecting", func() (bool, string) {
			code, body, err := s.get("/readyz")
			return code == http.StatusServiceUnavailable && strings.Contains(body, "reconnecting"), fmt.Sprint(code, " ", body, errString(err))
		})
	}
	for _, s := range soldiers {
		waitFor(t, faultTTL+2*time.Second, s.name+" falls back after the ttl", func() (bool, string) {
			f := s.metric("fallback")
			return f == 1, fmt.Sprintf("fallback %v", f)
		})
	}
	// Hold the outage, watching that every daemon stays up and every
	// Soldier keeps ticking in fallback.
	ticks := make([]float64, len(soldiers))
	for i, s := range soldiers {
		ticks[i] = s.metric("ticks_total")
	}
	for time.Since(down) < outage {
		for _, p := range all {
			if !p.running() {
				t.Fatalf("%s exited during the outage", p.name)
			}
		}
		for _, s := range soldiers {
			if code, _, err := s.get("/healthz"); code != http.StatusOK {
				t.Fatalf("%s /healthz %d %v during the outage", s.name, code, err)
			}
			if f := s.metric("fallback"); f != 1 {
				t.Fatalf("%s fallback %v during the outage after the ttl, want 1", s.name, f)
			}
		}
		time.Sleep(500 * time.Millisecond) // pacing the watch, not synchronising
	}
	for i, s := range soldiers {
		if n := s.metric("ticks_total") - ticks[i]; n < float64(outage/faultSoldierTick)/2 {
			t.Errorf("%s ticked %v times in fallback, want about %d", s.name, n, outage/faultSoldierTick-faultTTL/faultSoldierTick)
		}
	}

	// Up again, same port, same JetStream store.
	up := time.Now()
	srv, err = bus.StartEmbedded(bus.EmbeddedOptions{Port: port, StoreDir: natsDir})
	if err != nil {
		t.Fatalf("restart nats on port %d: %v", port, err)
	}
	t.Cleanup(func() { srv.Shutdown() })
	t.Logf("nats up again after %s", up.Sub(down).Round(time.Millisecond))
	for _, s := range soldiers {
		d := before[s.name[len("soldier-"):]]
		received := s.metric("received_messages_total")
		waitFor(t, 20*time.Second, s.name+" reconnects and follows directives again", func() (bool, string) {
			code, _, _ := s.get("/readyz")
			r, f := s.metric("received_messages_total"), s.metric("fallback")
			return code == http.StatusOK && r > received && f == 0, fmt.Sprintf("readyz %d, received %v (was %v), fallback %v", code, r, received, f)
		})
		// The test's own tap reconnects on its own backoff, maybe after the
		// Soldier: wait for it to see a directive of the resumed Commander.
		waitFor(t, 20*time.Second, "a directive issued after the restart for "+d.Domain, func() (bool, string) {
			last, _ := tap.last(d.Domain)
			return last.Newer(d) && !last.IssuedAt.Before(up), fmt.Sprintf("last directive term %d seq %d issued %s, want one after term %d seq %d issued after the restart",
				last.Term, last.Seq, last.IssuedAt.Format(time.StampMilli), d.Term, d.Seq)
		})
	}
	resumed := time.Now()
	t.Logf("soldiers follow directives again %s after nats came back", resumed.Sub(up).Round(time.Millisecond))
	for _, s := range soldiers {
		// The Commander sends no directive while disconnected (none is
		// buffered to arrive expired), and none is older than the one in
		// force.
		stale, replayed := rejected(s, wire.RejectStale), rejected(s, wire.RejectReplayed)
		if replayed > 0 {
			t.Errorf("%s rejected %v directives as replayed, want none", s.name, replayed)
		}
		t.Logf("%s rejected %v stale directives, %v in all", s.name, stale, max(0, s.metric("rejected_messages_total")))
	}
	waitFor(t, 20*time.Second, "the commander reconnects", func() (bool, string) {
		code, body, _ := cmd.get("/readyz")
		return code == http.StatusOK, body
	})
	for _, s := range soldiers {
		n := s.metric("ticks_total")
		waitFor(t, 10*time.Second, s.name+" ticks on directives", func() (bool, string) {
			m := s.metric("ticks_total")
			return m >= n+10, fmt.Sprintf("%v ticks since resuming", m-n)
		})
	}
	stopAll(t, all...)

	for _, dom := range outageDomains {
		steps := soldierSteps(t, filepath.Join(data, "soldier-"+dom+".db"))
		checkMinReplicas(t, cfgPath, dom, steps)
		d := before[dom]
		expiry := d.Expires()
		kept, fell, back := 0, 0, 0
		for _, s := range steps {
			fb := s.Outcome["fallback"]
			switch {
			case s.At.Before(down):
			case s.At.Before(expiry):
				kept++
				if s.Action["budget_cores"] != d.Cores || fb != 0 && !guardFallback(s) {
					t.Errorf("%s step %d at %s, before the last directive expired at %s: fallback %v, budget %v, want 0 and its %v cores",
						dom, s.Seq, s.At.Format(time.StampMilli), expiry.Format(time.StampMilli), fb, s.Action["budget_cores"], d.Cores)
				}
			case s.At.After(expiry) && s.At.Before(up):
				fell++
				if fb != 1 || s.Action["budget_cores"] != 0 {
					t.Errorf("%s step %d at %s, after the last directive expired at %s and before nats returned: fallback %v, budget %v, want 1 and none",
						dom, s.Seq, s.At.Format(time.StampMilli), expiry.Format(time.StampMilli), fb, s.Action["budget_cores"])
				}
			case s.At.After(resumed):
				back++
				if s.Action["budget_cores"] <= 0 || fb != 0 && !guardFallback(s) {
					t.Errorf("%s step %d at %s, after the soldiers resumed: fallback %v, budget %v, want 0 and a budget",
						dom, s.Seq, s.At.Format(time.StampMilli), fb, s.Action["budget_cores"])
				}
			}
		}
		if want := int((expiry.Sub(down) - faultSoldierTick) / faultSoldierTick / 2); kept < want {
			t.Errorf("%s: %d steps on the last directive during the outage, want at least %d", dom, kept, want)
		}
		if fell < int(outage/faultSoldierTick)/2 {
			t.Errorf("%s: %d fallback steps during the outage, want about %d", dom, fell, (outage-faultTTL)/faultSoldierTick)
		}
		t.Logf("%s: %d steps in all; outage: %d on the last directive (seq %d, expired %s after the outage began), %d in fallback; %d after resuming",
			dom, len(steps), kept, d.Seq, expiry.Sub(down).Round(time.Millisecond), fell, back)
	}
	t.Logf("whole test %s", time.Since(t0).Round(time.Millisecond))
}

// TestCommanderKilled SIGKILLs the Commander under a running Soldier, leaves
// it dead for 2 directive TTLs (6 s: 6 Commander ticks, 30 Soldier ticks) and
// starts it again on the same data directory. It pins:
//   - the Soldier carries on: it keeps ticking on the last directive until it
//     expires, then falls back, and no app goes below its minimum;
//   - the restarted Commander opens the store the killed one left (and its
//     consistency check passes), starts a new term above the killed one's,
//     and continues the sequence: its first seq follows the one held in the
//     directive bucket;
//   - no directive is replayed: on the wire every directive for the domain
//     is newer in (term, seq) than the one before, the directive the Soldier
//     reports acting on never goes back, and the Soldier rejects nothing;
//   - the Soldier leaves fallback on the first new directive.
func TestCommanderKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test; skipped with -short")
	}
	const gap = 2 * faultTTL
	t0 := time.Now()
	srv := startNATS(t)
	url := srv.ClientURL()
	data := t.TempDir()
	cfgPath := filepath.Join(data, "fast.hcl")
	writeFile(t, cfgPath, faultConfig(t))
	obs := watch(t, url)
	tap := tapWire(t, obs, "payment")

	cmd := start(t, "commander", "commander", "--config", cfgPath, "--nats", url, "--data", data)
	s := startSoldier(t, cfgPath, url, data, "payment")
	waitReady(t, cmd, s)
	waitFor(t, 15*time.Second, "the soldier follows directives", func() (bool, string) {
		r, f := s.metric("received_messages_total"), s.metric("fallback")
		return r >= 3 && f == 0, fmt.Sprintf("received %v, fallback %v", r, f)
	})

	before := quietMoment(t, tap, 150*time.Millisecond, "payment")["payment"]
	killed := time.Now()
	cmd.signal(syscall.SIGKILL)
	if code := cmd.exitCode(5 * time.Second); code != -1 {
		t.Fatalf("commander exited with %d, want killed by SIGKILL", code)
	}
	ticks := s.metric("ticks_total")
	waitFor(t, faultTTL+2*time.Second, "the soldier falls back after the ttl", func() (bool, string) {
		f := s.metric("fallback")
		return f == 1, fmt.Sprintf("fallback %v", f)
	})
	for time.Since(killed) < gap {
		if code, _, err := s.get("/readyz"); !s.running() || code != http.StatusOK {
			t.Fatalf("soldier without a commander: running %v, /readyz %d %v", s.running(), code, err)
		}
		time.Sleep(200 * time.Millisecond) // pacing the watch, not synchronising
	}
	if n := s.metric("ticks_total") - ticks; n < float64(gap/faultSoldierTick)/2 {
		t.Errorf("the soldier ticked %v times without a commander, want about %d", n, gap/faultSoldierTick)
	}
	held, ok := lastDirective(t, obs, "payment")
	if !ok {
		t.Fatal("no directive for payment in the bucket")
	}

	restarted := time.Now()
	received := s.metric("received_messages_total")
	cmd = start(t, "commander-restarted", "commander", "--config", cfgPath, "--nats", url, "--data", data)
	cmd.waitLog(`commander running:.*seq=`+strconv.FormatUint(held.Seq, 10), 10*time.Second)
	waitFor(t, 10*time.Second, "the soldier follows the restarted commander", func() (bool, string) {
		r, f := s.metric("received_messages_total"), s.metric("fallback")
		return r >= received+3 && f == 0, fmt.Sprintf("received %v (was %v), fallback %v", r, received, f)
	})
	resumed := time.Now()
	t.Logf("commander dead %s; the soldier follows the restarted one %s after its start",
		restarted.Sub(killed).Round(time.Millisecond), resumed.Sub(restarted).Round(time.Millisecond))
	if r := s.metric("rejected_messages_total"); r > 0 {
		t.Errorf("the soldier rejected %v directives, want none: nothing stale or replayed was offered", r)
	}
	stopAll(t, cmd, s)

	// On the wire: strictly newer every time, a new term at the restart,
	// the sequence continuing from the bucket.
	ds := tap.allDirectives("payment")
	var first *wire.Directive
	for i := 1; i < len(ds); i++ {
		if !ds[i].Newer(ds[i-1]) {
			t.Errorf("directive %d (%s) is not newer than the one before (%s): replayed", i, seqString(ds[i]), seqString(ds[i-1]))
		}
		if first == nil && ds[i].IssuedAt.After(restarted) {
			first = &ds[i]
		}
	}
	switch {
	case first == nil:
		t.Fatal("no directive from the restarted commander on the wire")
	case first.Term <= before.Term || first.Seq != held.Seq+1:
		t.Errorf("first directive after the restart %s, want a term after %d and seq %d (the bucket's %d + 1)",
			seqString(*first), before.Term, held.Seq+1, held.Seq)
	}
	// The directive the Soldier acted on never went back.
	var acted wire.Directive
	for _, r := range tap.allReports("payment") {
		if r.DirectiveSeq == 0 {
			continue
		}
		d := wire.Directive{Term: r.DirectiveTerm, Seq: r.DirectiveSeq}
		if d.Newer(acted) || d == acted {
			acted = d
			continue
		}
		t.Errorf("report %d acts on directive %s after %s: the soldier went back", r.Seq, seqString(d), seqString(acted))
	}
	if acted.Term != first.Term {
		t.Errorf("the soldier's last report acts on term %d, want the restarted commander's %d", acted.Term, first.Term)
	}

	// The Commander's store: the killed episode left running, the new one
	// ended, a greater term, and its steps continue the sequence.
	st, err := store.Open(filepath.Join(data, "commander.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); err != nil {
		t.Error(err)
	}
	eps, err := st.Episodes()
	if err != nil || len(eps) != 2 {
		t.Fatalf("commander.db: episodes %v, %v: want the killed one and the restarted one", eps, err)
	}
	slices.SortFunc(eps, func(a, b store.Episode) int { return a.Started.Compare(b.Started) })
	if !eps[0].Running() || eps[1].Running() {
		t.Errorf("commander.db: killed episode running %v, restarted one running %v: want true, false", eps[0].Running(), eps[1].Running())
	}
	t0s, t1s := eps[0].Meta["term"], eps[1].Meta["term"]
	if a, b := mustUint(t, t0s), mustUint(t, t1s); b <= a || a != before.Term || b != first.Term {
		t.Errorf("commander.db: terms %d then %d, want %d then %d", a, b, before.Term, first.Term)
	}
	var seqs []uint64
	if err := st.Steps(eps[1].ID, time.Time{}, time.Time{}, func(s store.Step) error {
		seqs = append(seqs, s.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if len(seqs) == 0 || seqs[0] != held.Seq+1 {
		t.Errorf("restarted commander's steps %s, want them to start at seq %d", span(seqs), held.Seq+1)
	}

	// The Soldier's store: on the last directive until it expired, fallback
	// after, the new directives' budgets once resumed; no app below its
	// minimum; the ledger has the two switches.
	dbPath := filepath.Join(data, "soldier-payment.db")
	steps := soldierSteps(t, dbPath)
	checkMinReplicas(t, cfgPath, "payment", steps)
	expiry := before.Expires()
	kept, fell := 0, 0
	for _, s := range steps {
		fb, budget := s.Outcome["fallback"], s.Action["budget_cores"]
		switch {
		case s.At.Before(killed):
		case s.At.Before(expiry):
			kept++
			if budget != before.Cores || fb != 0 && !guardFallback(s) {
				t.Errorf("step %d at %s, before the last directive expired: fallback %v, budget %v, want 0 and %v", s.Seq, s.At.Format(time.StampMilli), fb, budget, before.Cores)
			}
		case s.At.After(expiry) && s.At.Before(restarted):
			fell++
			if fb != 1 {
				t.Errorf("step %d at %s, after the last directive expired: fallback %v, want 1", s.Seq, s.At.Format(time.StampMilli), fb)
			}
		case s.At.After(resumed) && (budget <= 0 || fb != 0 && !guardFallback(s)):
			t.Errorf("step %d at %s, after resuming: fallback %v, budget %v, want 0 and a budget", s.Seq, s.At.Format(time.StampMilli), fb, budget)
		}
	}
	if kept == 0 || fell < int((gap-faultTTL)/faultSoldierTick)/2 {
		t.Errorf("%d steps on the last directive and %d in fallback while the commander was dead, want some and about %d", kept, fell, (gap-faultTTL)/faultSoldierTick)
	}
	st, err = store.Open(dbPath, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var switches []string
	if err := st.Ledger(time.Time{}, time.Time{}, "payment", func(e store.LedgerEntry) error {
		if e.Kind == "fallback" {
			switches = append(switches, strings.SplitN(e.Detail, ":", 2)[0])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(switches, "fallback acts") || switches[len(switches)-1] != "policy acts" {
		t.Errorf("ledger fallback switches %q, want a switch to fallback and the last back to the policy", switches)
	}
	t.Logf("soldier: %d steps on the last directive, %d in fallback; ledger %q; whole test %s", kept, fell, switches, time.Since(t0).Round(time.Millisecond))
}

// TestCommanderRestartedBehindTheLastTerm starts a Commander whose clock is
// behind the term of the directive the bus holds, as after a restart on a
// host whose clock is 30 s behind the previous one's, or a clock stepped
// back: the Soldier already acts on that directive. The new Commander's term
// must still be greater, or the Soldier rejects its directives as replayed
// until the clock catches up.
func TestCommanderRestartedBehindTheLastTerm(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test; skipped with -short")
	}
	srv := startNATS(t)
	url := srv.ClientURL()
	data := t.TempDir()
	cfgPath := filepath.Join(data, "fast.hcl")
	writeFile(t, cfgPath, faultConfig(t))
	obs := watch(t, url)

	ahead := time.Now().Add(30 * time.Second)
	prev := wire.Directive{Version: wire.Version, Cluster: "small", Domain: "payment", Term: uint64(ahead.UnixNano()), Seq: 41,
		IssuedAt: ahead, TTL: wire.Duration(faultTTL), Share: 0.3, Cores: 192, Urgency: 0.5, Headroom: 0.1,
		Policy: "forecast", Reason: "from a commander whose clock ran 30s ahead"}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := obs.PublishDirective(ctx, prev); err != nil {
		t.Fatal(err)
	}
	s := startSoldier(t, cfgPath, url, data, "payment")
	s.waitLog(`resumed from the last directive:.*seq=41`, 10*time.Second)

	cmd := start(t, "commander", "commander", "--config", cfgPath, "--nats", url, "--data", data)
	waitFor(t, 10*time.Second, "the soldier accepts the new commander's directives", func() (bool, string) {
		r, rej := s.metric("received_messages_total"), s.metric("rejected_messages_total")
		return r >= 3, fmt.Sprintf("received %v, rejected %v", r, rej)
	})
	if rej := s.metric("rejected_messages_total"); rej > 0 {
		t.Errorf("the soldier rejected %v directives, want none", rej)
	}
	d, _ := lastDirective(t, obs, "payment")
	if d.Term <= prev.Term || d.Seq <= prev.Seq {
		t.Errorf("the new commander's directive %s, want a term after %d and a seq after %d", seqString(d), prev.Term, prev.Seq)
	}
	stopAll(t, cmd, s)
}

func mustUint(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("term %q: %v", s, err)
	}
	return v
}

// seqString formats a directive's (term, seq) for messages.
func seqString(d wire.Directive) string {
	return strconv.FormatUint(d.Term, 10) + "/" + strconv.FormatUint(d.Seq, 10)
}
