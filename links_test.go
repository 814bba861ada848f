package regiment_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// linkTarget is a Markdown link or image target: [text](target "title").
	linkTarget = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// heading is an ATX heading line.
	heading = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	// slugDrop is what GitHub drops from a heading to make its anchor.
	slugDrop = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// slug is GitHub's anchor for a heading text: lower case, punctuation
// dropped, each space a hyphen.
func slug(text string) string {
	s := strings.ToLower(strings.TrimSpace(text))
	s = slugDrop.ReplaceAllString(s, "")
	return strings.ReplaceAll(s, " ", "-")
}

// anchors returns the anchors of a Markdown document's headings, with
// GitHub's -1, -2 suffixes for repeats. Fenced code is not read.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range mdProse(doc) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		a := slug(m[2])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// mdProse returns the lines of a Markdown document outside fenced code
// blocks, blanking the fenced ones so that line numbers hold.
func mdProse(doc string) []string {
	lines := strings.Split(doc, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// brokenLinks returns every relative link of the Markdown files (slash paths
// relative to root) whose file, or whose #anchor in that file, does not
// exist. Links with a scheme (https:, mailto:) are not followed.
func brokenLinks(root string, files []string) ([]string, error) {
	read := func(rel string) (string, error) {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return string(b), err
	}
	var out []string
	for _, rel := range files {
		doc, err := read(rel)
		if err != nil {
			return nil, err
		}
		for i, line := range mdProse(doc) {
			for _, m := range linkTarget.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				dest := rel
				if file != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(rel), file))
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
						out = append(out, fmt.Sprintf("%s:%d: %s: no such file %s", rel, i+1, target, dest))
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				d, err := read(dest)
				if err != nil {
					return nil, err
				}
				if !anchors(d)[frag] {
					out = append(out, fmt.Sprintf("%s:%d: %s: %s has no heading #%s", rel, i+1, target, dest, frag))
				}
			}
		}
	}
	return out, nil
}

func TestEveryDocLinkResolves(t *testing.T) {
	var docs []string
	for _, f := range repoFiles(t) {
		if strings.HasSuffix(f, ".md") {
			docs = append(docs, f)
		}
	}
	if len(docs) == 0 {
		t.Fatal("no Markdown files found")
	}
	broken, err := brokenLinks(".", docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

func TestBrokenLinksFindsPlantedOnes(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"README.md": "# Regiment\n## Quick start\n## Quick start\n[a](docs/x.md) [b](docs/x.md#the-model-and-its-limits) " +
			"[c](#quick-start-1) [d](https://example.com/nope) [e](docs/gone.md)\n" +
			"[f](docs/x.md#nope) [g](#nope)\n```\n[h](in/code.md)\n```\n",
		"docs/x.md": "# The model, and its limits\n",
	}
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	broken, err := brokenLinks(root, []string{"README.md", "docs/x.md"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md:4: docs/gone.md: no such file docs/gone.md",
		"README.md:5: docs/x.md#nope: docs/x.md has no heading #nope",
		"README.md:5: #nope: README.md has no heading #nope",
	}
	if strings.Join(broken, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
}
