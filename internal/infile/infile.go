package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is what errors.Is finds in the error of Open for a path
// that names something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is what errors.Is finds in the error of ReadFile for a file
// over its limit.
var ErrTooLarge = errors.New("file too large")

// notRegular is the error of a file that is not regular: what it is.
type notRegular struct{ mode fs.FileMode }

func (e notRegular) Error() string {
	return fmt.Sprintf("is %s, not a regular file", Kind(e.mode))
}

func (e notRegular) Is(target error) bool { return target == ErrNotRegular }

// Kind names a file's type for a message: "a directory", "a named pipe
// (FIFO)", "a character device", ...
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// Open opens the file at path for reading if it is a regular file, and
// returns an *fs.PathError (Op "open") naming path otherwise: for a FIFO,
// a device, a directory or a socket its Err wraps ErrNotRegular. It never
// blocks on a FIFO.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular{fi.Mode()}}
	}
	return f, nil
}

// ReadFile reads the regular file at path (see Open), which may hold at
// most limit bytes: a longer file is an error wrapping ErrTooLarge, found
// after reading limit+1 bytes, however large the file is.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return b, nil
}
