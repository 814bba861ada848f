package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Built-in policy names; any other commander.policy or soldier.policy is a
// checkpoint path.
const (
	forecastPolicy     = "forecast"
	proportionalPolicy = "proportional"
)

// resolvePolicies makes a checkpoint path in commander.policy or
// soldier.policy relative to the directory of the config file (filename)
// unless it is absolute, and reports a path that names no readable regular
// file at the attribute, with the built-in names as the alternative.
func resolvePolicies(cfg *domains.Config, h *configHCL, filename string, ds *Diagnostics) {
	dir := filepath.Dir(filename)
	check := func(p *string, a *stringAttr, builtin, level string) {
		if !a.ok() || *p == builtin || *p == "" {
			return
		}
		path := *p
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			ds.add(a.Range, "Missing checkpoint", "%s policy %q is neither %q nor a checkpoint file: %v (a relative path is relative to the config file's directory)", level, *p, builtin, err)
			return
		case !fi.Mode().IsRegular():
			ds.add(a.Range, "Invalid checkpoint", "%s policy %q is %s, not a checkpoint file", level, *p, fi.Mode().Type())
			return
		}
		*p = path
	}
	check(&cfg.Commander.Policy, &h.Commander.Policy, forecastPolicy, "commander")
	check(&cfg.Soldier.Policy, &h.Soldier.Policy, proportionalPolicy, "soldier")
}

// Relocate returns src, the config file filename, rewritten to be written
// at to: a relative checkpoint path in commander.policy or soldier.policy
// is rebased from filename's directory to to's, so that the copy names the
// same checkpoint files; with to "" it is made absolute (a copy that can go
// anywhere). Only those string literals change, byte for byte the rest of
// src is kept. Built-in names, absolute paths and policies that are not a
// plain quoted string are left as they are.
func Relocate(src []byte, filename, to string) ([]byte, error) {
	var ds Diagnostics
	if !checkBounds(src, filename, &ds) {
		return nil, ds.err()
	}
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse %s: %s", filename, diags.Error())
	}
	from, err := filepath.Abs(filepath.Dir(filename))
	if err != nil {
		return nil, err
	}
	dest := ""
	if to != "" {
		if dest, err = filepath.Abs(filepath.Dir(to)); err != nil {
			return nil, err
		}
	}
	builtin := map[string]string{"commander": forecastPolicy, "soldier": proportionalPolicy}
	type splice struct {
		r    hcl.Range
		text string
	}
	var edits []splice
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		name, ok := builtin[b.Type]
		a := b.Body.Attributes["policy"]
		if !ok || a == nil {
			continue
		}
		r := a.Expr.Range()
		lit := string(src[r.Start.Byte:r.End.Byte])
		p, ok := plainQuoted(lit)
		if !ok || p == "" || p == name || filepath.IsAbs(p) {
			continue
		}
		path := filepath.Join(from, p)
		if dest != "" {
			if rel, err := filepath.Rel(dest, path); err == nil {
				path = rel
			}
		}
		if q := `"` + filepath.ToSlash(path) + `"`; plainQuotedOK(q) {
			edits = append(edits, splice{r, q})
		}
	}
	out := make([]byte, 0, len(src)+64)
	last := 0
	for _, e := range edits { // blocks come in file order
		out = append(append(out, src[last:e.r.Start.Byte]...), e.text...)
		last = e.r.End.Byte
	}
	return append(out, src[last:]...), nil
}

// plainQuoted is the string in lit when lit is one quoted literal without
// escapes or template sequences.
func plainQuoted(lit string) (string, bool) {
	if !plainQuotedOK(lit) {
		return "", false
	}
	return lit[1 : len(lit)-1], true
}

// plainQuotedOK reports whether lit is a quoted string with nothing HCL
// would read differently from Go: no escape, quote, template sequence or
// newline inside.
func plainQuotedOK(lit string) bool {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return false
	}
	inner := lit[1 : len(lit)-1]
	return !strings.ContainsAny(inner, "\\\"$%\n")
}

// ReadPortable reads the config file at path with its relative checkpoint
// paths made absolute (Relocate to ""): a source that can be edited and
// written anywhere, as tools and tests that template a config do.
func ReadPortable(path string) ([]byte, error) {
	src, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Relocate(src, path, "")
}
