package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/cli"
)

// Diagnostic is one problem in a config or scenario file, with where it is and
// how to fix it.
type Diagnostic struct {
	File      string
	Line      int    // line of the problem's start, from 1
	Column    int    // column of the start, from 1, in characters
	EndLine   int    // line of the problem's end
	EndColumn int    // column just past the end
	Summary   string // what is wrong, e.g. `Invalid scale_down_cooldown`
	Hint      string // why, and how to fix it, e.g. `"5x" is not a duration (example: "30s")`
}

// String formats d the way HCL and nats-server do:
//
//	cluster.hcl:14,15-19: Invalid scale_down_cooldown; "5x" is not a duration (example: "30s").
func (d Diagnostic) String() string {
	pos := fmt.Sprintf("%s:%d,%d-%d", d.File, d.Line, d.Column, d.EndColumn)
	if d.EndLine != d.Line {
		pos = fmt.Sprintf("%s:%d,%d-%d,%d", d.File, d.Line, d.Column, d.EndLine, d.EndColumn)
	}
	msg := d.Summary
	if d.Hint != "" {
		msg += "; " + d.Hint
	}
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "?") {
		msg += "."
	}
	return pos + ": " + msg
}

// Diagnostics is every problem found in one or more files, in file then
// position order. It is the error LoadFile, Parse, LoadScenarioFile and
// ParseScenario return when a file is invalid; use errors.As to inspect it.
type Diagnostics []Diagnostic

// Error lists the diagnostics one per line.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// add records a problem at r. The hint is formatted with args.
func (ds *Diagnostics) add(r hcl.Range, summary, hint string, args ...any) {
	if len(args) > 0 {
		hint = fmt.Sprintf(hint, args...)
	}
	// Hints quote values clipped (clip); this bounds what slips through,
	// HCL's own messages included.
	summary, hint = clipText(summary, maxSummary), clipText(hint, maxHint)
	*ds = append(*ds, Diagnostic{
		File:      r.Filename,
		Line:      r.Start.Line,
		Column:    r.Start.Column,
		EndLine:   r.End.Line,
		EndColumn: r.End.Column,
		Summary:   summary,
		Hint:      hint,
	})
}

// addHCL records HCL's own diagnostics (syntax errors, expressions that cannot
// be evaluated). Those without a subject are placed at the start of file.
func (ds *Diagnostics) addHCL(diags hcl.Diagnostics, file string) {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		r := hcl.Range{Filename: file, Start: hcl.InitialPos, End: hcl.InitialPos}
		if d.Subject != nil {
			r = *d.Subject
		}
		hint := strings.TrimSuffix(d.Detail, ".")
		if d.Summary == "Invalid single-argument block definition" {
			// Sketches write several attributes on one line (docs/architecture.md,
			// Configuration); HCL allows that only for a block with a single attribute.
			hint = "a block written on one line may hold only one attribute; put each attribute on its own line"
		}
		ds.add(r, d.Summary, "%s", hint)
	}
}

// err returns ds sorted by position as an error, or nil if there are none.
// Past maxDiagnostics, the rest are counted in one last diagnostic placed at
// the first of them: a file of a hundred thousand bad lines gets a screenful.
func (ds Diagnostics) err() error {
	if len(ds) == 0 {
		return nil
	}
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	if len(ds) > maxDiagnostics {
		more := ds[maxDiagnostics]
		more.Summary = "Too many problems"
		more.Hint = fmt.Sprintf("%d more are not shown; fix the ones above first", len(ds)-maxDiagnostics)
		return append(ds[:maxDiagnostics:maxDiagnostics], more)
	}
	return ds
}

// DidYouMean returns `did you mean "x"?` for the option x closest to name
// (case-insensitive edit distance), or "" if none is close enough to be a
// likely typo: the hint of config diagnostics and of the command line.
func DidYouMean(name string, options []string) string { return didYouMean(name, options) }

// didYouMean is DidYouMean: cli.Suggest's rule.
func didYouMean(name string, options []string) string {
	if best, ok := cli.Suggest(name, options); ok {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return ""
}

// nearest returns the option with the smallest edit distance to name
// (cli.Distance, ignoring case), and that distance. Ties go to the earlier
// option.
func nearest(name string, options []string) (string, int) {
	best, bestD := "", -1
	for _, o := range options {
		d := editDistance(strings.ToLower(name), strings.ToLower(o))
		if bestD < 0 || d < bestD {
			best, bestD = o, d
		}
	}
	return best, bestD
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int { return cli.Distance(a, b) }

// quoteList formats names as `"a", "b" and "c"` for hints.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
