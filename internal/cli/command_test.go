package cli

import (
	"bytes"
	"testing"
)

// TestCommandErrorsNameTheCommand: usage errors, failures and unknown
// subcommands name the command and where its help is, and a subcommand's
// flag set prints its help on --help and refuses arguments.
func TestCommandErrorsNameTheCommand(t *testing.T) {
	var b bytes.Buffer
	if code := UsageError(&b, "regiment sim", "--x %d", 1); code != 2 || b.String() != "regiment sim: --x 1\nRun 'regiment sim --help' for usage.\n" {
		t.Errorf("UsageError: %d %q", code, b.String())
	}
	b.Reset()
	if code := Failer("regiment sim", &b)(bytes.ErrTooLarge); code != 1 || b.String() != "regiment sim: bytes.Buffer: too large\n" {
		t.Errorf("Failer: %d %q", code, b.String())
	}
	b.Reset()
	UnknownSubcommand(&b, "regiment", "evl", []string{"eval", "sim"})
	if want := "regiment: unknown command \"evl\"; did you mean eval?\nRun 'regiment --help' for usage.\n"; b.String() != want {
		t.Errorf("UnknownSubcommand: %q, want %q", b.String(), want)
	}
	b.Reset()
	UnknownSubcommand(&b, "regiment kube", "x", []string{"restore"})
	if want := "regiment kube: unknown subcommand \"x\": want restore\nRun 'regiment kube --help' for usage.\n"; b.String() != want {
		t.Errorf("UnknownSubcommand: %q, want %q", b.String(), want)
	}

	var stdout, stderr bytes.Buffer
	fs := NewFlagSet("regiment sim", "Usage: regiment sim\n", &stderr)
	fs.Int("seeds", 1, "runs")
	if code, done := ParseFlags(fs, []string{"--sedes", "2"}); !done || code != 2 ||
		stderr.String() != "regiment sim: flag provided but not defined: --sedes; did you mean --seeds?\nRun 'regiment sim --help' for usage.\n" {
		t.Errorf("ParseFlags(misspelt): %d %v %q", code, done, stderr.String())
	}
	stderr.Reset()
	if code := UsageFailer(fs, &stderr)("need %s", "--config"); code != 2 || !bytes.HasPrefix(stderr.Bytes(), []byte("regiment sim: need --config\nUsage: regiment sim\n")) {
		t.Errorf("UsageFailer: %d %q", code, stderr.String())
	}

	stderr.Reset()
	c := NewSub("regiment episodes list", "Usage: list\n", &stderr)
	if code, ok := c.Parse([]string{"--help"}, &stdout); ok || code != 0 || stdout.String() != "Usage: list\n\nFlags:\n" {
		t.Errorf("Sub --help: %d %v %q", code, ok, stdout.String())
	}
	if code, ok := c.Parse([]string{"extra"}, &stdout); ok || code != 2 || stderr.String() != "regiment episodes list: unexpected argument \"extra\"\nRun 'regiment episodes list --help' for usage.\n" {
		t.Errorf("Sub with an argument: %d %v %q", code, ok, stderr.String())
	}
}
