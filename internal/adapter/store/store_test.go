package store

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "regiment.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

func commanderEpisode() Episode {
	return Episode{ID: "cmd-1", Level: "commander", Cluster: "prod", Policy: "ppo@7",
		ObsLayout: []string{"free_cores", "hour"}, ObsVersion: 1, Started: t0,
		Meta: map[string]string{"term": "3"}}
}

func soldierEpisode(domain string, started time.Time) Episode {
	return Episode{ID: "sol-" + domain, Level: "soldier", Domain: domain, Cluster: "prod", Policy: "ppo@3",
		ObsLayout: []string{"rps", "p99_ratio", "budget"}, ObsVersion: 1, Started: started}
}

// soldierStep is step i of a soldier episode: 10 s apart.
func soldierStep(id string, i int) Step {
	return Step{
		Episode: id, Seq: uint64(i), At: t0.Add(time.Duration(i) * 10 * time.Second),
		Obs:     []float64{float64(100 + i), 0.5 + float64(i)/100, 0.8},
		Action:  map[string]float64{"replicas/checkout": float64(4 + i%3)},
		Reward:  map[string]float64{"slo": 0.5, "total": float64(i) / 10},
		Outcome: map[string]float64{"p99_seconds": 0.1, "slo_compliant": 1},
	}
}

func begin(t *testing.T, s *Store, eps ...Episode) {
	t.Helper()
	for _, e := range eps {
		if err := s.BeginEpisode(e); err != nil {
			t.Fatal(err)
		}
	}
}

