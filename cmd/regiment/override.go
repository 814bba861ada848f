package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/daemon"
)

// overrideUsage is what `regiment override --help` prints before the flags.
const overrideUsage = `Usage: regiment override <share|replicas|cancel|list> --config F [flags]

Pins a domain's share of the pool or an app's replicas for a bounded time,
above any policy, or lifts such a pin early, or lists the pins in force. The
override goes over NATS as a request; the Commander answers share pins, the
domain's Soldier answers replica pins, and the answer is printed. Every
override accepted, refused, first applied, expired or cancelled is recorded
in the answering daemon's ledger (regiment episodes why ...).

  share     --domain D --share F --for DUR --reason TEXT
            The Commander holds D at share F (0-1) of the pool from its next
            tick: beyond D's floor, ceiling and max_share_change; room comes
            from the unpinned domains, lowest priority first. Pins together
            may not exceed 1.
  replicas  --app D/APP --replicas N --for DUR --reason TEXT
            D's Soldier holds the app at N replicas (within its min and max
            replicas) from its next tick, above the policy, the fallback, the
            rollback ladder, the budget, the cooldown and the error veto.
            An app of a domain with a discover block is checked by the
            running Soldier, the only one that knows what it found.
  cancel    --domain D [--app D/APP] [--reason TEXT]
            Lifts D's share pin, or the app's replica pin.
  list      [--domain D]
            Prints the pins in force, as kept in NATS.

A pin lasts --for (at most 24h) and then lapses on its own; the policy takes
over again (through max_share_change and the scale-down cooldown). Exits 0
when the override was accepted, 1 when it was refused or nobody answered, 2
on a usage error.

Examples:
  regiment override share --config prod.hcl --domain payment --share 0.3 --for 30m --reason "incident 123"
  regiment override replicas --config prod.hcl --app payment/checkout-0 --replicas 20 --for 15m --reason "INC-4411: hold during the deploy"
  regiment override cancel --config prod.hcl --domain payment --app payment/checkout-0
  regiment override list --config prod.hcl

Flags:
`

// overrideFlags are the flags of every override subcommand.
type overrideFlags struct {
	daemon.OverrideRequest
	daemon.Operator
	configPath string
}

func runOverride(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f overrideFlags
	fs := flag.NewFlagSet("override", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.configPath, "config", "", "cluster config `file` (HCL): cluster name, NATS URL and authentication, domains and apps; required")
	fs.StringVar(&f.URL, "nats", "", "NATS server `URL`; default: nats.url of the config, else "+daemon.DefaultNATS)
	fs.StringVar(&f.Token, "nats-token", "", "NATS authentication `token` (wins over the config's nats block)")
	fs.StringVar(&f.Domain, "domain", "", "the `domain` to pin or cancel")
	fs.StringVar(&f.App, "app", "", "the app, as `domain/app` (or app with --domain)")
	fs.Float64Var(&f.Share, "share", -1, "pinned `fraction` of the pool, 0 to 1 (share)")
	fs.IntVar(&f.Replicas, "replicas", -1, "pinned replica `count` (replicas)")
	fs.DurationVar(&f.For, "for", 0, "how long the pin lasts, e.g. 30m; at most 24h (share, replicas)")
	fs.StringVar(&f.Reason, "reason", "", "why, for the ledger; required for a pin")
	fs.StringVar(&f.By, "by", daemon.DefaultOperator(), "who pins, for the ledger")
	fs.DurationVar(&f.Timeout, "timeout", 10*time.Second, "how long to wait for the answer")
	usage := subcommandUsage(fs, overrideUsage)
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "help" {
		usage(stdout)
		return 0
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		return overrideUsageError(stderr, "%v", cli.FlagError(fs, err))
	}
	if fs.NArg() > 0 {
		return overrideUsageError(stderr, "unexpected argument %q", fs.Arg(0))
	}
	switch sub {
	case "share", "replicas", "cancel", "list":
	default:
		return cli.UnknownSubcommand(stderr, "regiment override", sub, []string{"share", "replicas", "cancel", "list"})
	}
	if f.configPath == "" {
		return overrideUsageError(stderr, "--config is required: it names the cluster and its NATS server")
	}
	cfg, err := config.LoadFile(f.configPath)
	if err != nil {
		fmt.Fprintf(stderr, "regiment override: %v\n", err)
		return 1
	}
	if sub == "list" {
		if f.Domain != "" {
			if err := daemon.CheckDomain(cfg, f.Domain); err != nil {
				return overrideUsageError(stderr, "%v", err)
			}
		}
		return overrideFailed(stderr, f.ListOverrides(ctx, stdout, cfg, f.Domain))
	}
	o, err := daemon.BuildOverride(cfg, sub, f.OverrideRequest, time.Now().UTC())
	if err != nil {
		return overrideUsageError(stderr, "%v", err)
	}
	answer, err := f.SendOverride(ctx, cfg, o)
	if err == nil {
		fmt.Fprintln(stdout, answer)
	}
	return overrideFailed(stderr, err)
}

// overrideFailed reports err, if any, and returns the exit code: 1 after
// an error, else 0.
func overrideFailed(stderr io.Writer, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "regiment override: %v\n", err)
		return 1
	}
	return 0
}

func overrideUsageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "regiment override: %s\nRun 'regiment override --help' for usage and examples.\n", fmt.Sprintf(format, args...))
	return 2
}

// subcommandUsage prints text, then fs's flags, to a writer: the help of a
// subcommand whose flag set is otherwise silent (output io.Discard).
func subcommandUsage(fs *flag.FlagSet, text string) func(io.Writer) {
	return func(w io.Writer) {
		fmt.Fprint(w, text)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}
