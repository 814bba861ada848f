package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// UsageError reports a usage problem of the command cmd ("regiment
// episodes list", "soldier") and returns exit code 2.
func UsageError(stderr io.Writer, cmd, format string, args ...any) int {
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", cmd, fmt.Sprintf(format, args...), cmd)
	return 2
}

// Failer returns what reports err as the command cmd's failure on stderr
// and returns exit code 1.
func Failer(cmd string, stderr io.Writer) func(error) int {
	return func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return 1
	}
}

// UnknownSubcommand reports that sub is not one of subs of the command cmd
// ("regiment", "regiment episodes"), suggesting the closest, and returns
// exit code 2. A binary's own subcommands are its commands.
func UnknownSubcommand(stderr io.Writer, cmd, sub string, subs []string) int {
	hint := ": want " + strings.Join(subs, ", ")
	if s, ok := Suggest(sub, subs); ok {
		hint = "; did you mean " + s + "?"
	}
	what := "subcommand"
	if !strings.Contains(cmd, " ") {
		what = "command"
	}
	fmt.Fprintf(stderr, "%s: unknown %s %q%s\nRun '%s --help' for usage.\n", cmd, what, sub, hint, cmd)
	return 2
}

// NewFlagSet is the flag set of the command cmd ("regiment run"), printing
// usage and then the flags' defaults to stderr on --help or a usage error.
func NewFlagSet(cmd, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// UsageFailer returns what reports a usage problem of fs's command (a
// NewFlagSet): the problem, then the usage; it returns exit code 2.
func UsageFailer(fs *flag.FlagSet, stderr io.Writer) func(format string, args ...any) int {
	return func(format string, args ...any) int {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
		fs.Usage()
		return 2
	}
}

// ParseFlags parses args into fs (a NewFlagSet). done means the command
// returns code now: 0 after --help (fs has printed its usage), 2 on a usage
// error (printed). A misspelt flag names the closest (FlagError) instead of
// the usage.
func ParseFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		usage()
		return 0, true
	case err != nil:
		return UsageError(out, fs.Name(), "%v", FlagError(fs, err)), true
	}
	return 0, false
}

// Sub is a subcommand whose flag set is silent (io.Discard): Parse prints
// its help (Help, then the flags) and usage errors itself.
type Sub struct {
	Cmd    string // "regiment episodes list"
	FS     *flag.FlagSet
	Help   string // usage line, description and examples; flags are appended
	Stderr io.Writer
}

// NewSub is the subcommand cmd with its help.
func NewSub(cmd, help string, stderr io.Writer) *Sub {
	c := &Sub{Cmd: cmd, Help: help, Stderr: stderr, FS: flag.NewFlagSet(cmd, flag.ContinueOnError)}
	c.FS.SetOutput(io.Discard) // parse errors and help are printed by Parse
	c.FS.Usage = func() {}
	return c
}

// Parse parses args, which take no arguments but flags. ok false means
// return code now: 0 after --help (printed to stdout), 2 on a usage error.
func (c *Sub) Parse(args []string, stdout io.Writer) (code int, ok bool) {
	err := c.FS.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.PrintHelp(stdout)
		return 0, false
	}
	if err != nil {
		return c.UsageError("%v", FlagError(c.FS, err)), false
	}
	if c.FS.NArg() > 0 {
		return c.UsageError("unexpected argument %q", c.FS.Arg(0)), false
	}
	return 0, true
}

// PrintHelp writes the help and the flags to w.
func (c *Sub) PrintHelp(w io.Writer) {
	fmt.Fprint(w, c.Help)
	fmt.Fprintln(w, "\nFlags:")
	c.FS.SetOutput(w)
	c.FS.PrintDefaults()
	c.FS.SetOutput(io.Discard)
}

// UsageError reports a usage problem and returns exit code 2.
func (c *Sub) UsageError(format string, args ...any) int {
	return UsageError(c.Stderr, c.Cmd, format, args...)
}

// Fail reports a failure and returns exit code 1.
func (c *Sub) Fail(err error) int { return Failer(c.Cmd, c.Stderr)(err) }

// ReadTokenFile reads a bearer token from the file at path (the daemons'
// and regiment's --http-token-file), whitespace trimmed; an empty file is
// an error.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read http token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("read http token: %s is empty", path)
	}
	return tok, nil
}
