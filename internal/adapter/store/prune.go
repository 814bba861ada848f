package store

import (
	"bytes"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// pruneChunk bounds the deletes of one transaction, so pruning a large file
// neither builds a huge dirty-page set nor holds the writer lock for long.
const pruneChunk = 10000

// Prune deletes steps and ledger entries with At before the cutoff, then the
// episodes that are ended (before the cutoff) and left without steps. It
// works in transactions of at most pruneChunk deletes. removed counts the
// deleted steps and ledger entries. The file does not shrink (see doc.go).
func (s *Store) Prune(before time.Time) (removed int, err error) {
	end := boundKey(before)
	if end == nil {
		return 0, nil
	}
	for {
		n := 0
		err := s.update(func(tx *bolt.Tx) error {
			var err error
			n, err = deleteBefore(tx.Bucket(bucketLedger), end, pruneChunk)
			if err != nil {
				return fmt.Errorf("ledger: %w", err)
			}
			steps := tx.Bucket(bucketSteps)
			for _, name := range bucketNames(steps) {
				if n >= pruneChunk {
					break
				}
				d, err := deleteBefore(steps.Bucket(name), end, pruneChunk-n)
				if err != nil {
					return fmt.Errorf("steps of %q: %w", name, err)
				}
				n += d
			}
			return nil
		})
		if err != nil {
			return removed, fmt.Errorf("prune before %s: %w", before.Format(time.RFC3339), err)
		}
		removed += n
		if n < pruneChunk {
			break
		}
	}
	var dropped []string
	err = s.update(func(tx *bolt.Tx) error {
		dropped = dropped[:0]
		eps, err := allEpisodes(tx)
		if err != nil {
			return err
		}
		steps := tx.Bucket(bucketSteps)
		for _, e := range eps {
			if e.Running() || !e.Ended.Before(before) {
				continue
			}
			if b := steps.Bucket([]byte(e.ID)); b != nil {
				if k, _ := b.Cursor().First(); k != nil {
					continue
				}
				if err := steps.DeleteBucket([]byte(e.ID)); err != nil {
					return fmt.Errorf("delete steps of %q: %w", e.ID, err)
				}
			}
			if err := tx.Bucket(bucketEpisodes).Delete([]byte(e.ID)); err != nil {
				return fmt.Errorf("delete episode %q: %w", e.ID, err)
			}
			dropped = append(dropped, e.ID)
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("prune before %s: %w", before.Format(time.RFC3339), err)
	}
	for _, id := range dropped {
		s.forget(id)
	}
	return removed, nil
}

// deleteBefore deletes up to limit of the first keys of b that sort before
// end. Keys are collected first: deleting under a live cursor can skip keys.
func deleteBefore(b *bolt.Bucket, end []byte, limit int) (int, error) {
	if b == nil || limit <= 0 {
		return 0, nil
	}
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k, end) < 0 && len(keys) < limit; k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for i, k := range keys {
		if err := b.Delete(k); err != nil {
			return i, err
		}
	}
	return len(keys), nil
}

// bucketNames copies the names of b's sub-buckets.
func bucketNames(b *bolt.Bucket) [][]byte {
	if b == nil {
		return nil
	}
	var names [][]byte
	_ = b.ForEachBucket(func(k []byte) error {
		names = append(names, bytes.Clone(k))
		return nil
	})
	return names
}
