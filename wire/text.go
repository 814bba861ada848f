package wire

import (
	"strings"
	"unicode"
)

// CleanText is operator text (an override's by and reason, a ledger
// detail) made safe to store and to print on a terminal: invalid UTF-8
// becomes U+FFFD; control characters (newlines, tabs, escape sequences'
// ESC, C1 controls, DEL) and the bidirectional overrides that reorder what a
// terminal shows become a space; the result is clipped to n bytes (n <= 0:
// no limit). Text without any of these is returned unchanged.
func CleanText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || isBidiControl(r) {
			return ' '
		}
		return r
	}, s)
	if n > 0 {
		s = Clip(s, n)
	}
	return s
}

// isBidiControl reports the explicit directional formatting characters
// (Unicode bidi embeddings, overrides and isolates).
func isBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') || r == '\u200E' || r == '\u200F' || r == '\u061C'
}
