package cli

import (
	"flag"
	"fmt"
	"strings"
)

// Suggest is the candidate closest to s by edit distance (Distance,
// ignoring case), when one is close enough to be a misspelling: at most
// max(2, len(s)/3) edits. Ties go to the earlier candidate. A candidate
// equal to s is not a suggestion. It is the one rule of every "did you
// mean" in Regiment: the command lines' and the config files'
// (config.DidYouMean).
func Suggest(s string, candidates []string) (string, bool) {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == s {
			return "", false
		}
		d := Distance(strings.ToLower(s), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(2, len(s)/3) {
		return "", false
	}
	return best, true
}

// Distance is the Levenshtein distance between a and b, in runes:
// insertions, deletions and substitutions, each 1.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
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
