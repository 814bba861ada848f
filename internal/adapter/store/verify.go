package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/regimentd/regiment/internal/infile"
)

// ErrDamaged means the store file is damaged: truncated, its pages
// overwritten, or not a bbolt file at all. The error that wraps it says what
// is wrong; "regiment episodes repair" copies what is readable into a new
// file.
var ErrDamaged = errors.New("store file is damaged")

// repairHint is what an operator does about a damaged file.
const repairHint = `copy what is readable into a new file with "regiment episodes repair --in FILE --out NEW" (docs/operations.md), or move the file aside to start empty`

// bbolt's on-disk layout (go.etcd.io/bbolt/internal/common): a page header
// of pageHeaderSize bytes, then on the two meta pages (0 and 1) the meta
// fields below, little-endian on every platform bbolt supports here.
const (
	pageHeaderSize = 16
	metaMagic      = 0xED0CDAED
	metaVersion    = 2
	// Offsets inside the meta, after the page header.
	metaOffPageSize = 8
	metaOffPgid     = 40 // high water mark: pages in use
	metaOffTxid     = 48
	metaOffChecksum = 56 // FNV-64a of the 56 bytes before it
	metaSize        = 64
	// minPages is what bbolt writes into a new file: two meta pages, the
	// freelist and the root leaf.
	minPages = 4
)

// meta is the part of a bbolt meta page the file check needs.
type meta struct {
	pageSize       uint32
	root, freelist uint64 // page ids
	pgid           uint64
	txid           uint64
}

// readMeta decodes the meta page at buf (a whole page or at least its
// header and meta), or says why it is not one.
func readMeta(buf []byte) (meta, error) {
	if len(buf) < pageHeaderSize+metaSize {
		return meta{}, errors.New("short meta page")
	}
	m := buf[pageHeaderSize : pageHeaderSize+metaSize]
	if binary.LittleEndian.Uint32(m[0:]) != metaMagic {
		return meta{}, errors.New("no bbolt magic number")
	}
	if v := binary.LittleEndian.Uint32(m[4:]); v != metaVersion {
		return meta{}, fmt.Errorf("bbolt version %d, want %d", v, metaVersion)
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:metaOffChecksum])
	if h.Sum64() != binary.LittleEndian.Uint64(m[metaOffChecksum:]) {
		return meta{}, errors.New("meta checksum mismatch")
	}
	ps := binary.LittleEndian.Uint32(m[metaOffPageSize:])
	if ps < 1024 || ps > 1<<20 || ps&(ps-1) != 0 {
		return meta{}, fmt.Errorf("page size %d is not a power of two in [1 KiB, 1 MiB]", ps)
	}
	return meta{pageSize: ps, pgid: binary.LittleEndian.Uint64(m[metaOffPgid:]),
		root: binary.LittleEndian.Uint64(m[metaOffRoot:]), freelist: binary.LittleEndian.Uint64(m[metaOffFree:]),
		txid: binary.LittleEndian.Uint64(m[metaOffTxid:])}, nil
}

// checkFile looks at a store file before bbolt maps it: bbolt trusts its
// meta page and reads any page below the high water mark, so a file cut
// short would fault (an unrecoverable crash, not a panic) once a read
// reaches past its end. It refuses a file that is not regular, is empty,
// has no valid meta page, is not a whole number of pages, or is shorter
// than its meta page's high water mark. A missing file is fine (Open
// creates it, or reports it when read-only).
func checkFile(path string) error {
	f, err := infile.Open(path) // a FIFO must not block the check
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	// A file another process writes is not read here (it may grow under
	// the check); bbolt's Open then waits for the lock and reports it.
	held, unlock, err := shareLock(f)
	if err != nil {
		return err
	}
	defer unlock()
	if !held {
		return nil
	}
	if fi, err = f.Stat(); err != nil { // its size now that no writer can grow it
		return err
	}
	size := fi.Size()
	if size == 0 {
		return fmt.Errorf("%w: the file is empty (0 bytes), not a bbolt file; remove it to start an empty store", ErrDamaged)
	}
	head := make([]byte, 4096)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	head = head[:n]
	m0, err0 := readMeta(head)
	// The second meta page sits one page in; with the first one unreadable
	// its page size is unknown, so try the sizes bbolt may have used.
	sizes := []uint32{uint32(os.Getpagesize()), 4096, 8192, 16384, 65536}
	if err0 == nil {
		sizes = []uint32{m0.pageSize}
	}
	var m1 meta
	err1 := errors.New("no second meta page")
	for _, ps := range sizes {
		buf := make([]byte, pageHeaderSize+metaSize)
		if _, err := f.ReadAt(buf, int64(ps)); err != nil {
			continue
		}
		if m, err := readMeta(buf); err == nil && m.pageSize == ps {
			m1, err1 = m, nil
			break
		} else if err != nil {
			err1 = err
		}
	}
	var m meta
	switch {
	case err0 != nil && err1 != nil:
		return fmt.Errorf("%w: no valid meta page (page 0: %v; page 1: %v); %s", ErrDamaged, err0, err1, repairHint)
	case err0 != nil:
		m = m1
	case err1 != nil:
		m = m0
	case m1.txid > m0.txid:
		m = m1
	default:
		m = m0
	}
	ps := int64(m.pageSize)
	if size < minPages*ps {
		return fmt.Errorf("%w: the file is %d bytes, less than the %d pages of %d bytes of any bbolt file; %s", ErrDamaged, size, minPages, ps, repairHint)
	}
	if size%ps != 0 {
		return fmt.Errorf("%w: the file is %d bytes, not a whole number of %d-byte pages (truncated?); %s", ErrDamaged, size, ps, repairHint)
	}
	// The meta of either page may be the one bbolt picks: neither may
	// point past the end.
	for i, mm := range []struct {
		m   meta
		err error
	}{{m0, err0}, {m1, err1}} {
		if mm.err == nil && uint64(size/ps) < mm.m.pgid {
			return fmt.Errorf("%w: the file is %d bytes but meta page %d says %d pages of %d bytes (%d bytes): truncated; %s",
				ErrDamaged, size, i, mm.m.pgid, ps, int64(mm.m.pgid)*ps, repairHint)
		}
	}
	if err := walkPages(f, m, m.root, m.freelist, size); err != nil {
		return fmt.Errorf("%w: %w; %s", ErrDamaged, err, repairHint)
	}
	return nil
}

// guard turns a panic raised below it (bbolt panics on pages it cannot make
// sense of) into an error wrapping ErrDamaged, so a damaged file never takes
// the process down. It is deferred at every entry point that touches bbolt.
func guard(err *error, path string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: reading %q failed (%v); %s", ErrDamaged, path, r, repairHint)
	}
}

// view and update run bbolt transactions behind guard, with a memory fault
// (a read through a damaged page past the mapped file) turned into a panic
// that guard recovers instead of a crash.
func (s *Store) view(fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err, s.path)
	return s.db.View(fn)
}

func (s *Store) update(fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err, s.path)
	return s.db.Update(fn)
}

// checkErrors joins at most a few of bbolt's consistency errors: a badly
// damaged file reports thousands.
func checkErrors(errs []error) error {
	const most = 5
	var b strings.Builder
	for i, e := range errs {
		if i == most {
			fmt.Fprintf(&b, "; and %d more", len(errs)-most)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return errors.New(b.String())
}
