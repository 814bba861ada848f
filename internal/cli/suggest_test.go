package cli

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestSuggestProposesOnlyCloseCandidates(t *testing.T) {
	flags := []string{"config", "scenario", "speed", "duration", "data", "log-level", "log-format"}
	tests := []struct {
		rule, in, want string
	}{
		{"a dropped letter is one edit", "durtion", "duration"},
		{"a swapped pair is two edits, still close", "duraiton", "duration"},
		{"case is ignored", "Duration", "duration"},
		{"a missing letter in a short name", "spee", "speed"},
		{"two edits in a short name still suggest", "dat", "data"},
		{"an exact match is no suggestion", "duration", ""},
		{"three edits in an 8-letter word are too far", "durxxxon", ""},
		{"a long word allows a third of its length", "log-formatxxx", "log-format"},
		{"a word unlike every flag gets none", "kubeconfig", ""},
		{"the closest of two similar flags wins", "log-formal", "log-format"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, ok := Suggest(tt.in, flags)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("Suggest(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
			}
		})
	}
}

func TestDistanceIsLevenshteinInRunes(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0},
		{"kitten", "sitting", 3}, {"ab", "ba", 2}, {"durtion", "duration", 1}, {"zürich", "zurich", 1},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestFlagErrorSuggestsTheClosestFlag(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Duration("duration", 0, "")
	fs.String("data", "", "")
	for _, tt := range []struct{ arg, want string }{
		{"--durtion=1h", "flag provided but not defined: --durtion; did you mean --duration?"},
		{"-durtion", "flag provided but not defined: --durtion; did you mean --duration?"},
		{"--zzzzzz", "flag provided but not defined: --zzzzzz"},
	} {
		err := FlagError(fs, fs.Parse([]string{tt.arg}))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.arg, err, tt.want)
		}
	}
	other := errors.New(`invalid value "x" for flag -duration: parse error`)
	if got := FlagError(fs, other); got != other {
		t.Errorf("FlagError changed %v into %v", other, got)
	}
}

func TestUnknownNameSuggestsOrLists(t *testing.T) {
	known := []string{"payment", "fraud", "search"}
	if err := UnknownName("domain", "paymnt", "c.hcl", known); err.Error() != `"paymnt" is not a domain of c.hcl; did you mean payment?` {
		t.Errorf("got %v", err)
	}
	if err := UnknownName("domain", "billing", "c.hcl", known); err.Error() != `"billing" is not a domain of c.hcl (domains: payment, fraud, search)` {
		t.Errorf("got %v", err)
	}
	if err := UnknownName("domain", "x", "the store", nil); !strings.Contains(err.Error(), "it has none") {
		t.Errorf("got %v", err)
	}
}
