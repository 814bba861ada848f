package config

import (
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"

	"github.com/regimentd/regiment/internal/infile"
)

// This file bounds what reaches the HCL parser. The parser and the evaluator
// recurse once per nesting level, and Go cannot recover from exhausting its
// stack: x = [[[...]]] a hundred thousand levels deep kills the process
// (a Commander on SIGHUP, not just the reload). So a file is measured by a
// cheap byte scan before it is parsed, and rejected with a located
// diagnostic when it is too large or too deeply nested.

const (
	// MaxFileSize is the largest config or scenario file read, in bytes:
	// 60 times the largest shipped config (examples/seedscale.hcl, 8.5 KB,
	// 25 app sets). The HCL parser takes about 380 bytes of memory per byte
	// of a dense file (a 1 MiB list of numbers: 370 MB and 2 s), so this
	// bounds a reload to about 190 MB and a second.
	MaxFileSize = 512 << 10
	// MaxNesting is the deepest nesting a file may have (tooDeep says what
	// counts). The deepest shipped file nests 4; 64 leaves room for any hand-written
	// config and keeps the parser's recursion a few hundred kilobytes of stack.
	MaxNesting = 64
	// maxQuoted is the most characters of a user's value quoted in a hint.
	maxQuoted = 80
	// maxSummary and maxHint bound a diagnostic's texts, in bytes.
	maxSummary, maxHint = 200, 600
	// maxDiagnostics is the most diagnostics one error lists.
	maxDiagnostics = 200
)

