package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Appender buffers steps and writes them in batches, one bbolt read-write
// transaction (one commit, one set of fsyncs) per batch. It is safe for
// concurrent use by several goroutines, e.g. the Commander and every Soldier
// of a process.
//
// A batch is written when batchSize steps are buffered, when the oldest
// buffered step is flushEvery old (if flushEvery > 0), on Flush and on Close.
// A batch that fails to write is dropped and its error returned by the call
// that wrote it, or, for a timed flush, by the next Append, Flush or Close.
type Appender struct {
	s     *Store
	size  int
	every time.Duration

	writeMu sync.Mutex // held while a batch is taken and written: batches commit in order

	mu     sync.Mutex // guards the fields below
	cur    *batch
	spare  *batch // a written batch, kept for reuse
	timer  *time.Timer
	err    error // from a timed flush, not yet reported
	closed bool

	onWrite func(steps int, err error) // after every batch written or lost
}

// OnWrite sets fn to be called after each batch is written (err nil) or
// lost (err the write's error), with its number of steps, from the
// goroutine that wrote it (a timed flush's own). Set it before the first
// Append; fn must not call the Appender.
func (a *Appender) OnWrite(fn func(steps int, err error)) {
	a.mu.Lock()
	a.onWrite = fn
	a.mu.Unlock()
}

// batch is the steps of one transaction, encoded into one buffer.
type batch struct {
	steps []pendingStep
	data  []byte // step i's value is data[steps[i].start:steps[i].end]
}

// pendingStep is an encoded step waiting for its batch.
type pendingStep struct {
	episode    string
	key        [keyLen]byte
	start, end int
}

// encoder is per-Append scratch space, pooled.
type encoder struct {
	buf  []byte
	keys []string
}

var encoders = sync.Pool{New: func() any { return &encoder{buf: make([]byte, 0, 2048)} }}

// NewAppender returns an Appender writing to s. batchSize < 1 means 1
// (every Append writes); flushEvery <= 0 disables timed flushes.
func (s *Store) NewAppender(batchSize int, flushEvery time.Duration) *Appender {
	if batchSize < 1 {
		batchSize = 1
	}
	return &Appender{s: s, size: batchSize, every: flushEvery, cur: newBatch(batchSize)}
}

func newBatch(size int) *batch {
	return &batch{steps: make([]pendingStep, 0, size), data: make([]byte, 0, size*1024)}
}

// Append validates and encodes step, so the caller may reuse its slices and
// maps on return, and buffers it; a full buffer is written before Append
// returns. The episode must have been begun with BeginEpisode.
func (a *Appender) Append(step Step) error {
	obsLen, err := a.s.knownObs(step.Episode)
	if err != nil {
		return fmt.Errorf("append step %d: %w", step.Seq, err)
	}
	if err := checkStep(&step, obsLen); err != nil {
		return fmt.Errorf("append step %d of %q: %w", step.Seq, step.Episode, err)
	}
	enc := encoders.Get().(*encoder)
	enc.buf, enc.keys = appendStep(enc.buf[:0], &step, enc.keys)

	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		encoders.Put(enc)
		return fmt.Errorf("append step %d of %q: appender: %w", step.Seq, step.Episode, ErrClosed)
	}
	b := a.cur
	start := len(b.data)
	b.data = append(b.data, enc.buf...)
	b.steps = append(b.steps, pendingStep{episode: step.Episode, key: timeKey(step.At, step.Seq), start: start, end: len(b.data)})
	full := len(b.steps) >= a.size
	if !full && a.every > 0 && a.timer == nil {
		a.timer = time.AfterFunc(a.every, a.timedFlush)
	}
	pending := a.takeErr()
	a.mu.Unlock()
	encoders.Put(enc)

	if full {
		if err := a.flush(a.size); err != nil {
			return errors.Join(pending, err)
		}
	}
	return pending
}

// Flush writes every buffered step in one transaction.
func (a *Appender) Flush() error {
	err := a.flush(1)
	a.mu.Lock()
	pending := a.takeErr()
	a.mu.Unlock()
	if err != nil {
		return errors.Join(pending, err)
	}
	return pending
}

// Close flushes the buffer and stops the Appender. It is idempotent; Append
// after Close fails with ErrClosed.
func (a *Appender) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.mu.Unlock()
	return a.Flush()
}

func (a *Appender) timedFlush() {
	if err := a.flush(1); err != nil {
		a.mu.Lock()
		var prev *WriteError
		if a.err != nil && errors.As(a.err, &prev) {
			var we *WriteError
			if errors.As(err, &we) {
				prev.Steps += we.Steps // every lost step is reported
			}
		} else if a.err == nil {
			a.err = err
		}
		a.mu.Unlock()
	}
}

// takeErr returns and clears the error of a timed flush. a.mu must be held.
func (a *Appender) takeErr() error {
	err := a.err
	a.err = nil
	return err
}

// flush writes the buffer if it holds at least least steps. Taking the
// batch under writeMu means a Flush returns only after every earlier batch
// is committed, while other goroutines keep filling the next buffer.
func (a *Appender) flush(least int) error {
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	a.mu.Lock()
	b := a.cur
	if len(b.steps) < least || len(b.steps) == 0 {
		a.mu.Unlock()
		return nil
	}
	if a.spare != nil {
		a.cur, a.spare = a.spare, nil
	} else {
		a.cur = newBatch(a.size)
	}
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	a.mu.Unlock()

	err := a.s.writeSteps(b)
	n := len(b.steps)
	b.steps, b.data = b.steps[:0], b.data[:0]
	a.mu.Lock()
	a.spare = b
	onWrite := a.onWrite
	a.mu.Unlock()
	if onWrite != nil {
		onWrite(n, err)
	}
	if err != nil {
		return &WriteError{Steps: n, Err: err}
	}
	return nil
}

// WriteError is a batch of steps that could not be written: they are lost.
// A timed flush's WriteError, reported by the next call, counts the steps of
// every timed flush that failed since the last report.
type WriteError struct {
	Steps int   // steps lost
	Err   error // why the write failed
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("write batch of %d steps: %v", e.Steps, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// writeSteps puts a batch in one read-write transaction, grouped by episode
// and in key order so that pages fill sequentially.
func (s *Store) writeSteps(b *batch) error {
	slices.SortStableFunc(b.steps, func(x, y pendingStep) int {
		if c := strings.Compare(x.episode, y.episode); c != 0 {
			return c
		}
		return bytes.Compare(x.key[:], y.key[:])
	})
	return s.update(func(tx *bolt.Tx) error {
		steps := tx.Bucket(bucketSteps)
		var bucket *bolt.Bucket
		var cur string
		for i := range b.steps {
			p := &b.steps[i]
			if bucket == nil || p.episode != cur {
				var err error
				bucket, err = steps.CreateBucketIfNotExists([]byte(p.episode))
				if err != nil {
					return fmt.Errorf("steps bucket %q: %w", p.episode, err)
				}
				// Keys arrive in time order: pack pages full.
				bucket.FillPercent = 0.9
				cur = p.episode
			}
			if err := bucket.Put(p.key[:], b.data[p.start:p.end]); err != nil {
				return fmt.Errorf("put step of %q: %w", p.episode, err)
			}
		}
		return nil
	})
}
