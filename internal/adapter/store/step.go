package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Step is one control step: what the policy saw, what it decided, which
// guards changed the decision, how it was scored and what happened.
type Step struct {
	Episode string    `json:"episode,omitempty"` // not stored: the sub-bucket name
	Seq     uint64    `json:"seq"`
	At      time.Time `json:"at"`
	// Obs is the observation, in the order of the episode's ObsLayout.
	Obs []float64 `json:"obs"`
	// Action is the output that was acted on, e.g. "share", "cores",
	// "replicas/checkout-3"; Guards tell what the policy proposed before.
	Action map[string]float64 `json:"action,omitempty"`
	Guards []Guard            `json:"guards,omitempty"`
	// Reward is the per-term breakdown; "total" is the sum used for training.
	Reward map[string]float64 `json:"reward,omitempty"`
	// Outcome holds measured results, e.g. "p99_seconds", "error_rate",
	// "cost_core_hours", "slo_compliant" (0 or 1).
	Outcome map[string]float64 `json:"outcome,omitempty"`
}

// Guard records that a guard changed one output of a step.
type Guard struct {
	Name   string  `json:"name"`   // e.g. "floor", "dead-zone", "budget-cap"
	Target string  `json:"target"` // the Action key it changed
	Before float64 `json:"before"` // policy output
	After  float64 `json:"after"`  // value acted on
	Reason string  `json:"reason,omitempty"`
}

// Changed reports whether the guard altered its target.
func (g Guard) Changed() bool { return g.Before != g.After }

// keyLen is the length of step and ledger keys: unix nanos + seq/counter.
const keyLen = 16

var (
	minTime = time.Unix(0, 1)
	maxTime = time.Unix(0, math.MaxInt64)
)

// checkTime rejects times that have no big-endian unix-nanosecond key.
func checkTime(t time.Time) error {
	if t.IsZero() {
		return errors.New("zero time")
	}
	if t.Before(minTime) || t.After(maxTime) {
		return fmt.Errorf("time %s outside 1970..2262", t.Format(time.RFC3339))
	}
	return nil
}

// timeKey encodes t and n as a 16-byte key whose byte order is time order.
func timeKey(t time.Time, n uint64) [keyLen]byte {
	var k [keyLen]byte
	binary.BigEndian.PutUint64(k[:8], uint64(t.UnixNano()))
	binary.BigEndian.PutUint64(k[8:], n)
	return k
}

// boundKey is the first key at or after t (zero t: the very first key).
func boundKey(t time.Time) []byte {
	if t.IsZero() || t.Before(minTime) {
		return nil
	}
	if t.After(maxTime) {
		t = maxTime
	}
	k := timeKey(t, 0)
	return k[:]
}

// endKey is the exclusive upper key bound for to; nil means no bound.
func endKey(to time.Time) []byte {
	if to.IsZero() {
		return nil
	}
	if to.Before(minTime) {
		to = minTime
	}
	return boundKey(to)
}

// within reports whether key k lies before the exclusive bound end.
func within(k, end []byte) bool { return end == nil || bytes.Compare(k, end) < 0 }

// checkStep validates a step against the invariants in doc.go.
func checkStep(st *Step, obsLen int) error {
	if st.Episode == "" {
		return errors.New("empty episode id")
	}
	if err := checkTime(st.At); err != nil {
		return err
	}
	if obsLen > 0 && len(st.Obs) != obsLen {
		return fmt.Errorf("%d observations, episode layout has %d", len(st.Obs), obsLen)
	}
	for i, v := range st.Obs {
		if !finite(v) {
			return fmt.Errorf("obs[%d] is %v", i, v)
		}
	}
	for _, m := range []struct {
		name string
		m    map[string]float64
	}{{"action", st.Action}, {"reward", st.Reward}, {"outcome", st.Outcome}} {
		for k, v := range m.m {
			if !finite(v) {
				return fmt.Errorf("%s %q is %v", m.name, k, v)
			}
		}
	}
	for _, g := range st.Guards {
		if !finite(g.Before) || !finite(g.After) {
			return fmt.Errorf("guard %q on %q: %v -> %v", g.Name, g.Target, g.Before, g.After)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Steps calls fn for each step of episode id with from <= At < to, in time
// order; a zero from or to leaves that end open. It stops at fn's first
// error and returns it.
func (s *Store) Steps(id string, from, to time.Time, fn func(Step) error) error {
	err := s.view(func(tx *bolt.Tx) error {
		b := stepBucket(tx, id)
		if b == nil {
			return ErrNotFound
		}
		return eachStep(b, id, from, to, fn)
	})
	if err != nil {
		return fmt.Errorf("steps of %q: %w", id, err)
	}
	return nil
}

func eachStep(b *bolt.Bucket, id string, from, to time.Time, fn func(Step) error) error {
	return scan(b, from, to, func(k, v []byte) error {
		st, err := decodeStep(id, v)
		if err != nil {
			return fmt.Errorf("decode step %x: %w", k, err)
		}
		return fn(st)
	})
}

// scan calls fn for each key/value of a time-keyed bucket with
// from <= time < to (zero: open end), in key order.
func scan(b *bolt.Bucket, from, to time.Time, fn func(k, v []byte) error) error {
	c := b.Cursor()
	end := endKey(to)
	var k, v []byte
	if start := boundKey(from); start != nil {
		k, v = c.Seek(start)
	} else {
		k, v = c.First()
	}
	for ; k != nil && within(k, end); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// StepAt returns the last step of episode id at or before at: the decision
// in effect at that instant. ok is false when the episode has no such step.
func (s *Store) StepAt(id string, at time.Time) (st Step, ok bool, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		b := stepBucket(tx, id)
		if b == nil {
			return ErrNotFound
		}
		if at.IsZero() || at.Before(minTime) {
			return nil
		}
		if at.After(maxTime) {
			at = maxTime
		}
		bound := timeKey(at, math.MaxUint64)
		c := b.Cursor()
		k, v := c.Seek(bound[:])
		switch {
		case k == nil:
			k, v = c.Last()
		case bytes.Compare(k, bound[:]) > 0:
			k, v = c.Prev()
		}
		if k == nil {
			return nil
		}
		got, err := decodeStep(id, v)
		if err != nil {
			return fmt.Errorf("decode step %x: %w", k, err)
		}
		st, ok = got, true
		return nil
	})
	if err != nil {
		return Step{}, false, fmt.Errorf("step of %q at %s: %w", id, at.Format(time.RFC3339Nano), err)
	}
	return st, ok, nil
}