func collect(t *testing.T, s *Store, id string, from, to time.Time) []Step {
	t.Helper()
	var out []Step
	if err := s.Steps(id, from, to, func(st Step) error { out = append(out, st); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// txID is bbolt's id of the last committed read-write transaction.
func txID(t *testing.T, s *Store) int {
	t.Helper()
	var id int
	if err := s.view(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestReopenReadsBack(t *testing.T) {
	s, path := openTemp(t)
	cmd, sol := commanderEpisode(), soldierEpisode("payment", t0.Add(-time.Minute))
	begin(t, s, cmd, sol)
	a := s.NewAppender(4, 0)
	var want []Step
	for i := range 10 {
		st := soldierStep(sol.ID, i)
		if i == 3 {
			st.Guards = []Guard{{Name: "budget-cap", Target: "replicas/checkout", Before: 9, After: 7, Reason: "spend over budget"}}
		}
		want = append(want, st)
		if err := a.Append(st); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLedger(LedgerEntry{At: t0, Domain: "payment", Kind: "directive", Detail: "share 0.30", Values: map[string]float64{"share": 0.3}}); err != nil {
		t.Fatal(err)
	}
	if err := s.EndEpisode(sol.ID, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	for _, ro := range []bool{false, true} {
		t.Run(fmt.Sprintf("read-only=%v", ro), func(t *testing.T) {
			s, err := Open(path, Options{ReadOnly: ro})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			eps, err := s.Episodes()
			if err != nil {
				t.Fatal(err)
			}
			if len(eps) != 2 || eps[0].ID != sol.ID || eps[1].ID != cmd.ID {
				t.Fatalf("episodes not sorted by start: %+v", eps)
			}
			sol.Ended = t0.Add(time.Hour)
			if !reflect.DeepEqual(eps[0], sol) || !reflect.DeepEqual(eps[1], cmd) {
				t.Fatalf("episodes changed on the way through the file:\n got %+v\nwant %+v", eps, []Episode{sol, cmd})
			}
			if got := collect(t, s, sol.ID, time.Time{}, time.Time{}); !reflect.DeepEqual(got, want) {
				t.Fatalf("steps:\n got %+v\nwant %+v", got, want)
			}
			if n, err := s.StepCount(sol.ID); err != nil || n != 10 {
				t.Fatalf("StepCount = %d, %v; want 10", n, err)
			}
			var ledger []LedgerEntry
			if err := s.Ledger(time.Time{}, time.Time{}, "", func(e LedgerEntry) error { ledger = append(ledger, e); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(ledger) != 1 || ledger[0].Kind != "directive" || ledger[0].Values["share"] != 0.3 {
				t.Fatalf("ledger = %+v", ledger)
			}
			if err := s.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestAppenderWritesOneTransactionPerBatch(t *testing.T) {
	s, _ := openTemp(t)
	sol := soldierEpisode("payment", t0)
	begin(t, s, sol)
	a := s.NewAppender(8, 0)
	before := txID(t, s)
	for i := range 3*8 + 5 {
		if err := a.Append(soldierStep(sol.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := txID(t, s) - before; got != 3 {
		t.Fatalf("29 appends with batch size 8 committed %d transactions, want 3", got)
	}
	if n, _ := s.StepCount(sol.ID); n != 24 {
		t.Fatalf("%d steps visible before Flush, want 24", n)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := txID(t, s) - before; got != 4 {
		t.Fatalf("Flush of the remaining 5: %d transactions in total, want 4", got)
	}
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := txID(t, s) - before; got != 4 {
		t.Fatalf("Flush and Close of an empty buffer wrote: %d transactions, want 4", got)
	}
}

func TestAppenderTimedFlush(t *testing.T) {
	s, _ := openTemp(t)
	sol := soldierEpisode("payment", t0)
	begin(t, s, sol)
	a := s.NewAppender(1000, 20*time.Millisecond)
	defer a.Close()
	for i := range 3 {
		if err := a.Append(soldierStep(sol.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := s.StepCount(sol.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n == 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s only %d of 3 steps written by the timed flush", n)
		}
		time.Sleep(5 * time.Millisecond) // poll interval, not synchronisation
	}
}

func TestAppenderConcurrent(t *testing.T) {
	s, _ := openTemp(t)
	const writers, perWriter = 8, 300
	for d := range 4 {
		begin(t, s, soldierEpisode(fmt.Sprintf("d%d", d), t0.Add(time.Duration(d)*time.Second)))
	}
	// Two goroutines share each episode, with disjoint seqs.
	a := s.NewAppender(64, 0)
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			id := fmt.Sprintf("sol-d%d", w%4)
			for i := range perWriter {
				st := soldierStep(id, i)
				st.Seq = uint64(w*perWriter + i)
				if err := a.Append(st); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Steps != writers*perWriter {
		t.Fatalf("%d steps stored, want %d", st.Steps, writers*perWriter)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestAppendRejects(t *testing.T) {
	s, _ := openTemp(t)
	sol := soldierEpisode("payment", t0)
	begin(t, s, sol)
	a := s.NewAppender(10, 0)
	for _, tc := range []struct {
		rule string
		edit func(*Step)
		want string
	}{
		{"unknown episode is not found", func(st *Step) { st.Episode = "nope" }, "episode not found"},
		{"zero time has no key", func(st *Step) { st.At = time.Time{} }, "zero time"},
		{"time before 1970 has no key", func(st *Step) { st.At = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) }, "outside 1970..2262"},
		{"obs must match the layout", func(st *Step) { st.Obs = st.Obs[:2] }, "2 observations, episode layout has 3"},
		{"NaN observation", func(st *Step) { st.Obs[1] = math.NaN() }, "obs[1] is NaN"},
		{"infinite reward", func(st *Step) { st.Reward["slo"] = math.Inf(-1) }, `reward "slo" is -Inf`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			st := soldierStep(sol.ID, 1)
			tc.edit(&st)
			err := a.Append(st)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Append = %v, want error containing %q", err, tc.want)
			}
		})
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(soldierStep(sol.ID, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close = %v, want ErrClosed", err)
	}
	if err := s.BeginEpisode(sol); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second BeginEpisode = %v, want already exists", err)
	}
}

func TestStepAt(t *testing.T) {
	s, _ := openTemp(t)
	sol := soldierEpisode("payment", t0)
	begin(t, s, sol)
	a := s.NewAppender(100, 0)
	for i := range 5 { // t0, t0+10s, ..., t0+40s
		if err := a.Append(soldierStep(sol.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	// A second step at t0+20s with a higher seq: the later decision wins.
	late := soldierStep(sol.ID, 2)
	late.Seq = 99
	if err := a.Append(late); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rule    string
		at      time.Time
		wantOK  bool
		wantSeq uint64
	}{
		{"before the first step nothing is in effect", t0.Add(-time.Nanosecond), false, 0},
		{"exactly at a step that step is in effect", t0.Add(10 * time.Second), true, 1},
		{"between steps the earlier one is in effect", t0.Add(19 * time.Second), true, 1},
		{"same instant: the higher seq is in effect", t0.Add(20 * time.Second), true, 99},
		{"after the last step the last one is in effect", t0.Add(time.Hour), true, 4},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			st, ok, err := s.StepAt(sol.ID, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.wantOK || st.Seq != tc.wantSeq {
				t.Fatalf("StepAt(%s) = seq %d, %v; want seq %d, %v", tc.at.Format(time.RFC3339Nano), st.Seq, ok, tc.wantSeq, tc.wantOK)
			}
		})
	}
	if _, _, err := s.StepAt("nope", t0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("StepAt of unknown episode = %v, want ErrNotFound", err)
	}
}

func TestStepsRangeIsHalfOpen(t *testing.T) {
	s, _ := openTemp(t)
	sol := soldierEpisode("payment", t0)
	begin(t, s, sol)
	a := s.NewAppender(100, 0)
	for i := range 6 {
		if err := a.Append(soldierStep(sol.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, sol.ID, t0.Add(10*time.Second), t0.Add(40*time.Second))
	var seqs []uint64
	for _, st := range got {
		seqs = append(seqs, st.Seq)
	}
	if !reflect.DeepEqual(seqs, []uint64{1, 2, 3}) {
		t.Fatalf("steps in [t0+10s, t0+40s) = %v, want [1 2 3]", seqs)
	}
	stop := errors.New("stop")
	n := 0
	err := s.Steps(sol.ID, time.Time{}, time.Time{}, func(Step) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Steps did not stop on the callback's error: %v after %d steps", err, n)
	}
}

func TestLedgerOrderAndDomainFilter(t *testing.T) {
	s, _ := openTemp(t)
	entries := []LedgerEntry{
		{At: t0.Add(time.Minute), Domain: "payment", Kind: "directive", Detail: "second at t0+1m"},
		{At: t0, Domain: "payment", Kind: "directive", Detail: "first"},
		{At: t0, Domain: "fraud", Kind: "fallback", Detail: "fraud"},
		{At: t0.Add(time.Minute), Domain: "payment", Kind: "override", Detail: "third at t0+1m"},
	}
	for _, e := range entries {
		if err := s.AppendLedger(e); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := s.Ledger(t0, t0.Add(time.Hour), "payment", func(e LedgerEntry) error { got = append(got, e.Detail); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{"first", "second at t0+1m", "third at t0+1m"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("payment ledger = %q, want %q (time order, insertion order within an instant)", got, want)
	}
}

func TestPrune(t *testing.T) {
	s, _ := openTemp(t)
	old := soldierEpisode("old", t0)          // ended, all steps before the cutoff: dropped
	idle := soldierEpisode("idle", t0)        // running, no steps: kept
	cur := soldierEpisode("payment", t0)      // steps on both sides of the cutoff
	lateEnd := soldierEpisode("late-end", t0) // ended after the cutoff: kept
	begin(t, s, old, idle, cur, lateEnd)
	a := s.NewAppender(1000, 0)
	for i := range 10 {
		for _, id := range []string{old.ID, cur.ID} {
			st := soldierStep(id, i)
			if id == old.ID && i >= 5 {
				continue
			}
			if err := a.Append(st); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	cutoff := t0.Add(50 * time.Second)
	for _, e := range []struct {
		id string
		at time.Time
	}{{old.ID, cutoff.Add(-time.Second)}, {lateEnd.ID, cutoff.Add(time.Second)}} {
		if err := s.EndEpisode(e.id, e.at); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []time.Time{t0, cutoff.Add(-time.Nanosecond), cutoff} {
		if err := s.AppendLedger(LedgerEntry{At: at, Kind: "mode"}); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := s.Prune(cutoff)
	if err != nil {
		t.Fatal(err)
	}
	// old: 5 steps, payment: seq 0..4, ledger: 2 entries.
	if removed != 12 {
		t.Fatalf("Prune removed %d, want 12", removed)
	}
	eps, err := s.Episodes()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range eps {
		ids = append(ids, e.ID)
	}
	if want := []string{idle.ID, lateEnd.ID, cur.ID}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("episodes after prune = %v, want %v", ids, want)
	}
	if got := collect(t, s, cur.ID, time.Time{}, time.Time{}); len(got) != 5 || got[0].Seq != 5 {
		t.Fatalf("payment keeps %d steps from seq %d, want 5 from seq 5", len(got), got[0].Seq)
	}
	n := 0
	if err := s.Ledger(time.Time{}, time.Time{}, "", func(LedgerEntry) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("ledger keeps %d entries (%v), want the one at the cutoff", n, err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// The dropped episode id is free again and Append no longer accepts it.
	if err := a.Append(soldierStep(old.ID, 0)); err == nil {
		t.Fatal("append to a closed appender succeeded")
	}
	if err := s.NewAppender(1, 0).Append(soldierStep(old.ID, 0)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append to a pruned episode = %v, want ErrNotFound", err)
	}
}

func TestPruneWorksInChunks(t *testing.T) {
	s, _ := openTemp(t)
	e := Episode{ID: "big", Level: "soldier", Domain: "payment", Started: t0}
	begin(t, s, e)
	a := s.NewAppender(5000, 0)
	total := 2*pruneChunk + 7
	for i := range total {
		if err := a.Append(Step{Episode: e.ID, Seq: uint64(i), At: t0.Add(time.Duration(i) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	before := txID(t, s)
	removed, err := s.Prune(t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if removed != total {
		t.Fatalf("removed %d, want %d", removed, total)
	}
	// 3 chunks of deletes + 1 episode sweep.
	if got := txID(t, s) - before; got != 4 {
		t.Fatalf("prune used %d transactions, want 4", got)
	}
	if n, _ := s.StepCount(e.ID); n != 0 {
		t.Fatalf("%d steps left", n)
	}
}

func TestOpenLockedFileFailsWithinTimeout(t *testing.T) {
	_, path := openTemp(t) // holds the exclusive lock
	for _, ro := range []bool{false, true} {
		start := time.Now()
		_, err := Open(path, Options{Timeout: 100 * time.Millisecond, ReadOnly: ro})
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("second Open (read-only %v) = %v, want ErrLocked", ro, err)
		}
		if !strings.Contains(err.Error(), "locked by another process") {
			t.Fatalf("error does not say the file is locked: %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("second Open took %s with a 100ms timeout", d)
		}
	}
}

func TestOpenNewerSchemaFails(t *testing.T) {
	_, path := openTemp(t)
	path = filepath.Join(filepath.Dir(path), "newer.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keySchema, []byte("2"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "schema version 2 is newer than this build supports (1)") {
		t.Fatalf("Open of a schema 2 file = %v", err)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	s, _ := openTemp(t)
	for range 2 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCheckGoodFile(t *testing.T) {
	s, _ := openTemp(t)
	sol := soldierEpisode("payment", t0)
	begin(t, s, sol)
	a := s.NewAppender(50, 0)
	for i := range 500 {
		if err := a.Append(soldierStep(sol.ID, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("Check of a good file: %v", err)
	}
}

func TestStats(t *testing.T) {
	s, _ := openTemp(t)
	cmd, pay, fraud := commanderEpisode(), soldierEpisode("payment", t0), soldierEpisode("fraud", t0.Add(time.Second))
	begin(t, s, cmd, pay, fraud)
	a := s.NewAppender(100, 0)
	for i := range 4 {
		for _, id := range []string{pay.ID, fraud.ID} {
			st := soldierStep(id, i)
			if id == pay.ID && i == 2 {
				st.Guards = []Guard{
					{Name: "dead-zone", Target: "share", Before: 0.3, After: 0.3}, // did not change it
					{Name: "budget-cap", Target: "replicas/checkout", Before: 9, After: 7},
				}
			}
			if err := a.Append(st); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Append(Step{Episode: cmd.ID, Seq: 1, At: t0.Add(time.Hour), Obs: []float64{1, 2}, Reward: map[string]float64{"total": 1}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLedger(LedgerEntry{At: t0, Kind: "mode"}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Episodes != 3 || st.Steps != 9 || st.GuardedSteps != 1 || st.LedgerEntries != 1 {
		t.Fatalf("stats = %+v", st)
	}
	if st.StepsByLevel["soldier"] != 8 || st.StepsByLevel["commander"] != 1 || st.StepsByDomain["payment"] != 4 || len(st.StepsByDomain) != 2 {
		t.Fatalf("per level %v, per domain %v", st.StepsByLevel, st.StepsByDomain)
	}
	if !st.First.Equal(t0) || !st.Last.Equal(t0.Add(time.Hour)) {
		t.Fatalf("span %s .. %s", st.First, st.Last)
	}
	// Soldier totals 0, .1, .2, .3 in each of two episodes, commander 1.
	if want := (2*0.6 + 1) / 9; math.Abs(st.RewardMean-want) > 1e-12 || st.RewardSteps != 9 {
		t.Fatalf("reward mean %v over %d, want %v over 9", st.RewardMean, st.RewardSteps, want)
	}
	var order []string
	for _, pe := range st.PerEpisode {
		order = append(order, pe.ID)
	}
	if want := []string{cmd.ID, pay.ID, fraud.ID}; !reflect.DeepEqual(order, want) {
		t.Fatalf("per-episode order %v, want %v (by start, then id)", order, want)
	}
	if pe := st.PerEpisode[1]; pe.Steps != 4 || pe.GuardedSteps != 1 || math.Abs(pe.RewardMean-0.15) > 1e-12 {
		t.Fatalf("payment stats %+v", pe)
	}
	if st.FileBytes <= 0 {
		t.Fatalf("file size %d", st.FileBytes)
	}
}

// TestNewEpisodeIDIsUniqueWithinASecond: two runs begun in the same second
// (the same millisecond, even) on the same store both begin, with distinct
// ids that read as the time and sort by it.
func TestNewEpisodeIDIsUniqueWithinASecond(t *testing.T) {
	s, _ := openTemp(t)
	at := time.Date(2026, 4, 15, 9, 30, 0, 250_000_000, time.UTC)
	var ids []string
	for range 3 {
		id, err := s.NewEpisodeID("run-", at)
		if err != nil {
			t.Fatal(err)
		}
		for _, suffix := range []string{"-commander", "-pay"} {
			e := commanderEpisode()
			e.ID, e.Started = id+suffix, at
			if err := s.BeginEpisode(e); err != nil {
				t.Fatalf("begin %s: %v", e.ID, err)
			}
		}
		ids = append(ids, id)
	}
	want := []string{"run-20260415T093000.250Z", "run-20260415T093000.250Z-2", "run-20260415T093000.250Z-3"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("ids %q, want %q", ids, want)
	}
	// A whole episode id is taken too, and a later time is a fresh id that
	// sorts after.
	e := commanderEpisode()
	e.ID, e.Started = "soldier-pay-20260415T093000.250Z", at
	if err := s.BeginEpisode(e); err != nil {
		t.Fatal(err)
	}
	if id, err := s.NewEpisodeID("soldier-pay-", at); err != nil || id != e.ID+"-2" {
		t.Errorf("NewEpisodeID over a taken episode id = %q, %v; want %q", id, err, e.ID+"-2")
	}
	later, err := s.NewEpisodeID("run-", at.Add(time.Millisecond))
	if err != nil || later != "run-20260415T093000.251Z" || later < ids[2] {
		t.Errorf("a millisecond later: %q, %v", later, err)
	}
}
