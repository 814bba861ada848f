package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
	bolt "go.etcd.io/bbolt"
)

var epT0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// epFixture writes a store with a commander episode, two soldier episodes
// (payment has a guarded step) and ledger entries, and returns its directory.
func epFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eps := []store.Episode{
		{ID: "cmd-1", Level: "commander", Cluster: "prod", Policy: "ppo@7", ObsLayout: []string{"cluster.free_share", "cluster.nodes", "time.event"}, ObsVersion: 1, Started: epT0.Add(-time.Hour)},
		{ID: "sol-payment", Level: "soldier", Domain: "payment", Cluster: "prod", Policy: "ppo@3",
			ObsLayout: []string{"rps", "p99_ratio", "budget_util"}, ObsVersion: 1, Started: epT0.Add(-time.Minute)},
		{ID: "sol-fraud", Level: "soldier", Domain: "fraud", Cluster: "prod", Policy: "hpa", Started: epT0.Add(-time.Minute)},
	}
	for _, e := range eps {
		if err := s.BeginEpisode(e); err != nil {
			t.Fatal(err)
		}
	}
	a := s.NewAppender(16, 0)
	steps := []store.Step{
		{Episode: "cmd-1", Seq: 1, At: epT0, Obs: []float64{0.25, 0.012, 1},
			Action: map[string]float64{"share/payment": 0.3, "cores/payment": 3600, "share/fraud": 0.2, "reserve": 0.1, "capacity_target_cores": 41000},
			Guards: []store.Guard{{Name: "floor", Target: "share/payment", Before: 0.25, After: 0.3, Reason: "payment floor 0.30"}},
			Reward: map[string]float64{"total": 0.8}},
		{Episode: "sol-payment", Seq: 0, At: epT0, Obs: []float64{100, 0.5, 0.9},
			Action: map[string]float64{"replicas/checkout": 4}, Reward: map[string]float64{"total": 0.5, "slo": 0.7},
			Outcome: map[string]float64{"p99_seconds": 0.08, "slo_compliant": 1}},
		{Episode: "sol-payment", Seq: 1, At: epT0.Add(10 * time.Second), Obs: []float64{300, 1.4, 0.95},
			Action: map[string]float64{"replicas/checkout": 7, "cores": 3600},
			Guards: []store.Guard{{Name: "budget-cap", Target: "replicas/checkout", Before: 9, After: 7, Reason: "spend over budget x 1.1"}},
			Reward: map[string]float64{"total": -0.25, "slo": -0.4}, Outcome: map[string]float64{"p99_seconds": 0.12, "slo_compliant": 0}},
		{Episode: "sol-payment", Seq: 2, At: epT0.Add(20 * time.Second), Obs: []float64{110, 0.6, 0.9},
			Action: map[string]float64{"replicas/checkout": 7}, Reward: map[string]float64{"total": 0.25}},
		{Episode: "sol-fraud", Seq: 0, At: epT0, Action: map[string]float64{"replicas/scoring": 3}},
		{Episode: "sol-fraud", Seq: 1, At: epT0.Add(10 * time.Second), Action: map[string]float64{"replicas/scoring": 3}},
	}
	for _, st := range steps {
		if err := a.Append(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, e := range []store.LedgerEntry{
		{At: epT0, Domain: "payment", Kind: "directive", Detail: "share 0.30 cores 3600", Values: map[string]float64{"share": 0.3}},
		{At: epT0, Domain: "fraud", Kind: "directive", Detail: "share 0.20"},
		{At: epT0.Add(-time.Hour), Domain: "payment", Kind: "mode", Detail: "active"},
	} {
		if err := s.AppendLedger(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EndEpisode("sol-fraud", epT0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runEp runs `regiment episodes args...` and returns exit code and output.
func runEp(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runEpisodes(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// hasLine reports whether out has a line whose whitespace-separated fields
// start with want's.
func hasLine(out, want string) bool {
	w := strings.Fields(want)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(w) && strings.Join(f[:len(w)], " ") == strings.Join(w, " ") {
			return true
		}
	}
	return false
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := runEp(t, args...)
	if code != 0 {
		t.Fatalf("episodes %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
	}
	return out
}

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !hasLine(out, l) {
			t.Errorf("no line starting %q in:\n%s", l, out)
		}
	}
}

func TestEpisodesList(t *testing.T) {
	dir := epFixture(t)
	out := mustRun(t, "list", "--data", dir)
	wantLines(t, out,
		"ID LEVEL DOMAIN POLICY STARTED ENDED STEPS",
		"cmd-1 commander - ppo@7 2024-05-01T11:00:00Z running 1",
		"sol-fraud soldier fraud hpa 2024-05-01T11:59:00Z 2024-05-01T12:01:00Z 2",
		"sol-payment soldier payment ppo@3 2024-05-01T11:59:00Z running 3",
	)
	// --db names the file directly; --domain filters.
	out = mustRun(t, "list", "--db", filepath.Join(dir, "regiment.db"), "--domain", "fraud")
	if hasLine(out, "sol-payment") || !hasLine(out, "sol-fraud") {
		t.Errorf("list --domain fraud:\n%s", out)
	}
}

func TestEpisodesShow(t *testing.T) {
	dir := epFixture(t)
	out := mustRun(t, "show", "--data", dir, "--episode", "sol-payment")
	wantLines(t, out,
		"episode sol-payment: soldier payment, policy ppo@3, cluster prod,",
		"TIME SEQ ACTION REWARD OUTCOME GUARDS",
		"2024-05-01T12:00:00Z 0 replicas/checkout=4 0.5 p99_seconds=0.08 slo_compliant=1 -",
		"2024-05-01T12:00:10Z 1 cores=3600 replicas/checkout=7 -0.25 p99_seconds=0.12 slo_compliant=0 budget-cap(replicas/checkout 9->7)",
	)
	out = mustRun(t, "show", "--data", dir, "--episode", "sol-payment", "--from", "2024-05-01T12:00:05Z", "--limit", "1")
	if hasLine(out, "2024-05-01T12:00:00Z") || !hasLine(out, "2024-05-01T12:00:10Z 1") || !strings.Contains(out, "more steps follow") {
		t.Errorf("show --from --limit 1:\n%s", out)
	}
}

func TestEpisodesWhyNamesTheGuard(t *testing.T) {
	dir := epFixture(t)
	out := mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:00:15Z")
	wantLines(t, out,
		"decision for domain payment at 2024-05-01T12:00:15Z",
		"soldier episode sol-payment (policy ppo@3, cluster prod), step 1 at 2024-05-01T12:00:10Z (5s before)",
		"inputs that mattered (top 3 of 3 by |value - mean|, mean over 3 steps of the episode):",
		"rps 300 170 +130", // the input furthest from its mean ranks first
		"guards that changed it:",
		"budget-cap replicas/checkout 9 -> 7 spend over budget x 1.1",
		"total -0.25",
		"p99_seconds 0.12",
		"commander episode cmd-1 (policy ppo@7), step 1 at 2024-05-01T12:00:00Z, outputs for payment:",
		"cores/payment 3600",
		"share/payment 0.3",
		"floor share/payment 0.25 -> 0.3 payment floor 0.30",
		"cluster-wide outputs:",
		"capacity_target_cores 4.1e+04",
		"reserve 0.1",
		"the pool as the Commander saw it",
		"cluster.free_share 0.25",
		"cluster.nodes 0.012",
		"time.event 1",
		"2024-05-01T12:00:00Z payment directive share 0.30 cores 3600 share=0.3",
	)
	if i, j := strings.Index(out, "rps"), strings.Index(out, "p99_ratio"); i < 0 || j < i {
		t.Errorf("rps (deviation 130) should rank above p99_ratio:\n%s", out)
	}
	if strings.Contains(out, "share/fraud") || strings.Contains(out, "fraud directive") {
		t.Errorf("why for payment shows fraud's outputs:\n%s", out)
	}
	if strings.Contains(out, "mode active") {
		t.Errorf("ledger entry an hour before T is outside the window:\n%s", out)
	}

	// A step without guards says so.
	out = mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:00:25Z")
	if !strings.Contains(out, "step 2 at") || !strings.Contains(out, "guards: none changed the policy output") {
		t.Errorf("why at the unguarded step:\n%s", out)
	}
}

func TestEpisodesExport(t *testing.T) {
	dir := epFixture(t)
	out := mustRun(t, "export", "--data", dir, "--domain", "payment")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], `{"episode":"sol-payment","level":"soldier","domain":"payment","obs_version":1,"seq":1,`) {
		t.Fatalf("jsonl export of payment:\n%s", out)
	}
	file := filepath.Join(t.TempDir(), "all.csv")
	mustRun(t, "export", "--data", dir, "--format", "csv", "--out", file)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(rows) != 7 || !strings.HasPrefix(rows[0], "episode,level,domain,seq,at,obs.cluster.free_share,obs.cluster.nodes,obs.time.event,obs.rps,") || !strings.HasSuffix(rows[0], ",guards") {
		t.Fatalf("csv export:\n%s", raw)
	}
	if !strings.Contains(string(raw), ",budget-cap:replicas/checkout:9->7\n") {
		t.Errorf("csv has no guard column value:\n%s", raw)
	}
}

func TestEpisodesStats(t *testing.T) {
	dir := epFixture(t)
	out := mustRun(t, "stats", "--data", dir)
	wantLines(t, out,
		"episodes 3",
		"steps 6",
		"level commander 1",
		"level soldier 5",
		"domain fraud 2",
		"domain payment 3",
		"span 2024-05-01T12:00:00Z .. 2024-05-01T12:00:20Z (20s)",
		"guarded steps 2 (33.3%)",
		"reward mean 0.325 (total, over 4 steps)",
		"ledger entries 3",
		"sol-payment soldier payment 3 1 0.1667",
	)
}

func TestEpisodesPrune(t *testing.T) {
	dir := epFixture(t)
	out := mustRun(t, "prune", "--data", dir, "--before", "2024-05-01T12:05:00Z")
	// 6 steps + 3 ledger entries; sol-fraud ended at 12:01 and is now empty.
	wantLines(t, out, "pruned 9 steps and ledger entries before 2024-05-01T12:05:00Z; removed 1 ended, empty episodes")
	out = mustRun(t, "stats", "--data", dir)
	wantLines(t, out, "episodes 2", "steps 0")
}

func TestEpisodesUsageAndFailures(t *testing.T) {
	dir := epFixture(t)
	for _, tc := range []struct {
		rule     string
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{"--help teaches with examples", []string{"why", "--help"}, 0, "Examples:", ""},
		{"bare episodes prints usage", nil, 2, "", "Subcommands:"},
		{"unknown subcommand is a usage error", []string{"replay"}, 2, "", `unknown subcommand "replay"`},
		{"show needs an episode", []string{"show", "--data", dir}, 2, "", "--episode is required"},
		{"bad time is a usage error", []string{"why", "--data", dir, "--domain", "payment", "--at", "yesterday"}, 2, "", `bad time "yesterday"`},
		{"unknown flag is a usage error", []string{"list", "--bogus"}, 2, "", "flag provided but not defined: --bogus"},
		{"prune needs a cutoff", []string{"prune", "--data", dir}, 2, "", "exactly one of --older-than and --before"},
		{"missing store fails", []string{"list", "--data", t.TempDir()}, 1, "", "no store at"},
		{"unknown episode fails", []string{"show", "--data", dir, "--episode", "nope"}, 1, "", "episode not found"},
		{"unknown domain fails", []string{"why", "--data", dir, "--domain", "search", "--at", "2024-05-01T12:00:15Z"}, 1, "", `no soldier episode for domain "search"`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			code, out, errOut := runEp(t, tc.args...)
			if code != tc.code || !strings.Contains(out, tc.inStdout) || !strings.Contains(errOut, tc.inStderr) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
		})
	}
}

func TestEpisodesLockedStoreSaysSo(t *testing.T) {
	dir := epFixture(t)
	s, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{}) // a running daemon
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, _, errOut := runEp(t, "list", "--data", dir)
	if code != 1 || !strings.Contains(errOut, "is locked by another process") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestDispatchEpisodes(t *testing.T) {
	dir := epFixture(t)
	var stdout, stderr bytes.Buffer
	if code := dispatch(context.Background(), []string{"episodes", "stats", "--data", dir}, &stdout, &stderr); code != 0 || !hasLine(stdout.String(), "steps 6") {
		t.Fatalf("regiment episodes stats: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestEpisodesWhySaysWhichAppsWereNotWritten: a step with apps the Soldier
// could not write lists them with the reason, and the ledger entry of the
// failure shows; the apps that breached with max_replicas ready are named
// apart, sorted.
func TestEpisodesWhySaysWhichAppsWereNotWritten(t *testing.T) {
	dir := epFixture(t)
	s, err := store.Open(filepath.Join(dir, "regiment.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := s.NewAppender(1, 0)
	err = a.Append(store.Step{Episode: "sol-payment", Seq: 3, At: epT0.Add(30 * time.Second), Obs: []float64{110, 0.6, 0.9},
		Action: map[string]float64{"replicas/checkout": 7},
		Outcome: map[string]float64{"breaching_at_max/payment/ledger": 1, "breaching_at_max/payment/auth": 1, "ready/payment/auth": 40,
			"limited_by_max/payment/auth": 46, "limited_by_max/payment/checkout": 12},
		Guards: []store.Guard{{Name: "write_failed", Target: "replicas/payment/cart", Before: 5, After: 3,
			Reason: "denied: denied by ValidatingAdmissionPolicy 'freeze-cart'"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLedger(store.LedgerEntry{At: epT0.Add(30 * time.Second), Domain: "payment", Kind: "write_failed",
		Detail: "payment/cart not written (denied)"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "why", "--data", dir, "--domain", "payment", "--at", "2024-05-01T12:00:35Z")
	wantLines(t, out,
		"guards: none changed the policy output",
		"apps not written (target -> replicas kept):",
		"replicas/payment/cart 5 -> 3 denied: denied by ValidatingAdmissionPolicy 'freeze-cart'",
		"apps breaching with max_replicas ready (raise their max_replicas; no autoscaler serves them): payment/auth, payment/ledger",
		"apps whose sizing wants more than their max_replicas (raise it before they breach): payment/auth (wants 46), payment/checkout (wants 12)",
		"2024-05-01T12:00:30Z payment write_failed payment/cart not written (denied)",
	)
}

// damagedFixture is epFixture with 600 more payment steps (so its steps
// bucket has a branch root over leaf pages), hurt by damage.
func damagedFixture(t *testing.T, damage string) string {
	t.Helper()
	dir := epFixture(t)
	path := filepath.Join(dir, "regiment.db")
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := s.NewAppender(100, 0)
	for i := range 600 {
		st := store.Step{Episode: "sol-payment", Seq: uint64(10 + i), At: epT0.Add(time.Duration(30+i) * time.Second),
			Obs: []float64{100, 0.5, 0.9}, Action: map[string]float64{"replicas/checkout": 4}, Reward: map[string]float64{"total": 0.5}}
		if err := a.Append(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var root uint64
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket([]byte("steps")).Bucket([]byte("sol-payment")).Root())
		return nil
	})
	_ = db.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch damage {
	case "truncated to half":
		raw = raw[:len(raw)/2]
	case "zero-length":
		raw = nil
	case "garbage":
		for i := range raw {
			raw[i] = byte(i*7919 + i>>8)
		}
	case "branch page overwritten":
		for i := 16; i < 4096; i++ {
			raw[int(root)*4096+i] = byte(i * 31)
		}
	default:
		t.Fatalf("unknown damage %q", damage)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEpisodesDamagedStoreExitsOneWithoutPanic(t *testing.T) {
	for _, damage := range []string{"truncated to half", "zero-length", "garbage", "branch page overwritten"} {
		for _, sub := range []string{"list", "stats", "show", "export"} {
			t.Run(damage+"/"+sub, func(t *testing.T) {
				dir := damagedFixture(t, damage)
				args := []string{sub, "--data", dir}
				if sub == "show" {
					args = append(args, "--episode", "sol-payment")
				}
				code, _, errOut := runEp(t, args...)
				if code != 1 {
					t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut)
				}
				hint := "regiment episodes repair"
				if damage == "zero-length" {
					hint = "remove it to start an empty store"
				}
				if !strings.Contains(errOut, "damaged") || !strings.Contains(errOut, hint) {
					t.Fatalf("stderr does not say the store is damaged and what to do:\n%s", errOut)
				}
			})
		}
	}
}

func TestEpisodesRepairBringsBackTheReadableEpisodes(t *testing.T) {
	dir := damagedFixture(t, "branch page overwritten")
	damaged, err := os.ReadFile(filepath.Join(dir, "regiment.db"))
	if err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, "repair", "--data", dir)
	if !strings.Contains(out, "skipped 1 damaged parts") || !strings.Contains(out, "/steps/sol-payment") {
		t.Fatalf("repair does not report the damaged steps bucket:\n%s", out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "regiment.db")); !bytes.Equal(after, damaged) {
		t.Fatal("repair wrote to the damaged file")
	}
	repaired := filepath.Join(dir, "regiment.repaired.db")
	list := mustRun(t, "list", "--db", repaired)
	wantLines(t, list, "cmd-1 commander", "sol-payment soldier payment", "sol-fraud soldier fraud")
	if got := mustRun(t, "show", "--db", repaired, "--episode", "sol-fraud"); !strings.Contains(got, "replicas/scoring") {
		t.Fatalf("the undamaged episode's steps did not come back:\n%s", got)
	}
	if code, _, errOut := runEp(t, "repair", "--data", dir); code != 1 || !strings.Contains(errOut, "exists") {
		t.Fatalf("a second repair onto the same output: exit %d, stderr %q", code, errOut)
	}
}
