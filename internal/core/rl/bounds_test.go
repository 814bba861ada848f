package rl

import (
	"io"
	"strings"
	"testing"
	"time"
)

// zeroReader reads an endless run of zero bytes, as a sparse file or
// /dev/zero does.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// TestLoadReadsNoMoreThanItsBoundsOfAnEndlessLine: a checkpoint of one
// endless line is refused after reading about its bound, not the whole file
// (a 3 GiB sparse file used to be read whole into one string).
func TestLoadReadsNoMoreThanItsBoundsOfAnEndlessLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		want   string
	}{
		{"an endless first line", "", "not a policy checkpoint"},
		{"an endless header line", magicLine + "\n{", "header longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := &zeroReader{}
			start := time.Now()
			_, err := Load(io.MultiReader(strings.NewReader(tc.prefix), z), Layout{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want %q", err, tc.want)
			}
			if z.n > 2*maxHeader {
				t.Errorf("read %d bytes of zeros, want at most about %d", z.n, maxHeader)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
