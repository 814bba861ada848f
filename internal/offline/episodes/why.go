package episodes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/wire"
)

// meanMaxSteps bounds the steps Why averages: longer episodes use the
// meanWindow before T instead of the whole episode.
const (
	meanMaxSteps = 100000
	meanWindow   = 6 * time.Hour
	topInputs    = 8
)

// pick finds the episode of a level (and domain, and cluster when both
// are known) in effect at t: the latest started one covering t, else the
// latest started before t.
func pick(eps []store.Episode, level, domain, cluster string, t time.Time) (store.Episode, bool) {
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

// namesDomain reports whether an output key names the domain as one of
// its "/"-separated parts ("share/payment", "cores/payment").
func namesDomain(key, domain string) bool {
	return slices.Contains(strings.Split(key, "/"), domain)
}

// inputs prints the observation features that moved furthest from the
// episode's mean.
func inputs(ctx context.Context, w io.Writer, s *store.Store, e store.Episode, st store.Step, at time.Time) error {
	if len(st.Obs) == 0 {
		fmt.Fprintln(w, "inputs: the step has no observation")
		return nil
	}
	n, err := s.StepCount(e.ID)
	if err != nil {
		return err
	}
	from, scope := time.Time{}, "the episode"
	if n > meanMaxSteps {
		from, scope = at.Add(-meanWindow), fmt.Sprintf("the %s before T", meanWindow)
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
	shown := min(topInputs, len(inputs))
	fmt.Fprintf(w, "inputs that mattered (top %d of %d by %s):\n", shown, len(inputs), by)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  FEATURE\tVALUE\tMEAN\tDEVIATION")
	for _, in := range inputs[:shown] {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%+.4g\n", in.name, num(in.value), num(in.mean), in.value-in.mean)
	}
	return tw.Flush()
}

// Why explains the decision in effect for domain at time at: the Soldier
// step at or before it, the inputs that mattered, the output acted on, the
// guards that changed it, the reward terms and outcome, the Commander's
// outputs for the domain, its cluster-wide outputs and the pool it saw
// (printPool), and the ledger entries within window of at. It
// is WhyApp for every app.
func Why(ctx context.Context, w io.Writer, s *store.Store, domain string, at time.Time, window time.Duration) error {
	return WhyApp(ctx, w, s, domain, "", at, window)
}

// ErrUnknown is wrapped by the error for a domain or app the store has
// not recorded but a close one (a misspelling): a usage error, whose
// message suggests the closest name.
var ErrUnknown = errors.New("not recorded")

// unknownName is the error for name, not one of known: ErrUnknown when one
// is close (cli.Suggest), else a plain error listing them.
func unknownName(what, name string, known []string) error {
	err := cli.UnknownName(what, name, "the store", known)
	if _, ok := cli.Suggest(name, known); ok {
		return unknownError{err}
	}
	return err
}

// unknownError is an error that is ErrUnknown, with its own message.
type unknownError struct{ error }

func (unknownError) Is(target error) bool { return target == ErrUnknown }

// CheckDomain returns an error wrapping ErrUnknown, naming the closest
// recorded domain, when the store has no episode of domain but one of a
// domain close to it (a misspelling); else nil, and the caller goes on to
// find nothing.
func CheckDomain(s *store.Store, domain string) error {
	eps, err := s.Episodes()
	if err != nil {
		return err
	}
	var known []string
	for _, e := range eps {
		if e.Domain == domain {
			return nil
		}
		if e.Domain != "" && !slices.Contains(known, e.Domain) {
			known = append(known, e.Domain)
		}
	}
	if _, ok := cli.Suggest(domain, known); !ok {
		return nil
	}
	return unknownName("domain", domain, known)
}

// FarStep is how far before T the step Why explains may be before it warns
// that the episode has no step near T, unless the window is longer.
const FarStep = 5 * time.Minute

// WhyApp is Why restricted to one app of the domain when app is not empty:
// the step's domain-wide values and those of app ("domain/app", or app
// within the domain), no other app's. An app the step does not know is an
// error, wrapping ErrUnknown and naming the closest when one is close. When the step is more
// than max(window, FarStep) before at, it warns first: the episode has no
// step near T, and the answer is about another time.
func WhyApp(ctx context.Context, w io.Writer, s *store.Store, domain, app string, at time.Time, window time.Duration) error {
	stdout := w
	eps, err := s.Episodes()
	if err != nil {
		return err
	}
	sol, ok := pick(eps, "soldier", domain, "", at)
	if !ok {
		if err := CheckDomain(s, domain); err != nil {
			return err
		}
		return fmt.Errorf("no soldier episode for domain %q started at or before %s (see: regiment episodes list --domain %s)", domain, formatTime(at), domain)
	}
	st, ok, err := s.StepAt(sol.ID, at)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("soldier episode %s has no step at or before %s", sol.ID, formatTime(at))
	}
	only, err := appsOf(st, domain).only(app)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "decision for domain %s at %s\n", domain, at.UTC().Format(time.RFC3339Nano))
	if gap := at.Sub(st.At); gap > max(window, FarStep) {
		fmt.Fprintf(stdout, "warning: the nearest step is %s before T, more than %s: the episode has no step near T, and what follows is about %s (see: regiment episodes list --domain %s)\n",
			span(gap), max(window, FarStep), formatTime(st.At), domain)
	}
	fmt.Fprintf(stdout, "soldier episode %s (policy %s, cluster %s), step %d at %s (%s before)\n",
		sol.ID, dash(sol.Policy), dash(sol.Cluster), st.Seq, formatTime(st.At), at.Sub(st.At).Round(time.Millisecond))
	if only.app != "" {
		fmt.Fprintf(stdout, "app %s only (and the domain's own values)\n", only.app)
	}
	fmt.Fprintln(stdout)

	if err := inputs(ctx, stdout, s, sol, st, at); err != nil {
		return err
	}

	action, outcome, guards := only.values(st.Action), only.values(st.Outcome), only.guards(st.Guards)
	fmt.Fprintln(stdout, "\npolicy output (acted on):")
	table(stdout, action, nil)
	printGuards(stdout, guards, func(g store.Guard) bool { return g.Name != guardWriteFailed })
	printNotWritten(stdout, guards)
	printAtMax(stdout, outcome)
	printLimited(stdout, outcome)
	printLearned(stdout, outcome)
	fmt.Fprintln(stdout, "\nreward terms:")
	table(stdout, st.Reward, []string{"total"})
	fmt.Fprintln(stdout, "\noutcome:")
	table(stdout, outcome, keyOutcomes)

	if cmd, ok := pick(eps, "commander", "", sol.Cluster, at); ok {
		cst, ok, err := s.StepAt(cmd.ID, at)
		if err != nil {
			return err
		}
		if ok {
			fmt.Fprintf(stdout, "\ncommander episode %s (policy %s), step %d at %s, outputs for %s:\n", cmd.ID, dash(cmd.Policy), cst.Seq, formatTime(cst.At), domain)
			mine := map[string]float64{}
			for k, v := range cst.Action {
				if namesDomain(k, domain) {
					mine[k] = v
				}
			}
			if len(mine) == 0 {
				fmt.Fprintf(stdout, "  none (no output named like share/%s)\n", domain)
			} else {
				table(stdout, mine, nil)
			}
			printGuards(stdout, cst.Guards, func(g store.Guard) bool { return namesDomain(g.Target, domain) })
			printPool(stdout, cmd, cst)
		} else {
			fmt.Fprintf(stdout, "\ncommander episode %s has no step at or before T\n", cmd.ID)
		}
	} else {
		fmt.Fprintln(stdout, "\nno commander episode covers T")
	}

	return ledger(stdout, s, domain, at, window)
}

