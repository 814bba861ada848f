package cli

import (
	"flag"
	"fmt"
	"strings"
)

// Suggest is the candidate closest to s by edit distance (Levenshtein:
// insertions, deletions and substitutions, each 1, and a transposition of
// neighbours, 1), when one is close enough to be a misspelling: at most 2
// edits, and fewer than half of s's length. Ties go to the earlier
// candidate. An exact match is not a suggestion.
func Suggest(s string, candidates []string) (string, bool) {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == s {
			return "", false
		}
		d := distance(s, c)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > 2 || 2*bestD >= len(s) {
		return "", false
	}
	return best, true
}

// distance is the optimal string alignment distance between a and b, in
// bytes: Levenshtein with transpositions of adjacent bytes.
func distance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j]; three rows suffice.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Flags is the names of fs's flags.
func Flags(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// FlagError is err, from fs.Parse, with a suggestion when it is the flag
// package's "flag provided but not defined: -durtion" and a flag of fs is
// close: "flag provided but not defined: --durtion; did you mean
// --duration?". Other errors are returned as they are.
func FlagError(fs *flag.FlagSet, err error) error {
	const prefix = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	name := strings.TrimPrefix(msg, prefix)
	if s, ok := Suggest(name, Flags(fs)); ok {
		return fmt.Errorf("flag provided but not defined: --%s; did you mean --%s?", name, s)
	}
	return fmt.Errorf("flag provided but not defined: --%s", name)
}

// UnknownName is the error for a name that is not one of known (a domain
// of a config, an app of a store): it names what it is not, suggests the
// closest when one is close, and lists the rest otherwise. what is "domain"
// or "app"; where, e.g. "cluster.hcl" or "the store".
func UnknownName(what, name, where string, known []string) error {
	if s, ok := Suggest(name, known); ok {
		return fmt.Errorf("%q is not a %s of %s; did you mean %s?", name, what, where, s)
	}
	if len(known) == 0 {
		return fmt.Errorf("%q is not a %s of %s: it has none", name, what, where)
	}
	return fmt.Errorf("%q is not a %s of %s (%ss: %s)", name, what, where, what, strings.Join(known, ", "))
}
