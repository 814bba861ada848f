//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// shareLock takes a shared lock on f without waiting, as bbolt's readers
// do: held reports false when another process writes the file (its
// exclusive lock), which Open then reports as ErrLocked. unlock releases.
func shareLock(f *os.File) (held bool, unlock func(), err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, func() {}, nil
	}
	if err != nil {
		return false, func() {}, err
	}
	return true, func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
