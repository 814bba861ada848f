package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/offline/episodes"
)

// episodesUsage is what `regiment episodes --help` prints.
const episodesUsage = `Usage: regiment episodes <subcommand> [flags]

Inspects the episode store that the Commander and the Soldiers write: every
control step (observation, action, guards, reward terms, outcome) and the
decision ledger (directives, overrides, fallbacks, mode changes).

Subcommands:
  list     table of episodes: id, level, domain, policy, started, ended, steps
  show     the steps of one episode as a table
  why      explain the decision in effect for a domain at a time
  export   steps as JSON lines or CSV, for notebooks and retraining
  stats    counts, time span, file size, guarded steps, reward mean
  prune    delete steps and ledger entries older than a retention
  repair   copy what is readable of a damaged store into a new file

The store is DIR/regiment.db (--data DIR, default "data") or --db FILE. Reads
open it read-only; a running commander, soldier or "regiment run" holds it
exclusively, so stop it (or wait for it to finish) to inspect, or read a
running daemon's snapshot: --db http://localhost:9465/ (its --listen
address, e.g. through kubectl port-forward; the token of its
--http-token-file with --http-token-file or $REGIMENT_HTTP_TOKEN).

Examples:
  regiment episodes list --data data
  regiment episodes why --domain payment --at -5m
  regiment episodes export --domain payment --format csv --out payment.csv

Run "regiment episodes <subcommand> --help" for its flags and examples.
`

func runEpisodes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, episodesUsage)
		return 2
	}
	subs := map[string]func(context.Context, []string, io.Writer, io.Writer) int{
		"list": epList, "show": epShow, "why": epWhy, "export": epExport, "stats": epStats, "prune": epPrune,
		"repair": epRepair,
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, episodesUsage)
		return 0
	}
	run, ok := subs[args[0]]
	if !ok {
		return cli.UnknownSubcommand(stderr, "regiment episodes", args[0], []string{"list", "show", "why", "export", "stats", "prune", "repair"})
	}
	return run(ctx, args[1:], stdout, stderr)
}

// epCmd is one subcommand: its flags, help and the store they name.
type epCmd struct {
	*cli.Sub
	name      string
	data      string
	db        string // a file, or a daemon's URL
	tokenFile string // the daemon's bearer token, for a URL
	ctx       context.Context
}

func newEpCmd(ctx context.Context, name, help string, stderr io.Writer) *epCmd {
	c := &epCmd{Sub: cli.NewSub("regiment episodes "+name, help, stderr), name: name, ctx: ctx}
	c.FS.StringVar(&c.data, "data", "data", "data `dir`ectory; the store is DIR/regiment.db")
	c.FS.StringVar(&c.db, "db", "", "store `file` (overrides --data), or a running daemon's `URL` (http://localhost:9465/: a snapshot of its store)")
	c.FS.StringVar(&c.tokenFile, "http-token-file", "", "`file` with the daemon's bearer token, for a --db URL (default $"+episodes.TokenEnv+")")
	return c
}

func (c *epCmd) path() string { return episodes.StoreFile(c.data, c.db) }

// run runs f on the store (episodes.Use) and returns the exit code: 0, 2
// after reporting a domain or app the store has not recorded
// (episodes.ErrUnknown, with the closest), or 1 after reporting the error.
func (c *epCmd) run(write bool, f func(s *store.Store) error) int {
	err := episodes.Use(c.ctx, c.path(), c.tokenFile, write, c.name, f)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, episodes.ErrUnknown):
		return c.UsageError("%v", err)
	}
	return c.Fail(err)
}

const epListHelp = `Usage: regiment episodes list [--data DIR | --db FILE] [--level L] [--domain D]

Lists episodes in start order: one per Commander term and per Soldier
lifetime, with the policy that ran and how many steps it recorded.

Examples:
  regiment episodes list
  regiment episodes list --data /var/lib/regiment --domain payment
`

func epList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd(ctx, "list", epListHelp, stderr)
	level := c.FS.String("level", "", "only episodes of this level: commander or soldier")
	domain := c.FS.String("domain", "", "only episodes of this domain")
	if code, ok := c.Parse(args, stdout); !ok {
		return code
	}
	return c.run(false, episodes.InDomain(*domain, func(s *store.Store) error { return episodes.List(stdout, s, c.path(), *level, *domain) }))
}

