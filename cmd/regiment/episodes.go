package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/regimentd/regiment/store"
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

The store is DIR/regiment.db (--data DIR, default "data") or --db FILE. Reads
open it read-only; a running commander, soldier or "regiment run" holds it
exclusively, so stop it (or wait for it to finish) to inspect.

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
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, episodesUsage)
		return 0
	}
	run, ok := subs[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "regiment episodes: unknown subcommand %q\n\n%s", args[0], episodesUsage)
		return 2
	}
	return run(ctx, args[1:], stdout, stderr)
}

// epCmd is one subcommand's flag set and help.
type epCmd struct {
	name   string
	fs     *flag.FlagSet
	help   string // usage line, description and examples; flags are appended
	data   string
	db     string
	stderr io.Writer
}

func newEpCmd(name, help string, stderr io.Writer) *epCmd {
	c := &epCmd{name: name, help: help, stderr: stderr, fs: flag.NewFlagSet("episodes "+name, flag.ContinueOnError)}
	c.fs.SetOutput(io.Discard) // parse errors and help are printed by parse
	c.fs.Usage = func() {}
	c.fs.StringVar(&c.data, "data", "data", "data `dir`ectory; the store is DIR/regiment.db")
	c.fs.StringVar(&c.db, "db", "", "store `file` (overrides --data)")
	return c
}

// parse parses args. ok false means return code now: 0 after --help, 2 on a
// usage error.
func (c *epCmd) parse(args []string, stdout io.Writer) (code int, ok bool) {
	err := c.fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(stdout)
		return 0, false
	}
	if err != nil {
		return c.usageError("%v", err), false
	}
	if c.fs.NArg() > 0 {
		return c.usageError("unexpected argument %q", c.fs.Arg(0)), false
	}
	return 0, true
}

func (c *epCmd) printHelp(w io.Writer) {
	fmt.Fprint(w, c.help)
	fmt.Fprintln(w, "\nFlags:")
	c.fs.SetOutput(w)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
}

// usageError reports a usage problem and returns exit code 2.
func (c *epCmd) usageError(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "regiment episodes %s: %s\nRun 'regiment episodes %s --help' for usage.\n", c.name, fmt.Sprintf(format, args...), c.name)
	return 2
}

// fail reports a failure and returns exit code 1.
func (c *epCmd) fail(err error) int {
	fmt.Fprintf(c.stderr, "regiment episodes %s: %v\n", c.name, err)
	return 1
}

func (c *epCmd) path() string {
	if c.db != "" {
		return c.db
	}
	return filepath.Join(c.data, "regiment.db")
}

// open opens the store, read-only unless write, and words the common
// failures for an operator.
func (c *epCmd) open(write bool) (*store.Store, error) {
	path := c.path()
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no store at %s (point --data at the directory a commander, soldier or \"regiment run\" wrote, or --db at the file)", path)
		}
		return nil, err
	}
	s, err := store.Open(path, store.Options{ReadOnly: !write})
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("%s is locked by another process (a running commander, soldier or \"regiment run\"); stop it and retry", path)
	}
	return s, err
}

// epTime parses an absolute (RFC 3339) or relative-to-now ("-5m") time; ""
// is the zero time.
func epTime(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "":
		return time.Time{}, nil
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
		d, err := epDuration(s)
		if err == nil {
			return now.Add(d), nil
		}
	default:
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q: want RFC 3339 (2024-05-01T12:00:00Z), relative to now (-5m, -2h, -1d) or \"now\"", s)
}

// epDuration is time.ParseDuration plus a whole-day unit ("7d").
func epDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	return time.ParseDuration(s)
}

func epFormatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func epFloat(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// epSorted returns m's keys, sorted.
func epSorted(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func epDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

const epListHelp = `Usage: regiment episodes list [--data DIR | --db FILE] [--level L] [--domain D]

Lists episodes in start order: one per Commander term and per Soldier
lifetime, with the policy that ran and how many steps it recorded.

Examples:
  regiment episodes list
  regiment episodes list --data /var/lib/regiment --domain payment
`

func epList(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd("list", epListHelp, stderr)
	level := c.fs.String("level", "", "only episodes of this level: commander or soldier")
	domain := c.fs.String("domain", "", "only episodes of this domain")
	if code, ok := c.parse(args, stdout); !ok {
		return code
	}
	s, err := c.open(false)
	if err != nil {
		return c.fail(err)
	}
	defer s.Close()
	eps, err := s.Episodes()
	if err != nil {
		return c.fail(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tDOMAIN\tPOLICY\tSTARTED\tENDED\tSTEPS")
	shown := 0
	for _, e := range eps {
		if (*level != "" && e.Level != *level) || (*domain != "" && e.Domain != *domain) {
			continue
		}
		n, err := s.StepCount(e.ID)
		if err != nil {
			return c.fail(err)
		}
		ended := "running"
		if !e.Running() {
			ended = epFormatTime(e.Ended)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", e.ID, e.Level, epDash(e.Domain), epDash(e.Policy), epFormatTime(e.Started), ended, n)
		shown++
	}
	if shown == 0 {
		fmt.Fprintf(stdout, "no episodes in %s\n", c.path())
		return 0
	}
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	return 0
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

// errEpLimit stops a step walk at --limit.
var errEpLimit = errors.New("limit reached")

func epShow(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd("show", epShowHelp, stderr)
	id := c.fs.String("episode", "", "episode `id` (see list); required")
	fromS := c.fs.String("from", "", "first step `time` (inclusive)")
	toS := c.fs.String("to", "", "end `time` (exclusive)")
	limit := c.fs.Int("limit", 50, "print at most `N` steps (0: all)")
	if code, ok := c.parse(args, stdout); !ok {
		return code
	}
	if *id == "" {
		return c.usageError("--episode is required (list shows the ids)")
	}
	now := time.Now()
	from, err := epTime(*fromS, now)
	if err != nil {
		return c.usageError("--from: %v", err)
	}
	to, err := epTime(*toS, now)
	if err != nil {
		return c.usageError("--to: %v", err)
	}
	s, err := c.open(false)
	if err != nil {
		return c.fail(err)
	}
	defer s.Close()
	e, err := s.Episode(*id)
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(stdout, "episode %s: %s %s, policy %s, cluster %s, %s .. %s, %d observation features (v%d)\n\n",
		e.ID, e.Level, epDash(e.Domain), epDash(e.Policy), epDash(e.Cluster), epFormatTime(e.Started), epFormatTime(e.Ended), len(e.ObsLayout), e.ObsVersion)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSEQ\tACTION\tREWARD\tOUTCOME\tGUARDS")
	n := 0
	err = s.Steps(e.ID, from, to, func(st store.Step) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if *limit > 0 && n == *limit {
			return errEpLimit
		}
		n++
		reward := "-"
		if r, ok := st.Reward["total"]; ok {
			reward = epFloat(r)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", epFormatTime(st.At), st.Seq, epSummary(st.Action, nil, 4),
			reward, epSummary(st.Outcome, epKeyOutcomes, 3), epGuards(st.Guards))
		return nil
	})
	if err != nil && !errors.Is(err, errEpLimit) {
		return c.fail(err)
	}
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	switch {
	case n == 0:
		fmt.Fprintln(stdout, "no steps in that range")
	case errors.Is(err, errEpLimit):
		fmt.Fprintf(stdout, "... more steps follow; narrow with --from/--to or raise --limit (0: all)\n")
	}
	return 0
}

// epKeyOutcomes are the outcomes show prefers, in this order.
var epKeyOutcomes = []string{"p99_seconds", "error_rate", "slo_compliant", "cost_core_hours"}

// epSummary prints up to limit "k=v" pairs of m: the preferred keys first (in
// their order), then the rest sorted, then how many were left out.
func epSummary(m map[string]float64, preferred []string, limit int) string {
	if len(m) == 0 {
		return "-"
	}
	var keys []string
	for _, k := range preferred {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	for _, k := range epSorted(m) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var parts []string
	for i, k := range keys {
		if i == limit && len(keys) > limit+1 {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(keys)-limit))
			break
		}
		parts = append(parts, k+"="+epFloat(m[k]))
	}
	return strings.Join(parts, " ")
}

func epGuards(gs []store.Guard) string {
	if len(gs) == 0 {
		return "-"
	}
	var parts []string
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%s(%s %s->%s)", g.Name, g.Target, epFloat(g.Before), epFloat(g.After)))
	}
	return strings.Join(parts, ", ")
}

const epWhyHelp = `Usage: regiment episodes why --domain D [--at T] [--window D]

Explains the decision in effect for a domain at time T: the Soldier step at
or before T, with
  - the inputs that mattered: the 8 observation features furthest from the
    episode's mean (by |value| when the episode has a single step),
  - the policy output that was acted on,
  - the guards that changed it (name, target, before -> after, reason),
  - the reward terms and the measured outcome,
  - the Commander's step for the same cluster at T, restricted to outputs
    named for the domain (e.g. share/payment, cores/payment),
  - ledger entries for the domain (and cluster-wide ones) within --window of T.
T is RFC 3339 (2024-05-01T12:00:00Z), relative to now (-5m) or "now".

Examples:
  regiment episodes why --domain payment --at -5m
  regiment episodes why --domain fraud --at 1998-06-10T14:20:00Z --data runs/worldcup
`

// epMeanMaxSteps bounds the steps why averages: longer episodes use the
// epMeanWindow before T instead of the whole episode.
const (
	epMeanMaxSteps = 100000
	epMeanWindow   = 6 * time.Hour
	epTopInputs    = 8
)

func epWhy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd("why", epWhyHelp, stderr)
	domain := c.fs.String("domain", "", "domain `name`; required")
	atS := c.fs.String("at", "now", "decision `time`: RFC 3339 or relative to now (-5m)")
	window := c.fs.Duration("window", 5*time.Minute, "show ledger entries within this `duration` of T")
	if code, ok := c.parse(args, stdout); !ok {
		return code
	}
	if *domain == "" {
		return c.usageError("--domain is required")
	}
	at, err := epTime(*atS, time.Now())
	if err != nil {
		return c.usageError("--at: %v", err)
	}
	s, err := c.open(false)
	if err != nil {
		return c.fail(err)
	}
	defer s.Close()
	eps, err := s.Episodes()
	if err != nil {
		return c.fail(err)
	}
	sol, ok := epPick(eps, "soldier", *domain, "", at)
	if !ok {
		return c.fail(fmt.Errorf("no soldier episode for domain %q started at or before %s (see: regiment episodes list --domain %s)", *domain, epFormatTime(at), *domain))
	}
	st, ok, err := s.StepAt(sol.ID, at)
	if err != nil {
		return c.fail(err)
	}
	if !ok {
		return c.fail(fmt.Errorf("soldier episode %s has no step at or before %s", sol.ID, epFormatTime(at)))
	}
	fmt.Fprintf(stdout, "decision for domain %s at %s\n", *domain, at.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(stdout, "soldier episode %s (policy %s, cluster %s), step %d at %s (%s before)\n\n",
		sol.ID, epDash(sol.Policy), epDash(sol.Cluster), st.Seq, epFormatTime(st.At), at.Sub(st.At).Round(time.Millisecond))

	if err := epInputs(ctx, stdout, s, sol, st, at); err != nil {
		return c.fail(err)
	}

	fmt.Fprintln(stdout, "\npolicy output (acted on):")
	epTable(stdout, st.Action, nil)
	epPrintGuards(stdout, st.Guards, nil)
	fmt.Fprintln(stdout, "\nreward terms:")
	epTable(stdout, st.Reward, []string{"total"})
	fmt.Fprintln(stdout, "\noutcome:")
	epTable(stdout, st.Outcome, epKeyOutcomes)

	if cmd, ok := epPick(eps, "commander", "", sol.Cluster, at); ok {
		cst, ok, err := s.StepAt(cmd.ID, at)
		if err != nil {
			return c.fail(err)
		}
		if ok {
			fmt.Fprintf(stdout, "\ncommander episode %s (policy %s), step %d at %s, outputs for %s:\n", cmd.ID, epDash(cmd.Policy), cst.Seq, epFormatTime(cst.At), *domain)
			mine := map[string]float64{}
			for k, v := range cst.Action {
				if epNamesDomain(k, *domain) {
					mine[k] = v
				}
			}
			if len(mine) == 0 {
				fmt.Fprintf(stdout, "  none (no output named like share/%s)\n", *domain)
			} else {
				epTable(stdout, mine, nil)
			}
			epPrintGuards(stdout, cst.Guards, func(g store.Guard) bool { return epNamesDomain(g.Target, *domain) })
		} else {
			fmt.Fprintf(stdout, "\ncommander episode %s has no step at or before T\n", cmd.ID)
		}
	} else {
		fmt.Fprintln(stdout, "\nno commander episode covers T")
	}

	fmt.Fprintf(stdout, "\nledger for %s (and cluster-wide) from %s to %s:\n", *domain, epFormatTime(at.Add(-*window)), epFormatTime(at.Add(*window)))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	n := 0
	err = s.Ledger(at.Add(-*window), at.Add(*window), "", func(e store.LedgerEntry) error {
		if e.Domain != "" && e.Domain != *domain {
			return nil
		}
		n++
		vals := ""
		if len(e.Values) > 0 {
			vals = epSummary(e.Values, nil, 6)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", epFormatTime(e.At), epDash(e.Domain), e.Kind, e.Detail, vals)
		return nil
	})
	if err != nil {
		return c.fail(err)
	}
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	if n == 0 {
		fmt.Fprintln(stdout, "  none")
	}
	return 0
}

// epPick finds the episode of a level (and domain, and cluster when both
// are known) in effect at t: the latest started one covering t, else the
// latest started before t.
func epPick(eps []store.Episode, level, domain, cluster string, t time.Time) (store.Episode, bool) {
	var best store.Episode
	found, covers := false, false
	for _, e := range eps { // in start order: later ones win ties
		if e.Level != level || (domain != "" && e.Domain != domain) || e.Started.After(t) {
			continue
		}
		if cluster != "" && e.Cluster != "" && e.Cluster != cluster {
			continue
		}
		if c := e.Covers(t); c || !covers {
			best, found, covers = e, true, c
		}
	}
	return best, found
}

// epNamesDomain reports whether an output key names the domain as one of
// its "/"-separated parts ("share/payment", "cores/payment").
func epNamesDomain(key, domain string) bool {
	return slices.Contains(strings.Split(key, "/"), domain)
}

// epInputs prints the observation features that moved furthest from the
// episode's mean.
func epInputs(ctx context.Context, w io.Writer, s *store.Store, e store.Episode, st store.Step, at time.Time) error {
	if len(st.Obs) == 0 {
		fmt.Fprintln(w, "inputs: the step has no observation")
		return nil
	}
	n, err := s.StepCount(e.ID)
	if err != nil {
		return err
	}
	from, scope := time.Time{}, "the episode"
	if n > epMeanMaxSteps {
		from, scope = at.Add(-epMeanWindow), fmt.Sprintf("the %s before T", epMeanWindow)
	}
	sum := make([]float64, len(st.Obs))
	count := 0
	err = s.Steps(e.ID, from, time.Time{}, func(o store.Step) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(o.Obs) != len(sum) {
			return nil
		}
		for i, v := range o.Obs {
			sum[i] += v
		}
		count++
		return nil
	})
	if err != nil {
		return err
	}
	type input struct {
		name              string
		value, mean, rank float64
	}
	inputs := make([]input, len(st.Obs))
	spread := false
	for i, v := range st.Obs {
		mean := sum[i] / float64(max(count, 1))
		name := strconv.Itoa(i)
		if i < len(e.ObsLayout) {
			name = e.ObsLayout[i]
		}
		inputs[i] = input{name: name, value: v, mean: mean, rank: math.Abs(v - mean)}
		spread = spread || inputs[i].rank > 1e-12
	}
	by := fmt.Sprintf("|value - mean|, mean over %d steps of %s", count, scope)
	if !spread {
		by = "|value| (no spread to compare against)"
		for i := range inputs {
			inputs[i].rank = math.Abs(inputs[i].value)
		}
	}
	slices.SortStableFunc(inputs, func(a, b input) int { return cmp.Compare(b.rank, a.rank) })
	shown := min(epTopInputs, len(inputs))
	fmt.Fprintf(w, "inputs that mattered (top %d of %d by %s):\n", shown, len(inputs), by)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  FEATURE\tVALUE\tMEAN\tDEVIATION")
	for _, in := range inputs[:shown] {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%+.4g\n", in.name, epFloat(in.value), epFloat(in.mean), in.value-in.mean)
	}
	return tw.Flush()
}

// epTable prints m as indented "key value" lines, first keys first.
func epTable(w io.Writer, m map[string]float64, first []string) {
	if len(m) == 0 {
		fmt.Fprintln(w, "  none recorded")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	var keys []string
	for _, k := range first {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	for _, k := range epSorted(m) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t%s\n", k, epFloat(m[k]))
	}
	tw.Flush()
}

// epPrintGuards prints the guards that changed an output (keep: nil for all).
func epPrintGuards(w io.Writer, gs []store.Guard, keep func(store.Guard) bool) {
	var changed []store.Guard
	for _, g := range gs {
		if g.Changed() && (keep == nil || keep(g)) {
			changed = append(changed, g)
		}
	}
	if len(changed) == 0 {
		fmt.Fprintln(w, "guards: none changed the policy output")
		return
	}
	fmt.Fprintln(w, "guards that changed it:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range changed {
		fmt.Fprintf(tw, "  %s\t%s\t%s -> %s\t%s\n", g.Name, g.Target, epFloat(g.Before), epFloat(g.After), g.Reason)
	}
	tw.Flush()
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

func epExport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd("export", epExportHelp, stderr)
	var f store.Filter
	c.fs.StringVar(&f.Episode, "episode", "", "only this episode `id`")
	c.fs.StringVar(&f.Domain, "domain", "", "only episodes of this `domain`")
	c.fs.StringVar(&f.Level, "level", "", "only episodes of this `level`: commander or soldier")
	fromS := c.fs.String("from", "", "first step `time` (inclusive)")
	toS := c.fs.String("to", "", "end `time` (exclusive)")
	format := c.fs.String("format", "jsonl", "output `format`: jsonl or csv")
	out := c.fs.String("out", "", "write to this `file` instead of stdout")
	if code, ok := c.parse(args, stdout); !ok {
		return code
	}
	now := time.Now()
	var err error
	if f.From, err = epTime(*fromS, now); err != nil {
		return c.usageError("--from: %v", err)
	}
	if f.To, err = epTime(*toS, now); err != nil {
		return c.usageError("--to: %v", err)
	}
	if *format != "jsonl" && *format != "csv" {
		return c.usageError("--format %q: want jsonl or csv", *format)
	}
	s, err := c.open(false)
	if err != nil {
		return c.fail(err)
	}
	defer s.Close()
	w := stdout
	var file *os.File
	if *out != "" {
		if file, err = os.Create(*out); err != nil {
			return c.fail(err)
		}
		w = file
	}
	if *format == "csv" {
		err = s.ExportCSV(w, f)
	} else {
		err = s.ExportJSONL(w, f)
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return c.fail(err)
	}
	if file != nil {
		fmt.Fprintf(stderr, "wrote %s\n", *out)
	}
	return 0
}

const epStatsHelp = `Usage: regiment episodes stats [--data DIR | --db FILE]

Summarises the store: episodes, steps in total, per level and per domain,
the time span of the steps, the file size, how many steps had a guard change
the policy's output, the mean reward total, and a line per episode. It
decodes every step, so it takes a while on a large file.

Example:
  regiment episodes stats --data data
`

func epStats(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd("stats", epStatsHelp, stderr)
	if code, ok := c.parse(args, stdout); !ok {
		return code
	}
	s, err := c.open(false)
	if err != nil {
		return c.fail(err)
	}
	defer s.Close()
	st, err := s.Stats()
	if err != nil {
		return c.fail(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "store\t%s (%s)\n", c.path(), epBytes(st.FileBytes))
	fmt.Fprintf(tw, "episodes\t%d\n", st.Episodes)
	fmt.Fprintf(tw, "steps\t%d\n", st.Steps)
	for _, level := range epSortedInts(st.StepsByLevel) {
		fmt.Fprintf(tw, "  level %s\t%d\n", level, st.StepsByLevel[level])
	}
	for _, d := range epSortedInts(st.StepsByDomain) {
		fmt.Fprintf(tw, "  domain %s\t%d\n", d, st.StepsByDomain[d])
	}
	if st.Steps > 0 {
		fmt.Fprintf(tw, "span\t%s .. %s (%s)\n", epFormatTime(st.First), epFormatTime(st.Last), st.Last.Sub(st.First))
		fmt.Fprintf(tw, "guarded steps\t%d (%.1f%%)\n", st.GuardedSteps, 100*float64(st.GuardedSteps)/float64(st.Steps))
	}
	if st.RewardSteps > 0 {
		fmt.Fprintf(tw, "reward mean\t%.4g (total, over %d steps)\n", st.RewardMean, st.RewardSteps)
	}
	fmt.Fprintf(tw, "ledger entries\t%d\n", st.LedgerEntries)
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	if len(st.PerEpisode) == 0 {
		return 0
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EPISODE\tLEVEL\tDOMAIN\tSTEPS\tGUARDED\tREWARD_MEAN\tFIRST\tLAST")
	for _, e := range st.PerEpisode {
		reward := "-"
		if e.RewardSteps > 0 {
			reward = epFloat(e.RewardMean)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", e.ID, e.Level, epDash(e.Domain), e.Steps, e.GuardedSteps, reward, epFormatTime(e.First), epFormatTime(e.Last))
	}
	if err := tw.Flush(); err != nil {
		return c.fail(err)
	}
	return 0
}

func epSortedInts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func epBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
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

func epPrune(_ context.Context, args []string, stdout, stderr io.Writer) int {
	c := newEpCmd("prune", epPruneHelp, stderr)
	olderThan := c.fs.String("older-than", "", "retention `duration`: delete what is older (168h, 30d)")
	beforeS := c.fs.String("before", "", "absolute cutoff `time` (RFC 3339) instead of --older-than")
	if code, ok := c.parse(args, stdout); !ok {
		return code
	}
	if (*olderThan == "") == (*beforeS == "") {
		return c.usageError("give exactly one of --older-than and --before")
	}
	var cutoff time.Time
	if *olderThan != "" {
		d, err := epDuration(*olderThan)
		if err != nil || d <= 0 {
			return c.usageError("--older-than %q: want a positive duration such as 168h or 30d", *olderThan)
		}
		cutoff = time.Now().Add(-d)
	} else {
		var err error
		if cutoff, err = epTime(*beforeS, time.Now()); err != nil {
			return c.usageError("--before: %v", err)
		}
	}
	s, err := c.open(true)
	if err != nil {
		return c.fail(err)
	}
	defer s.Close()
	before, err := s.Episodes()
	if err != nil {
		return c.fail(err)
	}
	removed, err := s.Prune(cutoff)
	if err != nil {
		return c.fail(err)
	}
	after, err := s.Episodes()
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprintf(stdout, "pruned %d steps and ledger entries before %s; removed %d ended, empty episodes\n",
		removed, epFormatTime(cutoff), len(before)-len(after))
	return 0
}
