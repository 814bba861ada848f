package store

import (
	"testing"
)

// TestStateSurvivesReopen pins the state bucket: the last value put under a
// key is read back after the file is closed and reopened, read-write or
// read-only; an unknown key is nil.
func TestStateSurvivesReopen(t *testing.T) {
	s, path := openTemp(t)
	if v, err := s.State("soldier/web"); err != nil || v != nil {
		t.Fatalf("state of a new file: %q, %v", v, err)
	}
	for _, v := range []string{`{"version":1,"n":1}`, `{"version":1,"n":2}`} {
		if err := s.PutState("soldier/web", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutState("", []byte("x")); err == nil {
		t.Fatal("an empty key was stored")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{{}, {ReadOnly: true}} {
		s, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.State("soldier/web")
		if err != nil || string(got) != `{"version":1,"n":2}` {
			t.Errorf("read-only %v: state %q, %v; want the last put", opts.ReadOnly, got, err)
		}
		if other, _ := s.State("soldier/api"); other != nil {
			t.Errorf("another key read %q", other)
		}
		s.Close()
	}
}
