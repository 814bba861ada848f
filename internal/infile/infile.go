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
	t := m.Type()
	if t == 0 {
		return "a regular file"
	}
	for _, k := range kinds {
		if t&k.mode != 0 {
			return k.name
		}
	}
	return "a special file"
}

// kinds names the file types Kind tells apart, the first that matches
// winning (a character device is also a device).
var kinds = []struct {
	mode fs.FileMode
	name string
}{
	{fs.ModeDir, "a directory"},
	{fs.ModeNamedPipe, "a named pipe (FIFO)"},
	{fs.ModeCharDevice, "a character device"},
	{fs.ModeDevice, "a block device"},
	{fs.ModeSocket, "a socket"},
	{fs.ModeSymlink, "a symbolic link"},
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
