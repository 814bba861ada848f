// Package regiment_test holds the tests of the repository as a whole: that
// nothing in it reaches outside the clone, and that its docs' links resolve.
package regiment_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A finding is one line of a file that names a path outside the repository.
type finding struct {
	file string // slash-separated, relative to the repository root
	line int    // 1-based
	what string
}

func (f finding) String() string { return fmt.Sprintf("%s:%d: %s", f.file, f.line, f.what) }

var (
	// dotdotPath is a relative path that climbs: ../x, ../../x/y.
	dotdotPath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.\-/])((?:\.\./)+[A-Za-z0-9_.\-/]*)`)
	// joinUp is a Go filepath.Join whose first arguments climb: ("..", "..", ...).
	joinUp = regexp.MustCompile(`filepath\.Join\(\s*((?:"\.\."\s*,\s*)+)`)
	// sharedDir names the folder that sits beside the checkout in CI.
	sharedDir = regexp.MustCompile(`(?:\.\./|/work/)shared\b`)
	// mdLink is the target of a Markdown link or image: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s#]+)`)
)

// self is this file: it names outside paths on purpose, to plant them.
const self = "repo_test.go"

// outsideRefs returns every line of the given files (slash paths relative to
// root) that names a path outside root: a climbing relative path that,
// resolved from the file's own folder, leaves root; a filepath.Join that
// climbs out; or the shared folder beside the checkout by name. In Markdown,
// whose code blocks quote paths relative to other files, only link targets
// are resolved. Binary files (with a NUL byte) are skipped.
func outsideRefs(root string, files []string) ([]finding, error) {
	var out []finding
	for _, rel := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		dir := filepath.Dir(filepath.FromSlash(rel))
		escapes := func(p string) bool {
			r := filepath.Join(dir, filepath.FromSlash(p))
			return r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator))
		}
		for i, line := range strings.Split(string(data), "\n") {
			add := func(what string) { out = append(out, finding{rel, i + 1, what}) }
			if m := sharedDir.FindString(line); m != "" {
				add(fmt.Sprintf("names %q, a folder outside the repository", m))
				continue
			}
			paths := dotdotPath
			if strings.HasSuffix(rel, ".md") {
				paths = mdLink
			}
			for _, m := range paths.FindAllStringSubmatch(line, -1) {
				if escapes(m[1]) {
					add(fmt.Sprintf("%q leaves the repository (from %s/)", m[1], filepath.ToSlash(dir)))
				}
			}
			for _, m := range joinUp.FindAllStringSubmatch(line, -1) {
				up := strings.Repeat("../", strings.Count(m[1], `".."`))
				if escapes(up) {
					add(fmt.Sprintf("filepath.Join climbs %d folders, out of the repository (from %s/)", strings.Count(m[1], `".."`), filepath.ToSlash(dir)))
				}
			}
		}
	}
	return out, nil
}

// repoFiles lists the files git tracks or would track (untracked but not
// ignored), slash-separated and relative to the repository root.
func repoFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if _, err := os.Stat(f); err == nil && f != self { // not deleted but unstaged
			files = append(files, f)
		}
	}
	return files
}

func TestNothingNamesAPathOutsideTheRepository(t *testing.T) {
	found, err := outsideRefs(".", repoFiles(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

func TestOutsideRefsFindsAPlantedFile(t *testing.T) {
	root := t.TempDir()
	// The folder beside CI's checkout is spelled in two pieces so that this
	// file, too, passes the grep for it.
	shared := "../../../" + "shared"
	plant := map[string]string{
		"examples/scenarios/s.hcl": "traffic \"p\" {\n  trace = \"" + shared + "/traces/w.csv\"\n}\n",
		"sim/bench_test.go":        "package sim\n\nvar p = filepath.Join(\"..\", \"..\", \"other\", \"x.csv\")\n",
		"docs/a.md":                "fine: [x](../traces/README.md), `../../in/code.hcl`\nnot: [y](../../elsewhere/z.md)\n",
		"ok/inside.hcl":            "trace = \"../traces/w.csv.gz\"\n",
		"bin/blob":                 "\x00" + shared,
	}
	var files []string
	for rel, text := range plant {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	found, err := outsideRefs(root, files)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range found {
		got[fmt.Sprintf("%s:%d", f.file, f.line)] = true
	}
	want := []string{"examples/scenarios/s.hcl:2", "sim/bench_test.go:3", "docs/a.md:2"}
	for _, w := range want {
		if !got[w] {
			t.Errorf("planted reference at %s not found; found %v", w, found)
		}
	}
	if len(found) != len(want) {
		t.Errorf("found %d references, want %d: %v", len(found), len(want), found)
	}
}
