package daemon

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
)

// Logging is what a daemon's --log-level and --log-format ask for.
type Logging struct {
	Level  string // trace, debug, info, warn or error
	Format string // cli.LogText or cli.LogJSON
}

// NewFlagSet is the flag set of the daemon called name, for ParseFlags:
// --config binds to configPath, --log-level and --log-format to the Logging
// returned, and --version makes ParseFlags print cli.Version.
func NewFlagSet(name string, configPath *string) (*flag.FlagSet, *Logging) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(configPath, "config", "", "cluster config `file` (HCL); required")
	var lg Logging
	fs.StringVar(&lg.Level, "log-level", "info", "log `level`: trace, debug, info, warn, error")
	fs.StringVar(&lg.Format, "log-format", cli.LogText, cli.LogFormatUsage)
	fs.Bool("version", false, "print the version, the revision and the wire contract, and exit")
	return fs, &lg
}

// ParseFlags parses args into fs (whose output must be io.Discard) for the
// daemon called name. With --help it prints usage and the flags' defaults
// to stdout; with --version, cli.Version. A misspelt flag is a usage error
// that names the closest flag. It returns false and the exit code to end
// with (0 after help or version, 2 for a usage error) when the daemon
// should not run.
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
		return UsageError(stderr, name, "%v", cli.FlagError(fs, err)), false
	}
	if v := fs.Lookup("version"); v != nil && v.Value.String() == "true" {
		fmt.Fprint(stdout, cli.Version(name))
		return 0, false
	}
	if fs.NArg() > 0 {
		return UsageError(stderr, name, "unexpected argument %q", fs.Arg(0)), false
	}
	return 0, true
}

// UsageError reports a usage problem of the daemon called name and returns
// exit code 2.
func UsageError(stderr io.Writer, name, format string, args ...any) int {
	return cli.UsageError(stderr, name, format, args...)
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
// --config, makes the root logger named name of --log-level and
// --log-format (an unknown one: a usage error, exit code 2), takes the NATS
// token from $REGIMENT_NATS_TOKEN when --nats-token is empty and loads the
// config file (a failure: exit code 1). It returns ok false and the exit
// code when the daemon should not run.
func Setup(name, configPath string, lg Logging, natsToken *string, stderr io.Writer) (cfg *domains.Config, log hclog.Logger, code int, ok bool) {
	if configPath == "" {
		return nil, nil, UsageError(stderr, name, "--config is required"), false
	}
	log, err := cli.NewLogger(name, lg.Level, lg.Format, stderr)
	if err != nil {
		return nil, nil, UsageError(stderr, name, "%v", err), false
	}
	*natsToken = NATSToken(*natsToken)
	if cfg, err = config.LoadFile(configPath); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, nil, 1, false
	}
	return cfg, log, 0, true
}
