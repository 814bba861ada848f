package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// sampleSteps is how many steps each Soldier episode of writeSample has.
const sampleSteps = 400 // enough that the live pages fill the second half of the file

// writeSample writes a real store to dir/regiment.db: two Soldier episodes
// of sampleSteps steps each (each steps bucket has a branch root over leaf pages),
// a Commander episode and a state value. It returns the path and the page
// ids of one steps bucket's branch root and of its first leaf.
func writeSample(t testing.TB, dir string) (path string, branch, leaf uint64) {
	t.Helper()
	path = filepath.Join(dir, "regiment.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []Episode{commanderEpisode(), soldierEpisode("checkout", t0), soldierEpisode("search", t0)} {
		if err := s.BeginEpisode(e); err != nil {
			t.Fatal(err)
		}
	}
	a := s.NewAppender(100, 0)
	for i := range sampleSteps {
		for _, id := range []string{"sol-checkout", "sol-search"} {
			if err := a.Append(soldierStep(id, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutState("soldier/checkout", []byte(`{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		branch = uint64(tx.Bucket(bucketSteps).Bucket([]byte("sol-checkout")).Root())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const ps = 4096 // the test machines' page size; checked below
	if got := binary.LittleEndian.Uint32(raw[pageHeaderSize+metaOffPageSize:]); got != ps {
		t.Skipf("page size %d, the damage offsets assume %d", got, ps)
	}
	p := raw[branch*ps:]
	if flags := binary.LittleEndian.Uint16(p[8:]); flags != 0x01 {
		t.Fatalf("steps bucket root page %d has flags %#x, want a branch page (0x01)", branch, flags)
	}
	leaf = binary.LittleEndian.Uint64(p[pageHeaderSize+8:]) // first element's child
	return path, branch, leaf
}

// damage is one way a store file gets hurt.
type damage struct {
	name string
	hurt func(raw []byte, branch, leaf uint64) []byte
}

func flip(raw []byte, page uint64, from, to int) []byte {
	const ps = 4096
	rng := rand.New(rand.NewPCG(uint64(page), 34))
	for i := from; i < to; i++ {
		raw[int(page)*ps+i] ^= byte(rng.IntN(255) + 1)
	}
	return raw
}

var damages = []damage{
	{"truncated to half", func(raw []byte, _, _ uint64) []byte { return raw[:len(raw)/2] }},
	{"truncated mid-page", func(raw []byte, _, _ uint64) []byte { return raw[:len(raw)-100] }},
	{"zero-length", func([]byte, uint64, uint64) []byte { return nil }},
	{"one page", func(raw []byte, _, _ uint64) []byte { return raw[:4096] }},
	{"garbage", func(raw []byte, _, _ uint64) []byte {
		rng := rand.New(rand.NewPCG(34, 34))
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		return raw
	}},
	{"both meta pages bit-flipped", func(raw []byte, _, _ uint64) []byte {
		return flip(flip(raw, 0, 16, 80), 1, 16, 80)
	}},
	{"branch page bit-flipped", func(raw []byte, branch, _ uint64) []byte { return flip(raw, branch, 16, 64) }},
	{"leaf page bit-flipped", func(raw []byte, _, leaf uint64) []byte { return flip(raw, leaf, 0, 64) }},
	{"leaf page header flipped to branch", func(raw []byte, _, leaf uint64) []byte {
		raw[int(leaf)*4096+8] = 0x01
		return raw
	}},
}

// exercise runs every read path of the store over an opened file.
func exercise(s *Store) {
	_, _ = s.Episodes()
	_, _ = s.Stats()
	_, _ = s.State("soldier/checkout")
	_, _ = s.StepCount("sol-checkout")
	_ = s.Steps("sol-checkout", time.Time{}, time.Time{}, func(Step) error { return nil })
	_ = s.Ledger(time.Time{}, time.Time{}, "", func(LedgerEntry) error { return nil })
	_ = s.Check()
}

func TestDamagedStoreIsRefusedWithoutPanic(t *testing.T) {
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			path, branch, leaf := writeSample(t, t.TempDir())
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, d.hurt(raw, branch, leaf), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, ro := range []bool{true, false} {
				s, err := Open(path, Options{ReadOnly: ro})
				if err == nil {
					exercise(s)
					_ = s.Close()
					t.Fatalf("read-only=%v: opened a damaged file", ro)
				}
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("read-only=%v: error %v does not wrap ErrDamaged", ro, err)
				}
				t.Logf("read-only=%v: %v", ro, err)
			}
		})
	}
}

func TestOneBadMetaPageFallsBackToTheOther(t *testing.T) {
	path, _, _ := writeSample(t, t.TempDir())
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, flip(raw, 0, 16, 80), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("bbolt keeps two meta pages so that one may be lost: %v", err)
	}
	defer s.Close()
	if _, err := s.Episodes(); err != nil {
		t.Fatal(err)
	}
}

func TestStoreOfAnotherProgramIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("remember the milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{}); !errors.Is(err, ErrDamaged) {
		t.Fatalf("err = %v, want ErrDamaged", err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "remember the milk\n" {
		t.Fatalf("Open changed a file it refused: %q", raw)
	}
}

// FuzzOpen opens mutated bytes of a real small store: it must refuse or
// open them, never panic or crash, and every read of a file it opened must
// return.
func FuzzOpen(f *testing.F) {
	path, branch, leaf := writeSample(f, f.TempDir())
	raw, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	for _, d := range damages {
		f.Add(d.hurt(append([]byte(nil), raw...), branch, leaf))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "fuzz.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(p, Options{ReadOnly: true})
		if err != nil {
			return
		}
		exercise(s)
		_ = s.Close()
	})
}

func TestRepairCopiesWhatIsReadable(t *testing.T) {
	for _, d := range damages {
		switch d.name {
		case "zero-length", "garbage", "both meta pages bit-flipped", "one page":
			continue // nothing to read: covered below
		}
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			path, branch, leaf := writeSample(t, dir)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			hurt := d.hurt(raw, branch, leaf)
			if err := os.WriteFile(path, hurt, 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "repaired", "regiment.db")
			rep, err := Repair(path, out)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("copied %d keys in %d buckets; skipped %q", rep.Keys, rep.Buckets, rep.Skipped)
			if after, _ := os.ReadFile(path); !bytes.Equal(after, hurt) {
				t.Fatal("Repair changed the damaged file")
			}
			s, err := Open(out, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			eps, err := s.Episodes()
			if err != nil {
				t.Fatal(err)
			}
			if d.name == "truncated to half" {
				// bbolt writes each commit's pages past the old ones: the
				// half that is left holds no root of either meta page.
				if len(rep.Skipped) == 0 {
					t.Fatal("the lost half was not reported")
				}
				return
			}
			if len(eps) != 3 {
				t.Fatalf("episodes = %d, want the 3 written", len(eps))
			}
			n, err := s.StepCount("sol-search")
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatal("no step of the undamaged episode came back")
			}
			if d.name == "truncated mid-page" && (n != sampleSteps || len(rep.Skipped) != 0) {
				t.Fatalf("a file missing only its unused tail lost data: %d steps, skipped %q", n, rep.Skipped)
			}
			if d.name != "truncated mid-page" && len(rep.Skipped) == 0 {
				t.Fatal("damage that Open refuses was not reported by Repair")
			}
		})
	}
}

func TestRepairRefusesAnExistingOutput(t *testing.T) {
	dir := t.TempDir()
	path, _, _ := writeSample(t, dir)
	if _, err := Repair(path, path); err == nil {
		t.Fatal("Repair overwrote its input")
	}
}

// FuzzOpenPatched overwrites bytes of a real store past its two meta pages
// (which bbolt checksums, so that FuzzOpen's mutations mostly stop there):
// the pages the consistency check and every read walk. Open must refuse or
// open, never panic or crash, and every read of a file it opened returns.
func FuzzOpenPatched(f *testing.F) {
	path, branch, leaf := writeSample(f, f.TempDir())
	raw, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint32(branch*4096+16), []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(uint32(leaf*4096+10), []byte{0xff, 0xff})                  // the element count
	f.Add(uint32(leaf*4096+8), []byte{0x01})                         // leaf flagged branch
	f.Add(uint32(branch*4096+24), []byte{0, 0, 0, 0, 0, 0, 0, 0x7f}) // a child far out
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, off uint32, patch []byte) {
		b := append([]byte(nil), raw...)
		at := 2*4096 + int(off)%(len(b)-2*4096)
		copy(b[at:], patch)
		p := filepath.Join(dir, "fuzz.db")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(p, Options{ReadOnly: true})
		if err != nil {
			return
		}
		exercise(s)
		_ = s.Close()
	})
}

// BenchmarkOpen is Open's cost with its checks (the page walk and bbolt's
// consistency check) on a store of n Soldier steps: what a daemon's start
// pays.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "regiment.db")
			s, err := Open(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.BeginEpisode(soldierEpisode("checkout", t0)); err != nil {
				b.Fatal(err)
			}
			a := s.NewAppender(1000, 0)
			for i := range n {
				if err := a.Append(soldierStep("sol-checkout", i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := a.Close(); err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				s, err := Open(path, Options{ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				_ = s.Close()
			}
			fi, _ := os.Stat(path)
			b.ReportMetric(float64(fi.Size())/1e6, "file_MB")
		})
	}
}

// A store path naming a FIFO is refused at once: the check before bbolt
// must not block waiting for a writer.
func TestAFIFOIsRefusedWithoutBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "regiment.db")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		s, err := Open(path, Options{})
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Fatalf("Open of a FIFO: %v, want it refused as a named pipe", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open of a FIFO still blocked after 5 s")
	}
}
