package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeRunBlock returns the lines of the README's "What `make run` prints"
// block after its first line (the wall-time line, which no run repeats).
func readmeRunBlock(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const head = "cluster tenth, scenario tenth-day:"
	text := string(readme)
	i := strings.Index(text, "\n"+head)
	if i < 0 {
		t.Fatalf("README.md has no line starting %q", head)
	}
	block := text[i+1:]
	end := strings.Index(block, "\n```")
	if end < 0 {
		t.Fatalf("README.md: the block after %q does not end", head)
	}
	return strings.Split(block[:end], "\n")[1:]
}

// tableCells splits a summary line into its label and its figures: cells are
// separated by two or more spaces.
var cellGap = regexp.MustCompile(`\s{2,}`)

func tableCells(line string) []string {
	return cellGap.Split(strings.TrimSpace(line), -1)
}

// The README's `make run` table is what `make run` prints: regiment run on its
// defaults (examples/tenth.hcl, examples/scenarios/tenth-day.hcl) is
// deterministic, so every figure row matches at its printed precision. Only
// the wall-time line and the data directory differ. A changed figure names its
// row, its column and both values; update the README from a fresh `make run`.
func TestReadmeRunTableIsWhatMakeRunPrints(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED under -short: the README's make run table is not checked (a full 24 h tenth-day run, ~20 s of CPU)")
	}
	want := readmeRunBlock(t)
	data := t.TempDir()
	var out, errOut bytes.Buffer
	if code := runRun(context.Background(), []string{
		"--config", filepath.Join("../..", defaultConfig),
		"--scenario", filepath.Join("../..", defaultScenario),
		"--data", data,
	}, &out, &errOut); code != 0 {
		t.Fatalf("regiment run: exit %d\n%s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) < 1 || !strings.HasPrefix(lines[0], "cluster tenth, scenario tenth-day:") {
		t.Fatalf("regiment run printed no summary header:\n%s", out.String())
	}
	got := lines[1:]
	dbPath := filepath.Join(data, "regiment.db")
	for i := range got {
		got[i] = strings.ReplaceAll(got[i], dbPath, "data/regiment.db")
		got[i] = strings.ReplaceAll(got[i], "--data "+data, "--data data")
	}
	if len(got) != len(want) {
		t.Errorf("regiment run printed %d lines after the header, README.md %d:\n%s", len(got), len(want), out.String())
	}
	var columns []string
	for i := 0; i < min(len(got), len(want)); i++ {
		g, w := tableCells(got[i]), tableCells(want[i])
		if len(w) > 2 && w[0] == "regiment" && columns == nil {
			columns = w
		}
		if got[i] == want[i] {
			continue
		}
		if columns != nil && len(g) == len(columns)+1 && len(w) == len(columns)+1 && g[0] == w[0] {
			for c := 1; c < len(w); c++ {
				if g[c] != w[c] {
					t.Errorf("README make run table, row %q, column %s: README %s, regiment run %s", w[0], columns[c-1], w[c], g[c])
				}
			}
			continue
		}
		t.Errorf("README make run block, line %d:\n  README:       %q\n  regiment run: %q", i+2, want[i], got[i])
	}
	if t.Failed() {
		t.Logf("regiment run printed:\n%s", out.String())
	}
}
