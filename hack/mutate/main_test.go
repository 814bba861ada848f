package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every mutant's original text occurs exactly once in its file, and the
// replacement changes it: a list that drifted from the code fails here, in
// the ordinary tests, not first in make mutate.
func TestEveryMutantAppliesOnce(t *testing.T) {
	names := map[string]bool{}
	for _, m := range mutants {
		if names[m.Name] {
			t.Errorf("mutant %q listed twice", m.Name)
		}
		names[m.Name] = true
		if m.Original == m.Mutated {
			t.Errorf("mutant %q changes nothing", m.Name)
		}
		if !strings.HasPrefix(m.Pkg, "./") {
			t.Errorf("mutant %q: package %q, want a ./ path", m.Name, m.Pkg)
		}
		b, err := os.ReadFile(filepath.Join("..", "..", m.File))
		if err != nil {
			t.Errorf("mutant %q: %v", m.Name, err)
			continue
		}
		if n := strings.Count(string(b), m.Original); n != 1 {
			t.Errorf("mutant %q: %s holds its original text %d times, want once", m.Name, m.File, n)
		}
	}
}

// copyTree copies the tree, its nested files included, and leaves .git out.
func TestCopyTreeLeavesOutGit(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for path, body := range map[string]string{"go.mod": "module x\n", "a/b/c.go": "package b\n", ".git": "gitdir: elsewhere\n"} {
		p := filepath.Join(src, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "a/b/c.go")); err != nil || string(b) != "package b\n" {
		t.Errorf("a/b/c.go copied as %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); !os.IsNotExist(err) {
		t.Errorf(".git copied (stat: %v)", err)
	}
}
