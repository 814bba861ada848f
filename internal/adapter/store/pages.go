package store

import (
	"encoding/binary"
	"fmt"
	"os"
)

// bbolt's page layout (go.etcd.io/bbolt/internal/common/page.go).
const (
	flagBranch     = 0x01
	flagLeaf       = 0x02
	flagFreelist   = 0x10
	elemSize       = 16 // branch and leaf elements alike
	bucketLeafFlag = 0x01
	bucketHeader   = 16 // root pgid, sequence
	noFreelist     = ^uint64(0)
	metaOffRoot    = 16
	metaOffFree    = 32
	maxDepth       = 64
)

// pageWalker checks that every page reachable from a meta page lies in the
// file and that every element of it lies in its page, reading the file with
// ReadAt: bbolt reads pages through its memory map and trusts their
// offsets, so an offset overwritten to point past the map is a memory fault
// there (in the goroutine tx.Check starts, out of reach of any recover).
// It checks bounds only; order, reachability and the freelist's contents
// are bbolt's check's.
type pageWalker struct {
	f        *os.File
	ps, size int64
	hwm      uint64
	seen     map[uint64]bool
}

// walkPages checks the tree of meta m and its freelist page.
func walkPages(f *os.File, m meta, root, freelist uint64, size int64) error {
	w := &pageWalker{f: f, ps: int64(m.pageSize), size: size, hwm: m.pgid, seen: map[uint64]bool{}}
	if freelist != noFreelist {
		if err := w.freelist(freelist); err != nil {
			return err
		}
	}
	return w.page(root, 0)
}

// read returns page id with its overflow pages, after checking its header.
func (w *pageWalker) read(id uint64) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, fmt.Errorf("page %d: outside the file's %d pages", id, w.hwm)
	}
	if w.seen[id] {
		return nil, fmt.Errorf("page %d: reached twice", id)
	}
	w.seen[id] = true
	head := make([]byte, pageHeaderSize)
	if _, err := w.f.ReadAt(head, int64(id)*w.ps); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	if got := binary.LittleEndian.Uint64(head); got != id {
		return nil, fmt.Errorf("page %d: its header says page %d", id, got)
	}
	overflow := uint64(binary.LittleEndian.Uint32(head[12:]))
	if id+overflow >= w.hwm {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the file's %d pages", id, overflow, w.hwm)
	}
	buf := make([]byte, int64(1+overflow)*w.ps)
	if _, err := w.f.ReadAt(buf, int64(id)*w.ps); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	return buf, nil
}

func (w *pageWalker) freelist(id uint64) error {
	p, err := w.read(id)
	if err != nil {
		return fmt.Errorf("freelist: %w", err)
	}
	if flags := binary.LittleEndian.Uint16(p[8:]); flags != flagFreelist {
		return fmt.Errorf("freelist page %d: flags %#x, not a freelist page", id, flags)
	}
	n, at := int64(binary.LittleEndian.Uint16(p[10:])), int64(pageHeaderSize)
	if n == 0xFFFF {
		if len(p) < pageHeaderSize+8 {
			return fmt.Errorf("freelist page %d: short", id)
		}
		n, at = int64(binary.LittleEndian.Uint64(p[pageHeaderSize:])), at+8
	}
	if n < 0 || at+n*8 > int64(len(p)) {
		return fmt.Errorf("freelist page %d: %d ids do not fit in its %d bytes", id, n, len(p))
	}
	return nil
}

// page checks page id and, below it, every page it reaches.
func (w *pageWalker) page(id uint64, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("page %d: deeper than %d levels", id, maxDepth)
	}
	p, err := w.read(id)
	if err != nil {
		return err
	}
	return w.elements(p, id, depth)
}

// elements checks the elements of page p (a page of the file, or an inline
// bucket's page inside a value) and recurses into what they reach.
func (w *pageWalker) elements(p []byte, id uint64, depth int) error {
	if len(p) < pageHeaderSize {
		return fmt.Errorf("page %d: shorter than its header", id)
	}
	flags, n := binary.LittleEndian.Uint16(p[8:]), int64(binary.LittleEndian.Uint16(p[10:]))
	span := int64(len(p))
	if pageHeaderSize+n*elemSize > span {
		return fmt.Errorf("page %d: %d elements do not fit in its %d bytes", id, n, span)
	}
	for i := range n {
		e := p[pageHeaderSize+i*elemSize:]
		at := pageHeaderSize + i*elemSize
		switch flags {
		case flagBranch:
			pos, ksize := int64(binary.LittleEndian.Uint32(e[0:])), int64(binary.LittleEndian.Uint32(e[4:]))
			if at+pos+ksize > span {
				return fmt.Errorf("page %d: element %d's key runs past the page", id, i)
			}
			if err := w.page(binary.LittleEndian.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
		case flagLeaf:
			eflags := binary.LittleEndian.Uint32(e[0:])
			pos, ksize, vsize := int64(binary.LittleEndian.Uint32(e[4:])), int64(binary.LittleEndian.Uint32(e[8:])), int64(binary.LittleEndian.Uint32(e[12:]))
			end := at + pos + ksize + vsize
			if end > span {
				return fmt.Errorf("page %d: element %d runs past the page", id, i)
			}
			if eflags&bucketLeafFlag == 0 {
				continue
			}
			v := p[at+pos+ksize : end]
			if len(v) < bucketHeader {
				return fmt.Errorf("page %d: element %d is a bucket of %d bytes", id, i, len(v))
			}
			if root := binary.LittleEndian.Uint64(v); root != 0 {
				if err := w.page(root, depth+1); err != nil {
					return err
				}
			} else if err := w.elements(v[bucketHeader:], id, depth+1); err != nil {
				return fmt.Errorf("inline bucket in %w", err)
			}
		default:
			return fmt.Errorf("page %d: flags %#x, not a branch or leaf page", id, flags)
		}
	}
	return nil
}