// ReadFile reads the config or scenario file at path for Parse or
// ParseScenario: at most MaxFileSize+1 bytes of it, so that a huge file
// costs no more memory than a file just too large (Parse reports it, at
// the byte where the limit is crossed), and only if it is a regular file: a
// FIFO, a device or a directory is refused at once, with its path, and
// never blocks (package infile).
func ReadFile(path string) ([]byte, error) {
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// checkBounds reports src if it is larger than MaxFileSize or nests deeper
// than MaxNesting, at the byte where the limit is crossed. It reports nothing
// for a file within both; such a file may still be invalid HCL.
func checkBounds(src []byte, filename string, ds *Diagnostics) bool {
	if len(src) > MaxFileSize {
		pos := position(src, MaxFileSize)
		ds.add(hcl.Range{Filename: filename, Start: pos, End: pos}, "File too large",
			"config and scenario files are at most %d bytes (512 KiB); this one is longer", MaxFileSize)
		return false
	}
	if at := tooDeep(src); at >= 0 {
		pos := position(src, at)
		end := pos
		end.Column++
		end.Byte++
		ds.add(hcl.Range{Filename: filename, Start: pos, End: end}, "Nesting too deep",
			"expressions may nest at most %d levels of brackets, braces, parentheses and operators; this one nests deeper here", MaxNesting)
		return false
	}
	return true
}

// position is the hcl.Pos of byte offset off in src, columns counted in
// characters as HCL counts them (close enough for invalid UTF-8).
func position(src []byte, off int) hcl.Pos {
	off = min(off, len(src))
	line, col := 1, 1
	for i := 0; i < off; {
		if src[i] == '\n' {
			line, col = line+1, 1
			i++
			continue
		}
		_, n := utf8.DecodeRune(src[i:off])
		i += n
		col++
	}
	return hcl.Pos{Line: line, Column: col, Byte: off}
}

// scanner modes: the scan is in expression code, a quoted string or a
// heredoc. Each template interpolation (${ or %{) in a string or heredoc
// opens code again, one level deeper.
const (
	modeCode = iota
	modeString
	modeHeredoc
)

// tooDeep returns the offset of the first byte at which src nests deeper
// than MaxNesting, or -1. It is a lexer of just enough HCL to tell code from
// strings and comments. Where it is unsure it counts: an over-count rejects
// an odd file, an under-count could crash a daemon.
//
// The depth at a byte is the open brackets, braces, parentheses, template
// interpolations and template if and for directives around it plus the operators (+ - * / % ! == != <
// > <= >= && || ?), attribute accesses, indexes and splats written so far in
// each of their current items: the parser
// recurses on each unary operator and conditional, and the evaluator on each
// binary operator, so 1+1+...+1 with half a million terms is as deep as half
// a million brackets. An item ends at a comma, and at a newline in a block
// body, an object or the top level (not in brackets, parentheses or an
// interpolation, where HCL reads on over newlines).
func tooDeep(src []byte) int {
	type frame struct {
		mode   int
		open   byte   // the code frame's opening bracket, '$' for an interpolation or directive, 0 for the top level
		ops    int    // operators in the frame's current item
		dirs   int    // a template's open if and for directives
		marker []byte // a heredoc's closing marker
	}
	stack := []frame{{mode: modeCode}}
	depth := 0      // open brackets and interpolations
	ops := 0        // operators in the current items of every open code frame
	dirs := 0       // open template directives (%{if}, %{for}) in every template
	prev := byte(0) // the last code byte that is not a space
	push := func(f frame) { stack = append(stack, f) }
	for i := 0; i < len(src); i++ {
		top := &stack[len(stack)-1]
		b := src[i]
		switch top.mode {
		case modeString, modeHeredoc:
			if top.mode == modeHeredoc && (i == 0 || src[i-1] == '\n') && closesHeredoc(src[i:], top.marker) {
				dirs -= top.dirs
				stack = stack[:len(stack)-1]
				prev = '"'
				continue
			}
			switch {
			case top.mode == modeString && b == '\\':
				i++ // the escaped byte
			case top.mode == modeString && b == '"':
				dirs -= top.dirs
				stack = stack[:len(stack)-1]
				prev = '"'
			case (b == '$' || b == '%') && i+1 < len(src) && src[i+1] == b:
				i++ // $$ and %% escape a template sequence
			case (b == '$' || b == '%') && i+1 < len(src) && src[i+1] == '{':
				if b == '%' {
					// The template parser recurses on each nested if and for.
					switch directive(src[i+2:]) {
					case "if", "for":
						top.dirs++
						dirs++
					case "endif", "endfor":
						if top.dirs > 0 {
							top.dirs--
							dirs--
						}
					}
				}
				i++
				depth++
				push(frame{mode: modeCode, open: '$'})
				if depth+ops+dirs > MaxNesting {
					return i
				}
			}
			continue
		}

		// Code.
		op := false
		switch b {
		case '{', '[', '(':
			if b == '[' && endsOperand(prev) {
				// An index or splat: the evaluator recurses on each of a chain.
				top.ops++
				ops++
			}
			depth++
			push(frame{mode: modeCode, open: b})
		case '}', ']', ')':
			if len(stack) > 1 {
				depth--
				ops -= top.ops
				stack = stack[:len(stack)-1]
			}
		case ',':
			ops -= top.ops
			top.ops = 0
		case '\n':
			// HCL ignores newlines in brackets, parentheses and templates'
			// sequences: an expression goes on over them.
			if top.open == '{' || top.open == 0 {
				ops -= top.ops
				top.ops = 0
			}
		case '"':
			push(frame{mode: modeString})
		case '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case '/':
			switch {
			case i+1 < len(src) && src[i+1] == '/':
				for i+1 < len(src) && src[i+1] != '\n' {
					i++
				}
			case i+1 < len(src) && src[i+1] == '*':
				end := indexFrom(src, i+2, "*/")
				if end < 0 {
					return -1 // an unterminated comment: HCL reports it
				}
				i = end + 1
			default:
				op = true
			}
		case '<':
			if i+1 < len(src) && src[i+1] == '<' {
				if marker, next, ok := heredocStart(src, i+2); ok {
					push(frame{mode: modeHeredoc, marker: marker})
					i = next - 1
					break
				}
			}
			op = true
		case '=', '&', '|':
			if i+1 < len(src) && src[i+1] == b {
				i++
				op = true
			}
		case '+', '-', '*', '%', '!', '>', '?', '.':
			op = true // '.': an attribute access or splat (or a decimal point)
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			prev = b
		}
		if op {
			top.ops++
			ops++
		}
		if depth+ops+dirs > MaxNesting {
			return i
		}
	}
	return -1
}

// endsOperand reports whether b, the last code byte before a '[', can end an
// operand, making the bracket an index or splat rather than a tuple.
func endsOperand(b byte) bool {
	return b == ']' || b == ')' || b == '}' || b == '"' || b == '_' ||
		b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// directive is the keyword that starts a template directive's body src,
// after an optional "~" and spaces.
func directive(src []byte) string {
	i := 0
	for i < len(src) && (src[i] == '~' || src[i] == ' ' || src[i] == '\t') {
		i++
	}
	j := i
	for j < len(src) && src[j] >= 'a' && src[j] <= 'z' {
		j++
	}
	return string(src[i:j])
}

// heredocStart reads the marker of a heredoc whose "<<" ends just before
// src[i]: an optional "-", an identifier and a newline. It returns the marker
// and the offset of the heredoc's first line.
func heredocStart(src []byte, i int) (marker []byte, next int, ok bool) {
	if i < len(src) && src[i] == '-' {
		i++
	}
	start := i
	for i < len(src) && (src[i] == '_' || src[i] >= 'a' && src[i] <= 'z' || src[i] >= 'A' && src[i] <= 'Z' || src[i] >= '0' && src[i] <= '9') {
		i++
	}
	if i == start {
		return nil, 0, false
	}
	marker = src[start:i]
	if i < len(src) && src[i] == '\r' {
		i++
	}
	if i >= len(src) || src[i] != '\n' {
		return nil, 0, false
	}
	return marker, i + 1, true
}

// closesHeredoc reports whether line (the rest of src from a line start) is
// the heredoc's closing marker, optionally indented.
func closesHeredoc(line, marker []byte) bool {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if len(line)-i < len(marker) || string(line[i:i+len(marker)]) != string(marker) {
		return false
	}
	i += len(marker)
	return i == len(line) || line[i] == '\n' || line[i] == '\r'
}

func indexFrom(src []byte, from int, sep string) int {
	for i := from; i+len(sep) <= len(src); i++ {
		if string(src[i:i+len(sep)]) == sep {
			return i
		}
	}
	return -1
}

// clip quotes s for a hint, keeping at most maxQuoted characters of it:
// a bad 50 MB string yields a line of diagnostics, not 100 MB.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == maxQuoted {
			return strconv.Quote(s[:i]) + fmt.Sprintf("... (%d bytes)", len(s))
		}
		n++
	}
	return strconv.Quote(s)
}

// clipText cuts s to at most n bytes, at a character boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
