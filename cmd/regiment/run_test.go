package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/daemon"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/scenario"
)

// TestRunRecordsEveryTick runs the whole system (embedded NATS, Commander,
// five Soldiers, simulated cluster) for one simulated hour and checks the
// summary and the store: one Commander step per minute and one Soldier step
// per domain per 10 s (60 + 5 x 360).
func TestRunRecordsEveryTick(t *testing.T) {
	dir := t.TempDir()
	ckpt, err := filepath.Abs(filepath.Join("..", "..", "models", "commander.ckpt")) // the small world's learned Commander
	if err != nil {
		t.Fatal(err)
	}
	cfg := learnedConfig(t, dir, ckpt)
	var out, errOut bytes.Buffer
	code := runRun(context.Background(), []string{
		"--config", cfg, "--scenario", "testdata/small-sample.hcl",
		"--duration", "1h", "--data", dir,
	}, &out, &errOut)
	if code != 0 {
		t.Fatalf("regiment run exited %d: %s", code, errOut.String())
	}
	for _, want := range []string{"1h0m0s simulated", "commander policy " + ckpt + ", soldier policy proportional", "SLO compliance", "regiment-independent", "hpa", "static", "the hierarchy's worth, regiment x regiment-independent: cost ", "6 episodes, 1860 steps", "0 messages rejected"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("summary lacks %q:\n%s", want, out.String())
		}
	}
	st, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stats, err := st.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if stats.Steps != 1860 || stats.Episodes != 6 {
		t.Fatalf("store has %d episodes, %d steps; want 6 and 1860", stats.Episodes, stats.Steps)
	}
	if err := st.Check(); err != nil {
		t.Fatalf("bbolt consistency check: %v", err)
	}
	// The Commander's first tick comes on every Soldier's first report, as
	// commander.Run's: no step, the first included, had a domain without one.
	eps, err := st.Episodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if ep.Level != "commander" {
			continue
		}
		n := 0
		if err := st.Steps(ep.ID, time.Time{}, time.Time{}, func(s store.Step) error {
			if stale := s.Outcome["stale_domains"]; stale != 0 {
				t.Errorf("commander step %d at %s: %g domains without a report", n, s.At, stale)
			}
			n++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != 60 {
			t.Errorf("%d commander steps, want 60", n)
		}
	}
}

// TestRunRestartsOnTheSameData: a second run on the same --data, started at
// once, begins its own episodes (ids had 1 s resolution: "begin episode
// ...: already exists").
func TestRunRestartsOnTheSameData(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		var out, errOut bytes.Buffer
		if code := runRun(context.Background(), []string{
			"--config", "../../examples/small.hcl", "--scenario", "testdata/small-sample.hcl",
			"--duration", "2m", "--data", dir,
		}, &out, &errOut); code != 0 {
			t.Fatalf("run %d exited %d: %s", i+1, code, errOut.String())
		}
	}
	st, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eps, err := st.Episodes()
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 12 || !strings.HasPrefix(eps[0].ID, "run-") {
		t.Fatalf("want 12 episodes of two runs, got %d: %v", len(eps), eps)
	}
}

// learnedConfig writes a copy of the small example into dir whose Commander
// is the checkpoint at ckpt (an absolute path).
func learnedConfig(t *testing.T, dir, ckpt string) string {
	t.Helper()
	src, err := os.ReadFile("../../examples/small.hcl")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), `policy = "forecast"`, `policy = "`+ckpt+`"`, 1)
	if s == string(src) {
		t.Fatal(`examples/small.hcl no longer has policy = "forecast" in its commander block`)
	}
	path := filepath.Join(dir, "learned.hcl")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPrintSummaryShowsTheBreachesAtMax: the summary has a row of the
// breaches at max_replicas and lists regiment's ceiling-bound apps only when
// some policy breached at its ceiling.
func TestPrintSummaryShowsTheBreachesAtMax(t *testing.T) {
	w := scenario.World{Config: &domains.Config{}, Scenario: sim.Scenario{Scenario: &domains.Scenario{Name: "s"}}}
	clear := runSummary{SystemRun: daemon.SystemRun{Metrics: sim.Metrics{BreachAppMinutes: 4}, Wall: time.Second}, baselines: make([]sim.Metrics, len(summaryBaselines))}
	var b bytes.Buffer
	printSummary(&b, w, clear)
	if strings.Contains(b.String(), "max_replicas") {
		t.Errorf("no breach at a ceiling, yet:\n%s", b.String())
	}
	atMax := clear
	atMax.baselines = slices.Clone(clear.baselines)
	atMax.baselines[1].BreachAppMinutesAtMax = 2.5 // the oracle's only
	atMax.Metrics.CeilingBound = []sim.CeilingBound{{App: "data/loaders-22", MaxReplicas: 600, BreachAppMinutes: 3}}
	b.Reset()
	printSummary(&b, w, atMax)
	wantLines(t, b.String(),
		"of which at max_replicas 0.0 0.0 2.5 0.0",
		"1 app breached with max_replicas ready (raise their set's max_replicas; no autoscaler can help them):",
		"data/loaders-22 600 3.0")
}
