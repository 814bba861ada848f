package main

import (
	"bytes"
	"context"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/offline/episodes"
	"github.com/regimentd/regiment/internal/offline/report"
)

// recommendConfig writes a copy of the small example (the heuristic
// Commander) into dir with the domains named in recommend mode.
func recommendConfig(t *testing.T, dir string, recommend ...string) string {
	t.Helper()
	src, err := os.ReadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for _, d := range recommend {
		s = strings.Replace(s, `domain "`+d+`" {`, `domain "`+d+`" {`+"\n  mode = \"recommend\"", 1)
	}
	path := filepath.Join(dir, "cluster.hcl")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs `regiment run` for duration on cfg into data.
func run(t *testing.T, cfg, data, duration string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := runRun(context.Background(), []string{"--config", cfg, "--scenario", "testdata/small-sample.hcl",
		"--duration", duration, "--data", data}, &out, &errOut); code != 0 {
		t.Fatalf("regiment run exited %d: %s", code, errOut.String())
	}
	return out.String()
}

// TestReportOnARecommendRun runs the whole system for an hour with payment
// and data in recommend mode, then reports on its store: only those two
// domains appear, the live core-hours are the recorded targets' (summed here
// from the store itself), the recommend steps made no write, the live HPA
// bounds were recorded, and report.md and a PNG are written.
func TestReportOnARecommendRun(t *testing.T) {
	dir := t.TempDir()
	cfgPath := recommendConfig(t, dir, "payment", "data")
	data := filepath.Join(dir, "data")
	if summary := run(t, cfgPath, data, "1h"); !strings.Contains(summary, "recommend mode (nothing written; the cluster's HPAs scale them): payment, data") {
		t.Errorf("the summary does not name the recommend-mode domains:\n%s", summary)
	}

	out := filepath.Join(dir, "review")
	var stdout, stderr bytes.Buffer
	if code := runReport(context.Background(), []string{"--config", cfgPath, "--episodes", data, "--out", out, "--top", "2"}, &stdout, &stderr); code != 0 {
		t.Fatalf("regiment report exited %d: %s", code, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(out, report.MarkdownName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| payment | 1.0 |", "| data | 1.0 |", "## payment: the 2 apps that differ most", "(est.)", report.PlotName} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "| fraud |") || strings.Contains(stdout.String(), "fraud") {
		t.Errorf("an active domain is reported:\n%s", md)
	}
	f, err := os.Open(filepath.Join(out, report.PlotName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", report.PlotName, err)
	}
	if b := img.Bounds(); b.Dx() < 900 || b.Dy() < 6*200 { // 2 domains x (sum + 2 apps)
		t.Errorf("%s is %v, want 960 wide and a row per plot", report.PlotName, b)
	}

	// The figures against the store, read here independently.
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	srcs, done, err := episodes.Sources(context.Background(), data, "")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	rec, err := report.Read(context.Background(), cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	results := report.Compare(rec)
	coreHours, steps, writes := storeCoreHours(t, filepath.Join(data, "regiment.db"), cfg.Soldier.Tick, "payment")
	if len(results) != 2 || results[0].Name != "payment" || results[0].Steps != steps || steps != 360 {
		t.Fatalf("results %+v; want payment and data, payment with the store's %d recommend steps (360)", results, steps)
	}
	if math.Abs(results[0].Live.CoreHours-coreHours) > 1e-9 || writes != 0 {
		t.Errorf("payment live core-hours %g, the store's %g; %d writes in recommend steps, want none", results[0].Live.CoreHours, coreHours, writes)
	}
	if results[0].Recommended.CoreHours <= 0 || results[0].Recommended.MeanReplicas < 6 { // 6 apps of at least 1 replica
		t.Errorf("payment recommended %+v", results[0].Recommended)
	}
	for _, a := range results[0].Apps { // the simulated cluster's HPAs have the apps' bounds
		if a.HPAMin != 2 || (a.HPAMax != 60 && a.HPAMax != 40) {
			t.Errorf("%s: live HPA bounds [%g, %g], want small.hcl's [2, 60] or [2, 40]", a.Name, a.HPAMin, a.HPAMax)
		}
	}
}

// storeCoreHours sums domain's live core-hours (target x cpu per app and
// step) over the recommend steps in the store at path, and counts those
// steps and their replica writes.
func storeCoreHours(t *testing.T, path string, tick time.Duration, domain string) (coreHours float64, steps, writes int) {
	t.Helper()
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eps, err := st.Episodes()
	if err != nil {
		t.Fatal(err)
	}
	cpu := map[string]float64{"checkout": 0.5, "ledger": 1} // examples/small.hcl's payment
	for _, e := range eps {
		if e.Domain != domain {
			continue
		}
		err := st.Steps(e.ID, time.Time{}, time.Time{}, func(s store.Step) error {
			if s.Outcome[recording.OutcomeRecommend] != 1 {
				return nil
			}
			steps++
			for k, v := range s.Outcome {
				if metric, app, ok := recording.SplitAppKey(k); ok && metric == recording.AppTarget {
					set := strings.TrimPrefix(app, domain+"/")
					set = set[:strings.LastIndex(set, "-")]
					coreHours += v * cpu[set] * tick.Hours()
				}
			}
			for k := range s.Action {
				if strings.HasPrefix(k, "replicas/") {
					writes++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return coreHours, steps, writes
}

// TestReportErrors pins the errors of regiment report: usage, a missing
// store, a store without Soldier steps and one without recommend steps.
func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	cfgPath := recommendConfig(t, dir)
	empty := filepath.Join(dir, "empty.db")
	st, err := store.Open(empty, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	active := filepath.Join(dir, "active")
	run(t, cfgPath, active, "2m")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help teaches", []string{"--help"}, 0, "Before switching a domain to mode = \"active\""},
		{"flags are required", []string{"--config", cfgPath}, 2, "--config, --episodes and --out are required"},
		{"a missing store", []string{"--config", cfgPath, "--episodes", filepath.Join(dir, "nowhere"), "--out", dir}, 1, "no store at"},
		{"an empty store", []string{"--config", cfgPath, "--episodes", empty, "--out", dir}, 1, `no Soldier steps of cluster "small"`},
		{"no recommend-mode step", []string{"--config", cfgPath, "--episodes", active, "--out", dir}, 1, `none in mode "recommend"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runReport(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr.String(), tc.code, tc.want)
			}
		})
	}
}

// TestReportListsTheAppsAtTheirCeiling: with payment's checkouts held to
// max_replicas 2 in recommend mode, their live HPAs stop at 2 replicas and
// breach: report.md lists them apart, with their ceiling and minutes.
func TestReportListsTheAppsAtTheirCeiling(t *testing.T) {
	dir := t.TempDir()
	cfgPath := recommendConfig(t, dir, "payment")
	src, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	low := strings.Replace(string(src), "max_replicas    = 60", "max_replicas    = 2", 1) // payment's checkouts
	if err := os.WriteFile(cfgPath, []byte(low), 0o644); err != nil {
		t.Fatal(err)
	}
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "review")
	run(t, cfgPath, data, "1h")
	var stdout, stderr bytes.Buffer
	if code := runReport(context.Background(), []string{"--config", cfgPath, "--episodes", data, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("regiment report exited %d: %s", code, stderr.String())
	}
	// Re-measured 2026-12-04, when pending pods went to arrival order (a
	// tick's new replicas in a random order of apps): checkout-1, the
	// smallest (it wants 3 replicas at most, for 13 minutes), no longer
	// breaches with its 2 replicas ready, so 3 of the 4 breach at the
	// ceiling (all 4 did when P0 was always scheduled first); all 4 still
	// want more than it.
	if !strings.Contains(stdout.String(), "; 3 apps breached at the ceiling, 4 apps wanted more than it (see report.md)") {
		t.Errorf("the summary does not count payment's checkouts at (3) and over (4) their ceiling:\n%s", stdout.String())
	}
	md, err := os.ReadFile(filepath.Join(out, report.MarkdownName))
	if err != nil {
		t.Fatal(err)
	}
	section := string(md[strings.Index(string(md), "## payment: apps that breached with their ceiling's replicas ready")+1:])
	if !strings.HasPrefix(section, "# payment: apps that breached") || !strings.Contains(section, "| payment/checkout-0 | 2 |") ||
		strings.Contains(section, "payment/ledger") {
		t.Errorf("report.md does not list the checkouts alone at their ceiling of 2:\n%s", md)
	}
	// And the replicas their sizing wanted, more than the ceiling of 2.
	over := string(md[strings.Index(string(md), "## payment: apps whose sizing wanted more than their ceiling"):])
	row := regexp.MustCompile(`\| payment/checkout-0 \| 2 \| [0-9.]+ \| ([0-9]+) \|`).FindStringSubmatch(over)
	if row == nil || strings.Contains(over, "payment/ledger") {
		t.Fatalf("report.md does not list the checkouts alone wanting more than their ceiling:\n%s", over)
	}
	if wanted, _ := strconv.Atoi(row[1]); wanted <= 2 {
		t.Errorf("checkout-0 wanted %d replicas at most, want more than its ceiling of 2", wanted)
	}
}
