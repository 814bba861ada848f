package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version this package reads and writes.
const SchemaVersion = 1

// DefaultTimeout is how long Open waits for the file lock by default.
const DefaultTimeout = time.Second

var (
	bucketMeta     = []byte("meta")
	bucketEpisodes = []byte("episodes")
	bucketSteps    = []byte("steps")
	bucketLedger   = []byte("ledger")
	keySchema      = []byte("schema")
)

// Options configures Open. The zero value opens read-write with
// DefaultTimeout.
type Options struct {
	// Timeout is how long Open waits for the file lock before it fails with
	// ErrLocked. Zero means DefaultTimeout; it is never infinite.
	Timeout time.Duration

	// ReadOnly opens an existing file with a shared lock: no writes, no
	// directory or file creation, and readable while no writer holds it.
	ReadOnly bool
}

// Store is an open episode store. Its methods are safe for concurrent use.
type Store struct {
	db       *bolt.DB
	path     string
	readOnly bool

	mu     sync.Mutex
	closed bool
	known  map[string]int // episode id -> len(ObsLayout), for Append validation
}

// Open opens (read-write: creates) the store file at path. A file held by
// another process fails with ErrLocked after opts.Timeout; a file written by
// a newer schema version fails with an error that says so.
func Open(path string, opts Options) (*Store, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("open store %q: %w", path, err)
		}
	}
	if err := checkFile(path); err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	// The freelist is read here, not in the goroutine of the first check.
	db, err := openBolt(path, &bolt.Options{Timeout: timeout, ReadOnly: opts.ReadOnly, PreLoadFreelist: true})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open store %q: %w (waited %s)", path, ErrLocked, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	s := &Store{db: db, path: path, readOnly: opts.ReadOnly, known: map[string]int{}}
	if err := s.Check(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := s.prepare(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open store %q: %w", path, err)
	}
	return s, nil
}

// openBolt is bolt.Open behind guard.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err, path)
	return bolt.Open(path, 0o600, o)
}

// prepare checks the schema version and, when writable, creates the buckets.
func (s *Store) prepare() error {
	check := func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil {
			return nil
		}
		raw := m.Get(keySchema)
		if raw == nil {
			return nil
		}
		v, err := strconv.Atoi(string(raw))
		if err != nil {
			return fmt.Errorf("bad schema version %q", raw)
		}
		if v > SchemaVersion {
			return fmt.Errorf("schema version %d is newer than this build supports (%d); upgrade regiment to read it", v, SchemaVersion)
		}
		return nil
	}
	if s.readOnly {
		return s.view(check)
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketMeta, bucketEpisodes, bucketSteps, bucketLedger} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		m := tx.Bucket(bucketMeta)
		if m.Get(keySchema) == nil {
			return m.Put(keySchema, []byte(strconv.Itoa(SchemaVersion)))
		}
		return nil
	})
}

// Path returns the file path the store was opened with.
func (s *Store) Path() string { return s.path }

// Close closes the file. It is idempotent; appenders must be closed first.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close store %q: %w", s.path, err)
	}
	return nil
}

// EpisodeIDLayout is the time in an episode id: UTC to the millisecond, so
// that ids read as times and sort by them, e.g. "run-20260415T093000.250Z".
const EpisodeIDLayout = "20060102T150405.000Z"

// NewEpisodeID returns prefix followed by at in EpisodeIDLayout, an id that
// no episode of the store has or starts (a run names its episodes
// "<id>-commander", "<id>-<domain>"). When a restart in the same millisecond
// took it, "-2", "-3", ... is appended: a process that restarts at once on
// the same data gets a fresh id instead of "begin episode ...: already
// exists". Ids are only unique among those begun before the next
// NewEpisodeID; a store is one process's (Open locks the file).
func (s *Store) NewEpisodeID(prefix string, at time.Time) (string, error) {
	base := prefix + at.UTC().Format(EpisodeIDLayout)
	id := base
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEpisodes)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for n := 2; ; n++ {
			if k, _ := c.Seek([]byte(id)); k == nil || !bytes.HasPrefix(k, []byte(id)) {
				return nil
			}
			id = base + "-" + strconv.Itoa(n)
		}
	})
	if err != nil {
		return "", fmt.Errorf("new episode id: %w", err)
	}
	return id, nil
}

