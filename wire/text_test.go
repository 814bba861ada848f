package wire

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanTextLeavesNoControlCharacters(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text unchanged", "INC-4411: hold during the deploy", "INC-4411: hold during the deploy"},
		{"newline forging a second line", "alice\n2026-01-01 forged line", "alice 2026-01-01 forged line"},
		{"terminal escape", "bob\x1b[2J\x1b[31mred", "bob [2J [31mred"},
		{"carriage return and tab", "a\rb\tc", "a b c"},
		{"C1 control and DEL", "x\u009by\x7f", "x y "},
		{"bidi override", "evil\u202Etxt.exe", "evil txt.exe"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"non-ASCII kept", "Zoë über 東京", "Zoë über 東京"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CleanText(tc.in, 0); got != tc.want {
				t.Fatalf("CleanText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCleanTextIsBounded(t *testing.T) {
	got := CleanText(strings.Repeat("é", 1000), MaxReason)
	if len(got) > MaxReason || !utf8.ValidString(got) {
		t.Fatalf("len %d (max %d), valid %v", len(got), MaxReason, utf8.ValidString(got))
	}
}
