// Package clitest holds what the tests of a command's output share; only
// tests import it.
package clitest

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// PipeLines runs f with the write end of a pipe, as a process's stderr in a
// pod or CI is, and returns what it wrote, line by line (nil for nothing).
func PipeLines(t testing.TB, f func(w *os.File)) []string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	f(w)
	w.Close()
	b := <-got
	r.Close()
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
