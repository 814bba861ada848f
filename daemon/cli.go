package daemon

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
)

// NewFlagSet is the flag set of the daemon called name, for ParseFlags:
// --config binds to configPath and --log-level to the string returned.
func NewFlagSet(name string, configPath *string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(configPath, "config", "", "cluster config `file` (HCL); required")
	return fs, fs.String("log-level", "info", "log `level`: trace, debug, info, warn, error")
}

// ParseFlags parses args into fs (whose output must be io.Discard) for the
// daemon called name. With --help it prints usage and the flags' defaults
// to stdout. It returns false and the exit code to end with (0 after help, 2
// for a usage error) when the daemon should not run.
func ParseFlags(fs *flag.FlagSet, args []string, name, usage string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return 0, false
		}
		return UsageError(stderr, name, "%v", err), false
	}
	if fs.NArg() > 0 {
		return UsageError(stderr, name, "unexpected argument %q", fs.Arg(0)), false
	}
	return 0, true
}

// UsageError reports a usage problem of the daemon called name and returns
// exit code 2.
func UsageError(stderr io.Writer, name, format string, args ...any) int {
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", name, fmt.Sprintf(format, args...), name)
	return 2
}

// LogLevel parses a --log-level value.
func LogLevel(s string) (hclog.Level, error) {
	l := hclog.LevelFromString(s)
	if l == hclog.NoLevel {
		return l, fmt.Errorf("--log-level: unknown level %q (trace, debug, info, warn, error)", s)
	}
	return l, nil
}

// NATSToken is the --nats-token value, else $REGIMENT_NATS_TOKEN (which
// keeps the token out of the process list).
func NATSToken(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv("REGIMENT_NATS_TOKEN")
}

// Setup is what a daemon does once its flags are parsed: it checks
// --config, parses --log-level (a usage error: exit code 2), takes the NATS
// token from $REGIMENT_NATS_TOKEN when --nats-token is empty, loads the
// config file (a failure: exit code 1) and makes the root logger named
// name. It returns ok false and the exit code when the daemon should not
// run.
func Setup(name, configPath, level string, natsToken *string, stderr io.Writer) (cfg *domains.Config, log hclog.Logger, code int, ok bool) {
	if configPath == "" {
		return nil, nil, UsageError(stderr, name, "--config is required"), false
	}
	l, err := LogLevel(level)
	if err != nil {
		return nil, nil, UsageError(stderr, name, "%v", err), false
	}
	*natsToken = NATSToken(*natsToken)
	if cfg, err = config.LoadFile(configPath); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, nil, 1, false
	}
	return cfg, hclog.New(&hclog.LoggerOptions{Name: name, Level: l, Output: stderr}), 0, true
}
