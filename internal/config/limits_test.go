package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deep is n levels of list brackets.
func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestParseRejectsDeepNesting pins the nesting limit: each hostile expression
// is one "Nesting too deep" diagnostic at the byte that crosses MaxNesting
// (the cluster block's brace is one level), before the parser (which would exhaust the stack on most of them) runs.
func TestParseRejectsDeepNesting(t *testing.T) {
	const at = "  capacity_cores = " // the expression starts at line 2, column 20
	cases := []struct {
		name string
		expr string
		col  int // of the byte that crosses the limit
	}{
		{"a hundred thousand nested lists", deep(100000), 20 + MaxNesting - 1},
		{"just over the limit with the cluster block's brace", deep(MaxNesting), 20 + MaxNesting - 1},
		{"parentheses and braces count too", strings.Repeat("({a=", 40) + "1" + strings.Repeat("})", 40), 20 + 4*(MaxNesting/2-1) + 1},
		{"template interpolations nest", `"` + strings.Repeat(`${"`, 100) + strings.Repeat(`"}`, 100) + `"`, 20 + 1 + 3*(MaxNesting-1) + 1},
		{"nested template directives (the template parser recurses on each)", `"` + strings.Repeat("%{ if true }", 1000) + strings.Repeat("%{ endif }", 1000) + `"`, 20 + 1 + 12*(MaxNesting-2) + 1},
		{"a run of unary minus", strings.Repeat("-", 100000) + "1", 20 + MaxNesting - 1},
		{"a run of negations, spaced", strings.Repeat("! ", 1000) + "true", 20 + 2*(MaxNesting-1)},
		{"a chain of additions (the evaluator recurses on each)", strings.Repeat("1+", 200000) + "1", 20 + 2*(MaxNesting-1) + 1},
		{"a chain of splats (the evaluator recurses on each)", "[1]" + strings.Repeat("[*]", 100000), 20 + 3 + 3*(MaxNesting-3) + 1},
		{"a chain of attribute accesses", "{a = 1}" + strings.Repeat(".a", 100000), 20 + 7 + 2*(MaxNesting-1)},
		{"a chain of computed indexes", "[1]" + strings.Repeat("[(0)]", 100000), 20 + 3 + 5*(MaxNesting-3) + 1},
		{"a chain of conditionals", strings.Repeat("true ? 1 : ", 10000) + "1", 20 + 11*(MaxNesting-1) + 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, at+"100", at+tc.expr, 1)
			for _, parse := range []struct {
				name string
				fn   func() error
			}{
				{"Parse", func() error { _, err := Parse([]byte(src), "cluster.hcl"); return err }},
				{"ParseScenario", func() error { _, err := ParseScenario([]byte(src), "cluster.hcl", nil); return err }},
				{"Relocate", func() error { _, err := Relocate([]byte(src), "cluster.hcl", ""); return err }},
			} {
				ds := diagnostics(t, parse.fn())
				if len(ds) != 1 || ds[0].Summary != "Nesting too deep" || ds[0].Line != 2 || ds[0].Column != tc.col {
					t.Errorf("%s: got %v, want one Nesting too deep at 2,%d", parse.name, ds, tc.col)
				}
			}
		})
	}
}

// TestNestingCountsOperatorsOverLines: HCL reads an expression on over
// newlines in brackets, parentheses and interpolations, so operators there
// add up across lines (they did not in interpolations, and "${1+\n1+\n...}"
// ran the evaluator out of memory).
func TestNestingCountsOperatorsOverLines(t *testing.T) {
	for _, expr := range []string{
		`"${` + strings.Repeat("1+\n", 100000) + `1}"`,
		"(" + strings.Repeat("1+\n", 100000) + "1)",
		"[" + strings.Repeat("1+\n", 100000) + "1]",
	} {
		src := strings.Replace(base, "capacity_cores = 100", "capacity_cores = "+expr, 1)
		_, err := Parse([]byte(src), "cluster.hcl")
		ds := diagnostics(t, err)
		// The cluster block, the opening and 62 operators, each on its own line.
		if len(ds) != 1 || ds[0].Summary != "Nesting too deep" || ds[0].Line != 2+MaxNesting-2 {
			t.Errorf("%.10q...: got %v, want one Nesting too deep at line %d", expr, ds, MaxNesting)
		}
	}
}