// printPool prints the Commander step's cluster-wide outputs (those named
// for no domain: the reserve, the capacity plan) and the pool as its
// observation saw it (the features named cluster.*), when it has any.
func printPool(w io.Writer, e store.Episode, st store.Step) {
	outputs := map[string]float64{}
	for k, v := range st.Action {
		if !strings.Contains(k, "/") {
			outputs[k] = v
		}
	}
	if len(outputs) > 0 {
		fmt.Fprintln(w, "cluster-wide outputs:")
		table(w, outputs, nil)
	}
	pool := map[string]float64{}
	for i, name := range e.ObsLayout {
		if (strings.HasPrefix(name, "cluster.") || name == "time.event") && i < len(st.Obs) {
			pool[name] = st.Obs[i]
		}
	}
	if len(pool) > 0 {
		fmt.Fprintln(w, "the pool as the Commander saw it (features: nodes in thousands, cores as shares of the pool; time.event 1: a calendar event in its window):")
		table(w, pool, nil)
	}
}

// ledger writes the ledger entries for domain (and cluster-wide ones)
// within window of at.
func ledger(stdout io.Writer, s *store.Store, domain string, at time.Time, window time.Duration) error {
	fmt.Fprintf(stdout, "\nledger for %s (and cluster-wide) from %s to %s:\n", domain, formatTime(at.Add(-window)), formatTime(at.Add(window)))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	n := 0
	err := s.Ledger(at.Add(-window), at.Add(window), "", func(e store.LedgerEntry) error {
		if e.Domain != "" && e.Domain != domain {
			return nil
		}
		n++
		vals := ""
		if len(e.Values) > 0 {
			vals = summary(e.Values, nil, 6)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", formatTime(e.At), dash(e.Domain), e.Kind, wire.CleanText(e.Detail, 0), vals)
		return nil
	})
	if err != nil {
		return err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(stdout, "  none")
	}
	return nil
}

// table prints m as indented "key value" lines, first keys first.
func table(w io.Writer, m map[string]float64, first []string) {
	if len(m) == 0 {
		fmt.Fprintln(w, "  none recorded")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range orderedKeys(m, first) {
		fmt.Fprintf(tw, "  %s\t%s\n", k, num(m[k]))
	}
	tw.Flush()
}

// guardWriteFailed is the guard a Soldier step records for an app it could
// not write (recording.GuardWriteFailed).
const guardWriteFailed = "write_failed"

// printNotWritten prints the apps the step could not write, and why.
func printNotWritten(w io.Writer, gs []store.Guard) {
	var failed []store.Guard
	for _, g := range gs {
		if g.Name == guardWriteFailed {
			failed = append(failed, g)
		}
	}
	if len(failed) == 0 {
		return
	}
	fmt.Fprintln(w, "apps not written (target -> replicas kept):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, g := range failed {
		fmt.Fprintf(tw, "  %s\t%s -> %s\t%s\n", g.Target, num(g.Before), num(g.After), wire.CleanText(g.Reason, 0))
	}
	tw.Flush()
}

// printAtMax prints the apps that breached with their max_replicas ready at
// the step (recording.AppAtMax), sorted: their ceiling held them, not the
// policy.
func printAtMax(w io.Writer, outcome map[string]float64) {
	printApps(w, outcome, recording.AppAtMax, "apps breaching with max_replicas ready (raise their max_replicas; no autoscaler serves them)",
		func(app string, v float64) string {
			if v != 1 {
				return ""
			}
			return app
		})
}

// printLimited prints the apps whose sizing wanted more replicas than
// their ceiling at the step (recording.AppLimited), sorted, with the
// replicas wanted: the apps to raise max_replicas for before they breach.
func printLimited(w io.Writer, outcome map[string]float64) {
	printApps(w, outcome, recording.AppLimited, "apps whose sizing wants more than their max_replicas (raise it before they breach)",
		func(app string, v float64) string { return fmt.Sprintf("%s (wants %s)", app, num(v)) })
}

// printApps prints, after title, the step's apps with an outcome of metric,
// each as entry says ("" leaves it out), sorted; nothing when none.
func printApps(w io.Writer, outcome map[string]float64, metric, title string, entry func(app string, v float64) string) {
	var apps []string
	for k, v := range outcome {
		if m, app, ok := recording.SplitAppKey(k); ok && m == metric {
			if e := entry(app, v); e != "" {
				apps = append(apps, e)
			}
		}
	}
	if len(apps) == 0 {
		return
	}
	slices.Sort(apps)
	fmt.Fprintf(w, "%s: %s\n", title, strings.Join(apps, ", "))
}

// printGuards prints the guards that changed an output, and those that
// give a reason (an app left alone to another owner) whether or not they
// changed it (keep: nil for all).
func printGuards(w io.Writer, gs []store.Guard, keep func(store.Guard) bool) {
	var changed []store.Guard
	for _, g := range gs {
		if (g.Changed() || g.Reason != "") && (keep == nil || keep(g)) {
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
		fmt.Fprintf(tw, "  %s\t%s\t%s -> %s\t%s\n", g.Name, g.Target, num(g.Before), num(g.After), wire.CleanText(g.Reason, 0))
	}
	tw.Flush()
}

// printLearned prints the service and startup times the Soldier learned of
// the apps whose config sets no service time (recording.AppServiceTime,
// AppStartupTime), sorted by app; nothing when the step has none.
func printLearned(w io.Writer, outcome map[string]float64) {
	learned := map[string][2]float64{}
	for k, v := range outcome {
		m, app, ok := recording.SplitAppKey(k)
		if !ok || (m != recording.AppServiceTime && m != recording.AppStartupTime) {
			continue
		}
		l := learned[app]
		if m == recording.AppServiceTime {
			l[0] = v
		} else {
			l[1] = v
		}
		learned[app] = l
	}
	if len(learned) == 0 {
		return
	}
	seconds := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		return time.Duration(v * float64(time.Second)).Round(10 * time.Microsecond).String()
	}
	fmt.Fprintln(w, "learned from observations (apps whose config sets no service_time):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  APP\tSERVICE TIME\tSTARTUP")
	for _, app := range slices.Sorted(maps.Keys(learned)) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", app, seconds(learned[app][0]), seconds(learned[app][1]))
	}
	tw.Flush()
}

// stepApps is the apps a Soldier step has values for: the part after the
// metric of its replica actions and per-app outcomes ("replicas/<app>",
// "target/<app>"), with the one WhyApp keeps (empty: all).
type stepApps struct {
	apps map[string]bool
	app  string
}

// appsOf collects the apps of st.
func appsOf(st store.Step, domain string) stepApps {
	a := stepApps{apps: map[string]bool{}}
	for _, m := range []map[string]float64{st.Action, st.Outcome} {
		for k := range m {
			if metric, app, ok := recording.SplitAppKey(k); ok && (metric == "replicas" || metric == recording.AppTarget) {
				a.apps[app] = true
			}
		}
	}
	return a
}

// only returns a keeping app alone: app itself or "<domain>/<app>" when the
// step has it; empty keeps every app.
func (a stepApps) only(app string) (stepApps, error) {
	if app == "" {
		return a, nil
	}
	names := make([]string, 0, len(a.apps))
	for n := range a.apps {
		if n == app {
			a.app = n
			return a, nil
		}
		names = append(names, n)
	}
	for n := range a.apps {
		if _, short, ok := strings.Cut(n, "/"); ok && short == app {
			a.app = n
			return a, nil
		}
	}
	slices.Sort(names)
	return a, unknownName("app", app, names)
}

// appOf is the app a key or guard target is for, "" for a domain-wide one:
// the key itself or its part after the metric, when an app of the step.
func (a stepApps) appOf(key string) string {
	if a.apps[key] {
		return key
	}
	if _, rest, ok := strings.Cut(key, "/"); ok && a.apps[rest] {
		return rest
	}
	return ""
}

// keep reports whether a key or guard target belongs in the output.
func (a stepApps) keep(key string) bool {
	app := a.appOf(key)
	return a.app == "" || app == "" || app == a.app
}

// values is m without the other apps' keys.
func (a stepApps) values(m map[string]float64) map[string]float64 {
	if a.app == "" {
		return m
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		if a.keep(k) {
			out[k] = v
		}
	}
	return out
}

// guards is gs without the other apps' guards.
func (a stepApps) guards(gs []store.Guard) []store.Guard {
	if a.app == "" {
		return gs
	}
	var out []store.Guard
	for _, g := range gs {
		if a.keep(g.Target) {
			out = append(out, g)
		}
	}
	return out
}

// span is d for a human: whole days beyond two days, else rounded to the
// second.
func span(d time.Duration) string {
	if d > 48*time.Hour {
		return fmt.Sprintf("%d days", int64(d/(24*time.Hour)))
	}
	return d.Round(time.Second).String()
}
