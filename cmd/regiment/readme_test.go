package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

var (
	// readmeRow is a row of the README's commands table for a regiment
	// subcommand: | `regiment NAME REST` | what it does |
	readmeRow = regexp.MustCompile("^\\| `regiment ([a-z-]+)([^`]*)` \\|")
	// readmeFlag is a flag written in a table row.
	readmeFlag = regexp.MustCompile(`--([a-z][a-z-]*)`)
	// readmeSubs is an alternation of sub-subcommands: list|show|why.
	readmeSubs = regexp.MustCompile(`^\s*([a-z]+(?:\\?\|[a-z]+)+)`)
)

// helpOf returns what "regiment args... --help" prints, and fails unless it
// exits 0.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := dispatch(context.Background(), append(args, "--help"), &out, &errOut); code != 0 {
		t.Fatalf("regiment %s --help: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String() + errOut.String()
}

// The README's commands table lists every subcommand, and every flag and
// sub-subcommand it names is one the command's --help knows.
func TestReadmeCommandsTableMatchesHelp(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(readme), "\n") {
		if m := readmeRow.FindStringSubmatch(line); m != nil {
			rows[m[1]] = m[2]
		}
	}
	for _, c := range commands {
		rest, ok := rows[c.name]
		if !ok {
			t.Errorf("README's commands table has no row for `regiment %s`", c.name)
			continue
		}
		delete(rows, c.name)
		help := helpOf(t, c.name)
		var subs []string
		if m := readmeSubs.FindStringSubmatch(rest); m != nil {
			subs = strings.Split(strings.ReplaceAll(m[1], `\|`, "|"), "|")
		}
		for _, sub := range subs {
			if !regexp.MustCompile(`(?m)^\s+` + sub + `\b`).MatchString(help) {
				t.Errorf("README row `regiment %s`: %q is not a subcommand its --help lists", c.name, sub)
			}
		}
		for _, m := range readmeFlag.FindAllStringSubmatch(rest, -1) {
			flagName := m[1]
			found := strings.Contains(help, "  -"+flagName+" ") || strings.Contains(help, "  -"+flagName+"\n")
			for _, sub := range subs { // a flag of one of its subcommands
				found = found || strings.Contains(helpOf(t, c.name, sub), "  -"+flagName)
			}
			if !found {
				t.Errorf("README row `regiment %s`: --%s is not a flag of its --help", c.name, flagName)
			}
		}
	}
	for name := range rows {
		t.Errorf("README's commands table lists `regiment %s`, which is not a command", name)
	}
}
