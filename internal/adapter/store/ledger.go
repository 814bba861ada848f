package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// LedgerEntry is one decision-level event worth an audit trail: a directive
// sent, an override, a fallback to the baseline, a mode change.
type LedgerEntry struct {
	At     time.Time          `json:"at"`
	Domain string             `json:"domain,omitempty"` // empty: cluster-wide
	Kind   string             `json:"kind"`             // "directive", "override", "fallback", "mode", ...
	Detail string             `json:"detail,omitempty"` // one human-readable line
	Values map[string]float64 `json:"values,omitempty"`
}

// AppendLedger writes one entry in its own transaction. Entries with the
// same At keep their insertion order.
func (s *Store) AppendLedger(e LedgerEntry) error {
	if err := checkTime(e.At); err != nil {
		return fmt.Errorf("append ledger %s: %w", e.Kind, err)
	}
	if e.Kind == "" {
		return errors.New("append ledger: empty kind")
	}
	for k, v := range e.Values {
		if !finite(v) {
			return fmt.Errorf("append ledger %s: value %q is %v", e.Kind, k, v)
		}
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("append ledger %s: %w", e.Kind, err)
	}
	err = s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		n, err := b.NextSequence()
		if err != nil {
			return err
		}
		k := timeKey(e.At, n)
		return b.Put(k[:], raw)
	})
	if err != nil {
		return fmt.Errorf("append ledger %s: %w", e.Kind, err)
	}
	return nil
}

// Ledger calls fn for each entry with from <= At < to (zero: open end) in
// time order; a non-empty domain keeps only that domain's entries. It stops
// at fn's first error and returns it.
func (s *Store) Ledger(from, to time.Time, domain string, fn func(LedgerEntry) error) error {
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLedger)
		if b == nil {
			return nil
		}
		return scan(b, from, to, func(k, v []byte) error {
			var e LedgerEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode ledger entry %x: %w", k, err)
			}
			if domain != "" && e.Domain != domain {
				return nil
			}
			return fn(e)
		})
	})
	if err != nil {
		return fmt.Errorf("read ledger: %w", err)
	}
	return nil
}
