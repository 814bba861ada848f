package store

import (
	"fmt"
	"io"
	"maps"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// Snapshot writes a consistent copy of the store to w: a bbolt file that
// Open reads, as of the moment it starts (bbolt's hot backup, Tx.WriteTo
// inside one read transaction). size, when not nil, is called first with
// the copy's length in bytes, exactly what is then written (for a
// Content-Length). It returns the bytes written.
//
// Writers go on meanwhile (steps written after the start are not in the
// copy), but bbolt's rules for a long read transaction hold for its whole
// length: the pages freed meanwhile are not reused until it ends, and a
// commit that must grow the memory map waits for it. Bound its length by
// w's deadline.
func (s *Store) Snapshot(w io.Writer, size func(int64)) (n int64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err, s.path)
	err = s.db.View(func(tx *bolt.Tx) error {
		if size != nil {
			size(tx.Size())
		}
		var werr error
		n, werr = tx.WriteTo(w)
		return werr
	})
	if err != nil {
		return n, fmt.Errorf("snapshot %q: %w", s.path, err)
	}
	return n, nil
}

// SetEpisodeMeta merges meta into episode id's Meta: each key is set to its
// value, other keys are kept. It fails with ErrNotFound for an unknown
// episode.
func (s *Store) SetEpisodeMeta(id string, meta map[string]string) error {
	return s.updateEpisode(id, "set meta of", func(e *Episode) {
		if e.Meta == nil {
			e.Meta = make(map[string]string, len(meta))
		}
		maps.Copy(e.Meta, meta)
	})
}
