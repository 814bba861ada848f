package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/regimentd/regiment/internal/infile"
)

// RepairReport is what Repair copied and what it had to leave behind.
type RepairReport struct {
	// Keys is the number of values copied, over every bucket.
	Keys int
	// Buckets is the number of buckets (nested ones included) created.
	Buckets int
	// Skipped says, per damaged part, what could not be read: a bucket path
	// and the reason.
	Skipped []string
}

// Repair copies every bucket and key it can read from the store file in
// into a new store file out, and reports what it skipped. It never writes to
// in: it reads a private copy of it (padded to the length its meta page
// claims when in was truncated, so that pages lost off the end read as
// damaged pages instead of faulting). out must not exist; on success it is
// a valid store that Open accepts.
//
// In each bucket Repair walks the keys forwards until it meets a page it
// cannot read, then backwards from the last key to that point, so one bad
// page loses the keys of that page (and those below it when it is a branch),
// not the rest of the bucket.
func Repair(in, out string) (RepairReport, error) {
	var rep RepairReport
	if _, err := os.Stat(out); err == nil {
		return rep, fmt.Errorf("repair: %q exists; name a new file", out)
	}
	tmp, err := paddedCopy(in, filepath.Dir(out))
	if err != nil {
		return rep, fmt.Errorf("repair %q: %w", in, err)
	}
	defer os.Remove(tmp)

	src, err := openBolt(tmp, &bolt.Options{ReadOnly: true, Timeout: DefaultTimeout})
	if err != nil {
		return rep, fmt.Errorf("repair %q: %w", in, err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return rep, fmt.Errorf("repair: %w", err)
	}
	dst, err := bolt.Open(out, 0o600, &bolt.Options{Timeout: DefaultTimeout})
	if err != nil {
		return rep, fmt.Errorf("repair: create %q: %w", out, err)
	}
	// A read past the end of a page or the map is a fault, not a panic,
	// unless asked for.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	err = dst.Update(func(wtx *bolt.Tx) error {
		rtx, err := beginGuarded(src)
		if err != nil {
			return err
		}
		defer func() { _ = rtx.Rollback() }()
		top := &srcBucket{tx: rtx}
		return copyBucket(top, nil, wtx, nil, &rep)
	})
	if cerr := dst.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(out)
		return rep, fmt.Errorf("repair %q: %w", in, err)
	}
	s, err := Open(out, Options{})
	if err != nil {
		return rep, fmt.Errorf("repair: the new file does not open: %w", err)
	}
	return rep, s.Close()
}

// paddedCopy copies path into a temporary file in dir, zero-padded to a
// whole number of pages and to its meta page's high water mark.
func paddedCopy(path, dir string) (string, error) {
	f, err := infile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	t, err := os.CreateTemp(dir, ".repair-*.db")
	if err != nil {
		return "", err
	}
	n, err := io.Copy(t, f)
	if err == nil {
		want := n
		head := make([]byte, pageHeaderSize+metaSize)
		if _, rerr := f.ReadAt(head, 0); rerr == nil {
			if m, merr := readMeta(head); merr == nil {
				ps := int64(m.pageSize)
				want = max(want, int64(m.pgid)*ps, minPages*ps)
				want = (want + ps - 1) / ps * ps
			}
		}
		if want > n {
			err = t.Truncate(want)
		}
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(t.Name())
		return "", err
	}
	return t.Name(), nil
}

func beginGuarded(db *bolt.DB) (tx *bolt.Tx, err error) {
	defer guard(&err, db.Path())
	return db.Begin(false)
}

// srcBucket is a readable bucket: a nested one, or the transaction's root
// (b nil).
type srcBucket struct {
	tx *bolt.Tx
	b  *bolt.Bucket
}

func (s *srcBucket) cursor() *bolt.Cursor {
	if s.b == nil {
		return s.tx.Cursor()
	}
	return s.b.Cursor()
}

func (s *srcBucket) child(name []byte) *srcBucket {
	if s.b == nil {
		return &srcBucket{tx: s.tx, b: s.tx.Bucket(name)}
	}
	return &srcBucket{tx: s.tx, b: s.b.Bucket(name)}
}

// copyBucket copies src's keys into dst (the write transaction's root when
// dst is nil), recursing into nested buckets. path names src in reports.
func copyBucket(src *srcBucket, path []string, wtx *bolt.Tx, dst *bolt.Bucket, rep *RepairReport) error {
	name := "/" + strings.Join(path, "/")
	put := func(k, v []byte) error {
		if v == nil { // a nested bucket
			var nb *bolt.Bucket
			var err error
			if dst == nil {
				nb, err = wtx.CreateBucketIfNotExists(k)
			} else {
				nb, err = dst.CreateBucketIfNotExists(k)
			}
			if err != nil {
				return fmt.Errorf("create bucket %s/%s: %w", name, k, err)
			}
			rep.Buckets++
			var child *srcBucket
			if err := guarded(func() { child = src.child(k) }); err != nil || child.b == nil {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("bucket %s/%s: unreadable (%v)", strings.TrimSuffix(name, "/"), k, err))
				return nil
			}
			return copyBucket(child, append(path, string(k)), wtx, nb, rep)
		}
		if dst == nil {
			return nil // a value at the root: bbolt has none
		}
		rep.Keys++
		return dst.Put(bytes.Clone(k), bytes.Clone(v))
	}

	var first, last []byte // the range copied forwards
	var werr error
	ferr := guarded(func() {
		c := src.cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if werr = put(k, v); werr != nil {
				return
			}
			if first == nil {
				first = bytes.Clone(k)
			}
			last = bytes.Clone(k)
		}
	})
	if werr != nil {
		return werr
	}
	if ferr == nil {
		return nil
	}
	// Forwards stopped at a bad page: walk back from the end to it.
	before := rep.Keys
	berr := guarded(func() {
		c := src.cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if last != nil && bytes.Compare(k, last) <= 0 {
				return
			}
			if werr = put(k, v); werr != nil {
				return
			}
		}
	})
	if werr != nil {
		return werr
	}
	where := "from its first key"
	if last != nil {
		where = fmt.Sprintf("after key %x", last)
	}
	msg := fmt.Sprintf("bucket %s: reading %s failed (%v); %d keys recovered walking back from the end", name, where, ferr, rep.Keys-before)
	if berr != nil {
		msg += fmt.Sprintf(" until it failed too (%v); the keys between are lost", berr)
	}
	rep.Skipped = append(rep.Skipped, msg)
	return nil
}

// guarded runs fn and returns the panic it raised, if any, as an error.
func guarded(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	fn()
	return nil
}
