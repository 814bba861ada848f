package e2e

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
)

// killSeed, when not zero, replays TestKill9WhileWriting's kill schedule.
var killSeed = flag.Uint64("kill-seed", 0, "seed of TestKill9WhileWriting's kill moments (0: from the clock)")

// kills is how many times TestKill9WhileWriting kills the Soldier.
const kills = 50

// stepKey identifies a committed step: its episode, time and sequence number
// (the store's key within the episode).
type stepKey struct {
	episode string
	atNanos int64
	seq     uint64
}

// TestKill9WhileWriting runs a Soldier with a 5ms tick, so it commits a batch
// of steps to its bbolt file several times a second, and SIGKILLs it at a
// random moment of each life (seeded: -kill-seed replays a run) 50 times.
// After every kill the file opens read-write with the store package (as the
// next daemon would), passes bbolt's consistency check, holds every step
// that was committed before the previous kill (no committed step is lost),
// and within every episode holds the steps 1..n with no gap: the Appender
// commits its batches in order, so a kill loses only a tail of uncommitted
// steps. Each life lasts 0.2-1.2 s after the Soldier's tick loop starts.
func TestKill9WhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test; skipped with -short")
	}
	t0 := time.Now()
	seed := *killSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -kill-seed %d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	srv := startNATS(t)
	data := t.TempDir()
	cfgPath := filepath.Join(data, "fast.hcl")
	writeFile(t, cfgPath, fastConfig(t, "1s", "5s", "5ms"))
	dbPath := filepath.Join(data, "soldier-payment.db")

	prev := map[stepKey]bool{}
	grew, episodes := 0, 0
	for k := 1; k <= kills; k++ {
		s := startSoldier(t, cfgPath, srv.ClientURL(), data, "payment")
		s.waitLog(`soldier running`, 15*time.Second)
		life := 200*time.Millisecond + time.Duration(rng.Int64N(int64(time.Second)))
		time.Sleep(life) // the kill moment is the point of the test, not a synchronisation
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatalf("kill %d: %v", k, err)
		}
		<-s.done
		if s.cmd.ProcessState.ExitCode() != -1 {
			t.Fatalf("kill %d: the soldier exited with %d before SIGKILL", k, s.cmd.ProcessState.ExitCode())
		}

		cur, eps := committedSteps(t, dbPath, k)
		episodes = eps
		for key := range prev {
			if !cur[key] {
				t.Fatalf("after kill %d: step %d of %s at %d, committed before kill %d, is gone",
					k, key.seq, key.episode, key.atNanos, k-1)
			}
		}
		if len(cur) > len(prev) {
			grew++
		}
		t.Logf("kill %2d after %4dms of ticking: %d episodes, %d steps (+%d)", k, life.Milliseconds(), eps, len(cur), len(cur)-len(prev))
		prev = cur
	}
	if episodes != kills {
		t.Errorf("%d episodes after %d lives, want one per life", episodes, kills)
	}
	// A life killed before its first batch commits adds no step; most must.
	if grew < kills/2 {
		t.Errorf("only %d of %d lives committed steps: the kills did not hit a writing daemon", grew, kills)
	}
	t.Logf("%d kills, %d lives committed steps, %d steps in all; %s", kills, grew, len(prev), time.Since(t0).Round(time.Millisecond))
}

// committedSteps opens the store at path read-write, as a restarting daemon
// does, runs its consistency check and returns every step key and the number
// of episodes. Each episode's steps must be 1..n, without a gap.
func committedSteps(t *testing.T, path string, kill int) (map[stepKey]bool, int) {
	t.Helper()
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatalf("after kill %d: open %s: %v", kill, path, err)
	}
	defer st.Close()
	if err := st.Check(); err != nil {
		t.Fatalf("after kill %d: %v", kill, err)
	}
	eps, err := st.Episodes()
	if err != nil {
		t.Fatalf("after kill %d: episodes: %v", kill, err)
	}
	keys := map[stepKey]bool{}
	for _, e := range eps {
		var seqs []uint64
		err := st.Steps(e.ID, time.Time{}, time.Time{}, func(s store.Step) error {
			keys[stepKey{e.ID, s.At.UnixNano(), s.Seq}] = true
			seqs = append(seqs, s.Seq)
			return nil
		})
		if err != nil {
			t.Fatalf("after kill %d: steps of %s: %v", kill, e.ID, err)
		}
		slices.Sort(seqs)
		for i, q := range seqs {
			if q != uint64(i+1) {
				t.Fatalf("after kill %d: episode %s has steps %s, want 1..%d without a gap", kill, e.ID, span(seqs), len(seqs))
			}
		}
	}
	return keys, len(eps)
}

// span summarises sorted sequence numbers for a failure message.
func span(seqs []uint64) string {
	if len(seqs) <= 8 {
		return fmt.Sprint(seqs)
	}
	return fmt.Sprintf("%v ... %v", seqs[:4], seqs[len(seqs)-4:])
}
