package infile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular.hcl")
	if err := os.WriteFile(regular, []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.hcl")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	fifoLink := filepath.Join(dir, "fifo-link.hcl")
	if err := os.Symlink(fifo, fifoLink); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string // "" for success, else in the error
	}{
		{"a regular file opens", regular, ""},
		{"a link to a regular file opens", link, ""},
		{"a FIFO is refused at once, without a writer", fifo, "fifo.hcl: is a named pipe (FIFO), not a regular file"},
		{"a link to a FIFO is refused", fifoLink, "fifo-link.hcl: is a named pipe (FIFO), not a regular file"},
		{"a directory is refused", dir, "is a directory, not a regular file"},
		{"/dev/zero is refused", "/dev/zero", "open /dev/zero: is a character device, not a regular file"},
		{"a missing file is an error naming it", filepath.Join(dir, "nope"), "nope: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			f, err := Open(tt.path)
			if d := time.Since(start); d > time.Second {
				t.Errorf("Open took %v", d)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				f.Close()
				return
			}
			if err == nil {
				f.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != tt.path {
				t.Errorf("error %v is not a *fs.PathError for %q", err, tt.path)
			}
			if strings.Contains(tt.want, "not a regular file") != errors.Is(err, ErrNotRegular) {
				t.Errorf("errors.Is(%v, ErrNotRegular) = %v", err, errors.Is(err, ErrNotRegular))
			}
		})
	}
}

func TestReadFileStopsPastItsLimit(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(small, 5); err != nil || string(b) != "12345" {
		t.Fatalf("ReadFile at its limit = %q, %v", b, err)
	}
	if _, err := ReadFile(small, 4); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 4 bytes") {
		t.Fatalf("ReadFile past its limit: %v", err)
	}
	// A sparse file of 8 GiB costs its limit, not its size.
	huge := filepath.Join(dir, "huge")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(huge, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadFile of a sparse 8 GiB file: %v", err)
	}
}
