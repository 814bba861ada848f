package episodes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/regimentd/regiment/internal/adapter/store"
)

// Open opens the store at path for inspection, read-only unless write, and
// words the common failures for an operator.
func Open(path string, write bool) (*store.Store, error) {
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

// List writes a table of the episodes of s in start order: id, level,
// domain, policy, start, end and step count; level and domain, when not
// empty, select. path names the store when there is none.
func List(w io.Writer, s *store.Store, path, level, domain string) error {
	stdout := w
	eps, err := s.Episodes()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLEVEL\tDOMAIN\tPOLICY\tSTARTED\tENDED\tSTEPS")
	shown := 0
	for _, e := range eps {
		if (level != "" && e.Level != level) || (domain != "" && e.Domain != domain) {
			continue
		}
		n, err := s.StepCount(e.ID)
		if err != nil {
			return err
		}
		ended := "running"
		if !e.Running() {
			ended = formatTime(e.Ended)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\n", e.ID, e.Level, dash(e.Domain), dash(e.Policy), formatTime(e.Started), ended, n)
		shown++
	}
	if shown == 0 {
		fmt.Fprintf(stdout, "no episodes in %s\n", path)
		return nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return nil
}

// errLimit stops a step walk at the limit.
var errLimit = errors.New("limit reached")

// Show writes the steps of episode id from from (inclusive) to to
// (exclusive) in time order, at most limit of them (0: all): time, sequence
// number, the action acted on, the reward total, key outcomes and the guards
// that changed the policy's output. It stops when ctx ends.
func Show(ctx context.Context, w io.Writer, s *store.Store, id string, from, to time.Time, limit int) error {
	stdout := w
	e, err := s.Episode(id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "episode %s: %s %s, policy %s, cluster %s, %s .. %s, %d observation features (v%d)\n\n",
		e.ID, e.Level, dash(e.Domain), dash(e.Policy), dash(e.Cluster), formatTime(e.Started), formatTime(e.Ended), len(e.ObsLayout), e.ObsVersion)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tSEQ\tACTION\tREWARD\tOUTCOME\tGUARDS")
	n := 0
	err = s.Steps(e.ID, from, to, func(st store.Step) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if limit > 0 && n == limit {
			return errLimit
		}
		n++
		reward := "-"
		if r, ok := st.Reward["total"]; ok {
			reward = num(r)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", formatTime(st.At), st.Seq, summary(st.Action, nil, 4),
			reward, summary(st.Outcome, keyOutcomes, 3), guards(st.Guards))
		return nil
	})
	if err != nil && !errors.Is(err, errLimit) {
		return err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case n == 0:
		fmt.Fprintln(stdout, "no steps in that range")
	case errors.Is(err, errLimit):
		fmt.Fprintf(stdout, "... more steps follow; narrow with --from/--to or raise --limit (0: all)\n")
	}
	return nil
}

// WriteStats writes a summary of s, the store at path: episodes, steps in total,
// per level and per domain, their time span, the file size, guarded steps,
// the mean reward total, and a line per episode.
func WriteStats(w io.Writer, s *store.Store, path string) error {
	stdout := w
	st, err := s.Stats()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "store\t%s (%s)\n", path, byteSize(st.FileBytes))
	fmt.Fprintf(tw, "episodes\t%d\n", st.Episodes)
	fmt.Fprintf(tw, "steps\t%d\n", st.Steps)
	for _, level := range sortedKeys(st.StepsByLevel) {
		fmt.Fprintf(tw, "  level %s\t%d\n", level, st.StepsByLevel[level])
	}
	for _, d := range sortedKeys(st.StepsByDomain) {
		fmt.Fprintf(tw, "  domain %s\t%d\n", d, st.StepsByDomain[d])
	}
	if st.Steps > 0 {
		fmt.Fprintf(tw, "span\t%s .. %s (%s)\n", formatTime(st.First), formatTime(st.Last), st.Last.Sub(st.First))
		fmt.Fprintf(tw, "guarded steps\t%d (%.1f%%)\n", st.GuardedSteps, 100*float64(st.GuardedSteps)/float64(st.Steps))
	}
	if st.RewardSteps > 0 {
		fmt.Fprintf(tw, "reward mean\t%.4g (total, over %d steps)\n", st.RewardMean, st.RewardSteps)
	}
	fmt.Fprintf(tw, "ledger entries\t%d\n", st.LedgerEntries)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(st.PerEpisode) == 0 {
		return nil
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EPISODE\tLEVEL\tDOMAIN\tSTEPS\tGUARDED\tREWARD_MEAN\tFIRST\tLAST")
	for _, e := range st.PerEpisode {
		reward := "-"
		if e.RewardSteps > 0 {
			reward = num(e.RewardMean)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", e.ID, e.Level, dash(e.Domain), e.Steps, e.GuardedSteps, reward, formatTime(e.First), formatTime(e.Last))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return nil
}

// Prune deletes the steps and ledger entries of s before cutoff, and the
// ended episodes left without steps, and writes what it removed.
func Prune(w io.Writer, s *store.Store, cutoff time.Time) error {
	stdout := w
	before, err := s.Episodes()
	if err != nil {
		return err
	}
	removed, err := s.Prune(cutoff)
	if err != nil {
		return err
	}
	after, err := s.Episodes()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pruned %d steps and ledger entries before %s; removed %d ended, empty episodes\n",
		removed, formatTime(cutoff), len(before)-len(after))
	return nil
}

// Export writes the steps f selects to w, or to the file out when not "",
// as JSON lines (format "jsonl") or CSV ("csv"): see store.ExportJSONL and
// store.ExportCSV.
func Export(w io.Writer, s *store.Store, f store.Filter, format, out string) error {
	var file *os.File
	if out != "" {
		var err error
		if file, err = os.Create(out); err != nil {
			return err
		}
		w = file
	}
	var err error
	if format == "csv" {
		err = s.ExportCSV(w, f)
	} else {
		err = s.ExportJSONL(w, f)
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
