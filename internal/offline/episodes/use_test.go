package episodes

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
)

// TestCutoffAndRangeNameTheirFlags: prune's cutoff takes exactly one of
// --older-than and --before, and the errors of both name the flag.
func TestCutoffAndRangeNameTheirFlags(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	if got, err := Cutoff("2d", "", now); err != nil || !got.Equal(now.Add(-48*time.Hour)) {
		t.Errorf("Cutoff(2d) = %v, %v", got, err)
	}
	if got, err := Cutoff("", "2024-04-01T00:00:00Z", now); err != nil || got.Month() != time.April {
		t.Errorf("Cutoff(--before) = %v, %v", got, err)
	}
	for _, c := range []struct{ older, before, want string }{
		{"", "", "exactly one"}, {"1h", "-1h", "exactly one"}, {"-1h", "", "--older-than"}, {"", "soon", "--before"},
	} {
		if _, err := Cutoff(c.older, c.before, now); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Cutoff(%q, %q) = %v, want an error naming %s", c.older, c.before, err, c.want)
		}
	}
	if from, to, err := ParseRange("-1h", "", now); err != nil || !from.Equal(now.Add(-time.Hour)) || !to.IsZero() {
		t.Errorf("ParseRange(-1h, \"\") = %v, %v, %v", from, to, err)
	}
	for _, r := range [][2]string{{"x", ""}, {"", "x"}} {
		want := map[bool]string{true: "--from", false: "--to"}[r[0] == "x"]
		if _, _, err := ParseRange(r[0], r[1], now); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseRange(%q, %q) = %v, want an error naming %s", r[0], r[1], err, want)
		}
	}
}

// TestUseRefusesToWriteASnapshotAndOpensAFile: a daemon's URL is never
// opened for writing, and a file is opened, handed to f and closed.
func TestUseRefusesToWriteASnapshotAndOpensAFile(t *testing.T) {
	err := Use(context.Background(), "http://localhost:9465/", "", true, "prune", func(*store.Store) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "read-only snapshot") || !strings.Contains(err.Error(), "prune the store itself") {
		t.Fatalf("Use(URL, write) = %v", err)
	}
	path := filepath.Join(t.TempDir(), "regiment.db")
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	called := false
	if err := Use(context.Background(), path, "", false, "list", func(*store.Store) error { called = true; return nil }); err != nil || !called {
		t.Fatalf("Use(file) = %v, called %v", err, called)
	}
	if err := Use(context.Background(), path+".missing", "", false, "list", nil); err == nil || !strings.Contains(err.Error(), "no store at") {
		t.Fatalf("Use(missing) = %v", err)
	}
}