const epShowHelp = `Usage: regiment episodes show --episode ID [--from T] [--to T] [--limit N]

Prints the steps of one episode in time order: time, sequence number, the
action acted on, the reward total, key outcomes and the guards that changed
the policy's output. T is RFC 3339 (2024-05-01T12:00:00Z) or relative to now
(-30m); --from is inclusive, --to exclusive.

Examples:
  regiment episodes show --episode sol-payment-1
  regiment episodes show --episode cmd-7 --from -1h --limit 0
`

func epShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd(ctx, "show", epShowHelp, stderr)
	id := c.FS.String("episode", "", "episode `id` (see list); required")
	fromS := c.FS.String("from", "", "first step `time` (inclusive)")
	toS := c.FS.String("to", "", "end `time` (exclusive)")
	limit := c.FS.Int("limit", 50, "print at most `N` steps (0: all)")
	if code, ok := c.Parse(args, stdout); !ok {
		return code
	}
	if *id == "" {
		return c.UsageError("--episode is required (list shows the ids)")
	}
	from, to, err := episodes.ParseRange(*fromS, *toS, time.Now())
	if err != nil {
		return c.UsageError("%v", err)
	}
	return c.run(false, func(s *store.Store) error { return episodes.Show(ctx, stdout, s, *id, from, to, *limit) })
}

const epWhyHelp = `Usage: regiment episodes why --domain D [--app A] [--at T] [--window D]

Explains the decision in effect for a domain at time T: the Soldier step at
or before T, with
  - the inputs that mattered: the 8 observation features furthest from the
    episode's mean (by |value| when the episode has a single step),
  - the policy output that was acted on,
  - the guards that changed it (name, target, before -> after, reason),
  - the reward terms and the measured outcome,
  - the Commander's step for the same cluster at T, restricted to outputs
    named for the domain (e.g. share/payment, cores/payment), then its
    cluster-wide outputs (reserve, capacity_target_cores: the capacity
    plan) and the pool as it saw it (its cluster.* features, and
    time.event: 1 while a calendar event was in its window),
  - ledger entries for the domain (and cluster-wide ones) within --window of T.
T is RFC 3339 (2024-05-01T12:00:00Z), relative to now (-5m) or "now". With
--app, only that app's outputs, guards and outcomes are shown, with the
domain's own. When the step is further before T than --window (at least
5m), a warning says the episode has no step near T. A misspelt domain or
app (close to a recorded one) is a usage error (exit 2) naming it.

Examples:
  regiment episodes why --domain payment --at -5m
  regiment episodes why --domain payment --app checkout --at -5m
  regiment episodes why --domain fraud --at 1998-06-10T14:20:00Z --data runs/worldcup
`

func epWhy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd(ctx, "why", epWhyHelp, stderr)
	domain := c.FS.String("domain", "", "domain `name`; required")
	app := c.FS.String("app", "", "only this `app` (domain/app, or app within --domain) and the domain's own values")
	atS := c.FS.String("at", "now", "decision `time`: RFC 3339 or relative to now (-5m)")
	window := c.FS.Duration("window", 5*time.Minute, "show ledger entries within this `duration` of T")
	if code, ok := c.Parse(args, stdout); !ok {
		return code
	}
	if *domain == "" {
		return c.UsageError("--domain is required")
	}
	at, err := episodes.ParseTime(*atS, time.Now())
	if err != nil {
		return c.UsageError("--at: %v", err)
	}
	return c.run(false, func(s *store.Store) error { return episodes.WhyApp(ctx, stdout, s, *domain, *app, at, *window) })
}

const epExportHelp = `Usage: regiment episodes export [--episode ID] [--domain D] [--level L]
                               [--from T] [--to T] [--format jsonl|csv] [--out FILE]

Writes the selected steps, episode by episode in start order and in time
order within an episode.
  jsonl: one JSON object per step: episode, level, domain, obs_version, seq,
         at, obs (in the episode's feature order), action, guards, reward,
         outcome.
  csv:   one row per step, one column per value: episode, level, domain, seq,
         at, obs.<feature>..., action.<k>..., reward.<k>..., outcome.<k>...,
         guards ("name:target:before->after;..."); the columns are the union
         over the selection.

Examples:
  regiment episodes export --domain payment > payment.jsonl
  regiment episodes export --episode cmd-7 --format csv --out cmd-7.csv
`

func epExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd(ctx, "export", epExportHelp, stderr)
	var f store.Filter
	c.FS.StringVar(&f.Episode, "episode", "", "only this episode `id`")
	c.FS.StringVar(&f.Domain, "domain", "", "only episodes of this `domain`")
	c.FS.StringVar(&f.Level, "level", "", "only episodes of this `level`: commander or soldier")
	fromS := c.FS.String("from", "", "first step `time` (inclusive)")
	toS := c.FS.String("to", "", "end `time` (exclusive)")
	format := c.FS.String("format", "jsonl", "output `format`: jsonl or csv")
	out := c.FS.String("out", "", "write to this `file` instead of stdout")
	if code, ok := c.Parse(args, stdout); !ok {
		return code
	}
	var err error
	if f.From, f.To, err = episodes.ParseRange(*fromS, *toS, time.Now()); err != nil {
		return c.UsageError("%v", err)
	}
	if *format != "jsonl" && *format != "csv" {
		return c.UsageError("--format %q: want jsonl or csv", *format)
	}
	code := c.run(false, episodes.InDomain(f.Domain, func(s *store.Store) error { return episodes.Export(stdout, s, f, *format, *out) }))
	if code == 0 && *out != "" {
		fmt.Fprintf(stderr, "wrote %s\n", *out)
	}
	return code
}

const epStatsHelp = `Usage: regiment episodes stats [--data DIR | --db FILE]

Summarises the store: episodes, steps in total, per level and per domain,
the time span of the steps, the file size, how many steps had a guard change
the policy's output, the mean reward total, and a line per episode. It
decodes every step, so it takes a while on a large file.

Example:
  regiment episodes stats --data data
`

func epStats(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd(ctx, "stats", epStatsHelp, stderr)
	if code, ok := c.Parse(args, stdout); !ok {
		return code
	}
	return c.run(false, func(s *store.Store) error { return episodes.WriteStats(stdout, s, c.path()) })
}

const epPruneHelp = `Usage: regiment episodes prune --older-than D | --before T [--data DIR | --db FILE]

Deletes steps and ledger entries older than the cutoff (now minus
--older-than, or --before), and episodes that ended before it and are left
without steps. It needs the store to itself: stop the daemons first. The
file keeps its size (bbolt reuses the freed pages); compact a copy with
"bbolt compact" to give disk space back.

Simulated runs record simulated time (a 1998 trace is in 1998): prune those
with --before, not --older-than.

Examples:
  regiment episodes prune --older-than 168h
  regiment episodes prune --older-than 30d --data /var/lib/regiment
  regiment episodes prune --before 1998-06-11T00:00:00Z --data runs/worldcup
`

func epPrune(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd(ctx, "prune", epPruneHelp, stderr)
	olderThan := c.FS.String("older-than", "", "retention `duration`: delete what is older (168h, 30d)")
	beforeS := c.FS.String("before", "", "absolute cutoff `time` (RFC 3339) instead of --older-than")
	if code, ok := c.Parse(args, stdout); !ok {
		return code
	}
	cutoff, err := episodes.Cutoff(*olderThan, *beforeS, time.Now())
	if err != nil {
		return c.UsageError("%v", err)
	}
	return c.run(true, func(s *store.Store) error { return episodes.Prune(stdout, s, cutoff) })
}

const epRepairHelp = `Usage: regiment episodes repair [--data DIR | --in FILE] [--out FILE]

Copies every bucket and key that can still be read from a damaged store (one
that a daemon or "regiment episodes" refuses as damaged: truncated, pages
overwritten) into a new file, and lists what it had to skip. It never writes
to the damaged file. --out defaults to DIR/regiment.repaired.db and must not
exist. Stop the daemon first; then move the damaged file aside and the
repaired one into its place (docs/operations.md).

Examples:
  regiment episodes repair --data /var/lib/regiment
  regiment episodes repair --in regiment.db --out regiment.repaired.db
`

func epRepair(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd(ctx, "repair", epRepairHelp, stderr)
	c.FS.StringVar(&c.db, "in", "", "damaged store `file` (overrides --data)")
	out := c.FS.String("out", "", "new store `file` to write (default DIR/regiment.repaired.db)")
	if code, ok := c.Parse(args, stdout); !ok {
		return code
	}
	if err := episodes.Repair(stdout, c.path(), *out); err != nil {
		return c.Fail(err)
	}
	return 0
}