// TestNestingScanSkipsStringsAndComments: brackets and operators in strings,
// comments and heredocs do not count, items separated by commas or lines do
// not add up, and a file at the limit parses.
func TestNestingScanSkipsStringsAndComments(t *testing.T) {
	cases := []struct{ name, add string }{
		{"brackets in a comment", "# " + deep(200) + strings.Repeat("(", 200) + "\n// " + strings.Repeat("{", 200) + "\n/* " + strings.Repeat("[", 200) + " */\n"},
		{"brackets and operators in a string", "prometheus {\n  url = \"http://p:9090/" + strings.Repeat("(-", 200) + "\"\n}\n"},
		{"escaped quotes and template escapes in a string", "prometheus {\n  url = \"http://p:9090/\\\"" + strings.Repeat("$${[", 200) + "\"\n}\n"},
		{"a heredoc", "prometheus {\n  url = <<EOT\nhttp://p:9090/" + strings.Repeat("[!", 200) + "\nEOT\n}\n"},
		{"balanced template directives in sequence", "prometheus {\n  url = \"http://p:9090/" + strings.Repeat("%{ if true }x%{ else }y%{ endif }%{for a in [1]}${a}%{endfor}", 100) + "\"\n}\n"},
		{"operators on separate lines and items", "reward {\n  commander {\n" + strings.Repeat("    cost = 1 - 0.5\n", 100) + "  }\n}\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ds Diagnostics
			if !checkBounds([]byte(base+tc.add), "cluster.hcl", &ds) {
				t.Fatalf("rejected: %v", ds)
			}
		})
	}
	src := strings.Replace(base, "capacity_cores = 100", "capacity_cores = "+strings.Repeat("(", MaxNesting-2)+"100"+strings.Repeat(")", MaxNesting-2), 1)
	if _, err := Parse([]byte(src), "cluster.hcl"); err != nil {
		t.Errorf("nesting within the limit: %v", err)
	}
}

