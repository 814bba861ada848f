package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// bucketState holds a daemon's state that must survive its restarts, one
// value per key (a Soldier's decision state under "soldier/<domain>").
var bucketState = []byte("state")

// PutState stores value under key, replacing what was there, in one
// transaction (one commit). The store does not read value.
func (s *Store) PutState(key string, value []byte) error {
	if key == "" {
		return errors.New("put state: empty key")
	}
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketState)
		if err != nil {
			return err
		}
		return b.Put([]byte(key), value)
	})
	if err != nil {
		return fmt.Errorf("put state %q: %w", key, err)
	}
	return nil
}

// State is the value stored under key, nil if none (also in a file written
// before the state bucket existed).
func (s *Store) State(key string) ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketState); b != nil {
			if v := b.Get([]byte(key)); v != nil {
				out = append([]byte(nil), v...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read state %q: %w", key, err)
	}
	return out, nil
}