// BeginEpisode records a new episode. Its ID must be unique and Started set.
func (s *Store) BeginEpisode(e Episode) error {
	if e.ID == "" {
		return errors.New("begin episode: empty id")
	}
	if err := checkTime(e.Started); err != nil {
		return fmt.Errorf("begin episode %q: started: %w", e.ID, err)
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("begin episode %q: %w", e.ID, err)
	}
	err = s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEpisodes)
		if b.Get([]byte(e.ID)) != nil {
			return errors.New("already exists")
		}
		if _, err := tx.Bucket(bucketSteps).CreateBucketIfNotExists([]byte(e.ID)); err != nil {
			return err
		}
		return b.Put([]byte(e.ID), raw)
	})
	if err != nil {
		return fmt.Errorf("begin episode %q: %w", e.ID, err)
	}
	s.mu.Lock()
	s.known[e.ID] = len(e.ObsLayout)
	s.mu.Unlock()
	return nil
}

// EndEpisode sets the episode's Ended time.
func (s *Store) EndEpisode(id string, at time.Time) error {
	if err := checkTime(at); err != nil {
		return fmt.Errorf("end episode %q: %w", id, err)
	}
	return s.updateEpisode(id, "end", func(e *Episode) { e.Ended = at })
}

// updateEpisode applies change to the stored episode id in one
// transaction; its errors say "<what> episode <id>: ...", with ErrNotFound
// for an unknown episode.
func (s *Store) updateEpisode(id, what string, change func(e *Episode)) error {
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEpisodes)
		e, err := getEpisode(b, id)
		if err != nil {
			return err
		}
		change(&e)
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return b.Put([]byte(id), raw)
	})
	if err != nil {
		return fmt.Errorf("%s episode %q: %w", what, id, err)
	}
	return nil
}

// Episode returns the episode with the given id, or an error wrapping
// ErrNotFound.
func (s *Store) Episode(id string) (Episode, error) {
	var e Episode
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEpisodes)
		if b == nil {
			return ErrNotFound
		}
		var err error
		e, err = getEpisode(b, id)
		return err
	})
	if err != nil {
		return Episode{}, fmt.Errorf("episode %q: %w", id, err)
	}
	return e, nil
}

// Episodes returns all episodes sorted by Started, then ID.
func (s *Store) Episodes() ([]Episode, error) {
	var out []Episode
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		out, err = allEpisodes(tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list episodes: %w", err)
	}
	return out, nil
}

// StepCount returns the number of steps recorded for an episode without
// decoding them.
func (s *Store) StepCount(id string) (int, error) {
	var n int
	err := s.view(func(tx *bolt.Tx) error {
		b := stepBucket(tx, id)
		if b == nil {
			return ErrNotFound
		}
		n = b.Stats().KeyN
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("count steps of %q: %w", id, err)
	}
	return n, nil
}

// Check runs bbolt's consistency check over the whole file and returns the
// first few problems it finds, joined, in an error wrapping ErrDamaged. Open
// runs it on every file it opens.
func (s *Store) Check() (err error) {
	defer guard(&err, s.path)
	var errs []error
	run := func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return nil
	}
	if s.readOnly {
		err = s.view(run)
	} else {
		// A read-write transaction (rolled back) keeps writers out while
		// the check walks the pages, as bbolt requires.
		var tx *bolt.Tx
		tx, err = s.db.Begin(true)
		if err == nil {
			err = run(tx)
			_ = tx.Rollback()
		}
	}
	if err != nil {
		return fmt.Errorf("check %q: %w", s.path, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("check %q: %w: %w; %s", s.path, ErrDamaged, checkErrors(errs), repairHint)
	}
	return nil
}

// knownObs reports whether the episode exists and the length of its layout.
func (s *Store) knownObs(id string) (int, error) {
	s.mu.Lock()
	n, ok := s.known[id]
	s.mu.Unlock()
	if ok {
		return n, nil
	}
	e, err := s.Episode(id)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.known[id] = len(e.ObsLayout)
	s.mu.Unlock()
	return len(e.ObsLayout), nil
}

func (s *Store) forget(id string) {
	s.mu.Lock()
	delete(s.known, id)
	s.mu.Unlock()
}

func getEpisode(b *bolt.Bucket, id string) (Episode, error) {
	raw := b.Get([]byte(id))
	if raw == nil {
		return Episode{}, ErrNotFound
	}
	var e Episode
	if err := json.Unmarshal(raw, &e); err != nil {
		return Episode{}, fmt.Errorf("decode episode %q: %w", id, err)
	}
	return e, nil
}

func allEpisodes(tx *bolt.Tx) ([]Episode, error) {
	b := tx.Bucket(bucketEpisodes)
	if b == nil {
		return nil, nil
	}
	var out []Episode
	err := b.ForEach(func(k, v []byte) error {
		var e Episode
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("decode episode %q: %w", k, err)
		}
		out = append(out, e)
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.Before(out[j].Started)
		}
		return out[i].ID < out[j].ID
	})
	return out, err
}

func stepBucket(tx *bolt.Tx, id string) *bolt.Bucket {
	steps := tx.Bucket(bucketSteps)
	if steps == nil {
		return nil
	}
	return steps.Bucket([]byte(id))
}