func TestParseRejectsLargeFiles(t *testing.T) {
	src := base + "# " + strings.Repeat("x", MaxFileSize) + "\n"
	for name, err := range map[string]error{
		"config":   func() error { _, err := Parse([]byte(src), "cluster.hcl"); return err }(),
		"scenario": func() error { _, err := ParseScenario([]byte(src), "cluster.hcl", nil); return err }(),
	} {
		ds := diagnostics(t, err)
		if len(ds) != 1 || ds[0].Summary != "File too large" || ds[0].Line != 12 {
			t.Errorf("%s: got %v, want one File too large at line 12", name, ds)
		}
	}
	// LoadFile reads no more than the limit: /dev/zero would never end.
	path := filepath.Join(t.TempDir(), "big.hcl")
	if err := os.WriteFile(path, []byte(src+src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "File too large") {
		t.Errorf("LoadFile: got %v, want File too large", err)
	}
	if _, err := LoadScenarioFile(path, nil); err == nil || !strings.Contains(err.Error(), "File too large") {
		t.Errorf("LoadScenarioFile: got %v, want File too large", err)
	}
}

// TestDiagnosticsQuoteBoundedValues: a bad value of half a megabyte yields a
// diagnostic of a line, and a file of many problems a bounded list.
func TestDiagnosticsQuoteBoundedValues(t *testing.T) {
	long := strings.Repeat("é", 250000)
	for _, edit := range [][]string{
		{`service_time    = "10ms"`, `service_time    = "` + long + `"`},
		{"capacity_cores = 100", `capacity_cores = "` + long + `"`},
		{`apps "web"`, `apps "` + long + `"`},
		{"capacity_cores = 100", "capacity_cores = 100\n  " + strings.Repeat("k", 500000) + " = 1"},
		{"cpu_per_replica = 0.5", "cpu_per_replica = 0.5\n    count = 1." + strings.Repeat("1", 500000)},
	} {
		_, err := Parse([]byte(strings.Replace(base, edit[0], edit[1], 1)), "cluster.hcl")
		if err == nil {
			t.Errorf("%.40s: no error", edit[1])
		} else if len(err.Error()) > 1000 {
			t.Errorf("%.40s: got %d bytes of diagnostics, want a line", edit[1], len(err.Error()))
		}
	}
	many := base + strings.Repeat("zz = 1\n", 10000) // HCL reports each of the 9999 redefinitions
	_, err := Parse([]byte(many), "cluster.hcl")
	ds := diagnostics(t, err)
	if len(ds) != maxDiagnostics+1 || ds[maxDiagnostics].Summary != "Too many problems" || !strings.Contains(ds[maxDiagnostics].Hint, "9799 more") {
		t.Errorf("got %d diagnostics ending %v, want %d and a count of the rest", len(ds), ds[len(ds)-1], maxDiagnostics+1)
	}
	if got := clip(strings.Repeat("a", 100)); got != `"`+strings.Repeat("a", maxQuoted)+`"... (100 bytes)` {
		t.Errorf("clip: %s", got)
	}
}

// FuzzNestingNeverUnderCounts maps arbitrary bytes onto code without strings,
// comments or heredocs (brackets, operators, names, separators) and checks
// that the scan never lets through a text whose brackets alone nest deeper
// than MaxNesting: an under-count could let a file crash a daemon.
func FuzzNestingNeverUnderCounts(f *testing.F) {
	f.Add([]byte(strings.Repeat("\x00", 70)))
	f.Add([]byte(strings.Repeat("\x00\x06", 40)))
	f.Add([]byte("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d"))
	const alphabet = "[({])}+-!*a1,\n =?:.&|<>%"
	f.Fuzz(func(t *testing.T, raw []byte) {
		src := make([]byte, len(raw))
		depth, deepest := 0, 0
		for i, b := range raw {
			c := alphabet[int(b)%len(alphabet)]
			if c == '<' && i > 0 && src[i-1] == '<' {
				c = '>' // "<<" would open a heredoc, whose brackets do not nest
			}
			src[i] = c
			switch c {
			case '[', '(', '{':
				depth++
				deepest = max(deepest, depth)
			case ']', ')', '}':
				depth = max(depth-1, 0)
			}
		}
		if deepest > MaxNesting && tooDeep(src) < 0 {
			t.Fatalf("brackets nest %d deep, the scan let it through: %q", deepest, src)
		}
	})
}

// TestLoadRefusesWhatIsNotARegularFile: a config, scenario or trace path
// naming a FIFO, a device or a directory is refused at once with its path;
// a FIFO without a writer would block the open for good.
func TestLoadRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "cluster.hcl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{"/dev/zero", "a character device"},
		{dir, "a directory"},
	} {
		want := p.path + ": is " + p.kind + ", not a regular file"
		start := time.Now()
		for name, load := range map[string]func() error{
			"LoadFile":         func() error { _, err := LoadFile(p.path); return err },
			"LoadScenarioFile": func() error { _, err := LoadScenarioFile(p.path, nil); return err },
			"ReadPortable":     func() error { _, err := ReadPortable(p.path); return err },
		} {
			if err := load(); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s(%s): got %v, want %q", name, p.path, err, want)
			}
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s took %v", p.path, d)
		}
	}

	// A trace that is not a regular file is a diagnostic at its attribute.
	src := strings.Replace(scenarioBase, `"traces/timeseries.csv"`, `"`+fifo+`"`, 1)
	_, err := ParseScenario([]byte(src), filepath.Join("testdata", "s.hcl"), nil)
	ds := diagnostics(t, err)
	if len(ds) != 1 || ds[0].Summary != "Invalid trace" || ds[0].Line != 4 ||
		!strings.Contains(ds[0].Hint, fifo+`" is a named pipe (FIFO), not a trace file`) {
		t.Errorf("a FIFO trace: got %v, want one Invalid trace at line 4", ds)
	}
}
