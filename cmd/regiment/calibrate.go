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
	"strings"
	"time"

	"github.com/regimentd/regiment/calibrate"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/recording"
	"github.com/regimentd/regiment/store"
)

const calibrateUsage = `Usage: regiment calibrate --config F --episodes DIR|FILE[,...] [--out calibrated.hcl] [--json report.json]

Fits the simulator to what the Soldiers recorded, per app set of the config:

  service_time  from cpu_util = rps x service_time / (ready x concurrency),
                the median over ticks with cpu_util in [0.05, 0.95]
  startup_time  from replicas seen starting to the same replicas ready
                (first in, first out), the median; resolution one Soldier tick
  call_ratio    for sets with depends_on: the least-squares slope of the
                callee's rps changes on the callers' rps changes, at most
                the callee's smallest rps / callers' rps

An estimate replaces the configured value when it has --min-samples samples;
apps without traffic keep theirs.

Then it replays the recorded demand and replica targets through the simulator,
with the config as given and with the calibrated one, and reports the Pearson r
between recorded and simulated p99 and served rps, per domain and overall.
A series passes at r >= --target (0.85); a domain whose recording is constant
(no traffic) is shown as SKIP. Exit status 0: every series passes after
calibration; 1: some fail (the outputs are still written) or an error.

The episodes are the Soldier episodes of every *.db store in DIR (the --data
directory of "regiment run", regiment.db, or of the Soldier daemons,
soldier-<domain>.db), or of bbolt files given directly; a comma-separated list
combines stores copied from several hosts. Episodes that overlap in time form
one run, replayed together. Soldier steps hold per-app telemetry
("rps/<app>", "cpu_util/<app>", ... outcome keys) from this version of
Regiment on; older steps are skipped. A store held by a running daemon is
locked: stop it, or calibrate a copy taken while it was stopped.

--out writes a copy of the config with the changed values edited in (comments
kept, layout as hclfmt, relative checkpoint paths rebased to the copy's
directory; the copy is checked to load); --json writes the full
report (estimates, samples, scores before and after). "regiment train --episodes DIR" runs the same
calibration before fine-tuning.

Example:
  regiment calibrate --config examples/small.hcl --episodes data --out calibrated.hcl
  regiment validate --config calibrated.hcl

Flags:
`

func runCalibrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "cluster config `file` (HCL) to calibrate; required")
	episodes := fs.String("episodes", "", "store `dir`ectory (every *.db in it), a bbolt file, or a comma-separated list; required")
	out := fs.String("out", "", "write the calibrated config (HCL) to `file`")
	jsonOut := fs.String("json", "", "write the report as JSON to `file`")
	target := fs.Float64("target", 0.85, "Pearson r each replayed series must reach")
	minSamples := fs.Int("min-samples", 30, "fewest samples an estimate needs to replace the configured value")
	fs.Usage = func() {
		fmt.Fprint(stderr, calibrateUsage)
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if *configPath == "" || *episodes == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "regiment calibrate: --config and --episodes are required, and nothing else")
		fs.Usage()
		return 2
	}
	src, err := os.ReadFile(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "regiment calibrate: %v\n", err)
		return 1
	}
	cfg, err := config.Parse(src, *configPath)
	if err != nil {
		fmt.Fprintf(stderr, "regiment calibrate: %v\n", err)
		return 1
	}
	res, err := CalibrateWith(ctx, cfg, *episodes, stderr, calibrate.Options{Target: *target, MinSamples: *minSamples})
	if err != nil {
		fmt.Fprintf(stderr, "regiment calibrate: %v\n", err)
		return 1
	}
	if err := calibrate.WriteReport(stdout, res); err != nil {
		fmt.Fprintf(stderr, "regiment calibrate: %v\n", err)
		return 1
	}
	if *out != "" {
		patched, err := calibrate.PatchHCL(src, *configPath, res.Sets)
		if err == nil {
			// Checkpoint paths are relative to the config's directory.
			patched, err = config.Relocate(patched, *configPath, *out)
		}
		if err == nil {
			// What is written must load: check it before replacing anything.
			_, err = config.Parse(patched, *out)
		}
		if err == nil {
			err = os.WriteFile(*out, patched, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "regiment calibrate: write calibrated config: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nwrote %s\n", *out)
	}
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, res); err != nil {
			fmt.Fprintf(stderr, "regiment calibrate: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", *jsonOut)
	}
	if !res.After.Pass() {
		fmt.Fprintf(stdout, "\nFAIL: some replayed series stay below r = %.2f after calibration\n", *target)
		return 1
	}
	fmt.Fprintf(stdout, "\nPASS: every replayed series reaches r >= %.2f after calibration\n", *target)
	return 0
}

// Calibrate fits cfg to the Soldier episodes stored in episodesDir (a
// directory whose *.db stores are read, a bbolt file, or a comma-separated
// list of both) with the default options,
// and validates the result by replay; progress, when not nil, gets a progress
// line while steps are read and a summary. cfg is not modified: the
// calibrated config is Result.Config. "regiment train --episodes" calls it.
func Calibrate(ctx context.Context, cfg *domains.Config, episodesDir string, progress io.Writer) (*calibrate.Result, error) {
	return CalibrateWith(ctx, cfg, episodesDir, progress, calibrate.Options{})
}

// CalibrateWith is Calibrate with options.
func CalibrateWith(ctx context.Context, cfg *domains.Config, episodesDir string, progress io.Writer, opt calibrate.Options) (*calibrate.Result, error) {
	if progress == nil {
		progress = io.Discard
	}
	paths, err := storeFiles(episodesDir)
	if err != nil {
		return nil, err
	}
	r := &seriesReader{cfg: cfg, bar: newProgress(progress)}
	for _, path := range paths {
		if err := r.readFile(ctx, path); err != nil {
			r.bar.done()
			return nil, err
		}
	}
	r.bar.done()
	if r.without > 0 {
		fmt.Fprintf(progress, "skipped %d steps without per-app telemetry (recorded by an older Regiment)\n", r.without)
	}
	if len(r.series) == 0 {
		return nil, fmt.Errorf("no Soldier steps with per-app telemetry for cluster %q in %s (%d steps read)", cfg.Cluster.Name, strings.Join(paths, ", "), r.steps)
	}
	runs := groupRuns(cfg, r.series)
	fmt.Fprintf(progress, "read %d steps of %d Soldier episodes from %d store(s): %d run(s)\n", r.steps, len(r.series), len(paths), len(runs))
	res, err := calibrate.Fit(cfg, runs, opt)
	if err != nil {
		return nil, fmt.Errorf("calibrate from %s: %w", episodesDir, err)
	}
	return res, nil
}

// episodeSeries is one Soldier episode's steps, reduced to what calibration
// reads.
type episodeSeries struct {
	ep          store.Episode
	domain      int
	at          []time.Time
	p99, errs   []float64
	apps        [][]float64 // [app index in domain * appMetrics + metric][step]
	first, last time.Time
}

// appMetrics are the per-app outcome keys read, in calibrate.App field order.
var appMetrics = []string{recording.AppRPS, recording.AppCPUUtil, recording.AppReady, recording.AppStarting, recording.AppPending, recording.AppTarget}

// storeFiles resolves --episodes: a comma-separated list of bbolt files and
// directories, a directory standing for every *.db file in it (regiment.db
// of "regiment run", soldier-<domain>.db of the Soldier daemons).
func storeFiles(spec string) ([]string, error) {
	var files []string
	for _, p := range strings.Split(spec, ",") {
		if p == "" {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("open episodes: no store at %s (point --episodes at the directory a Soldier daemon or \"regiment run\" wrote, or at a .db file)", p)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		dbs, err := filepath.Glob(filepath.Join(p, "*.db"))
		if err != nil {
			return nil, fmt.Errorf("open episodes: %w", err)
		}
		if len(dbs) == 0 {
			return nil, fmt.Errorf("open episodes: no store at %s: no *.db file in it (point --episodes at the directory a Soldier daemon or \"regiment run\" wrote)", p)
		}
		files = append(files, dbs...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("open episodes: no store given")
	}
	return files, nil
}

// seriesReader reads the Soldier episodes of cfg's cluster and domains from
// stores into per-episode series.
type seriesReader struct {
	cfg     *domains.Config
	bar     *progress
	index   []map[string]int // [domain]["domain/app"]: the app's position in its domain
	series  []*episodeSeries
	steps   int
	without int // steps without per-app telemetry
}

func (r *seriesReader) readFile(ctx context.Context, path string) error {
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("open episodes: %s is locked by another process (a running daemon or \"regiment run\"); stop it or calibrate a copy", path)
	}
	if err != nil {
		return fmt.Errorf("open episodes %q: %w", path, err)
	}
	defer st.Close()
	return r.read(ctx, st)
}

func (r *seriesReader) read(ctx context.Context, st *store.Store) error {
	cfg := r.cfg
	eps, err := st.Episodes()
	if err != nil {
		return fmt.Errorf("list episodes of %s: %w", st.Path(), err)
	}
	if r.index == nil {
		r.index = make([]map[string]int, len(cfg.Domains))
		for i := range r.index {
			r.index[i] = map[string]int{}
		}
		for _, a := range cfg.Apps() {
			r.index[a.Domain][a.Name] = len(r.index[a.Domain])
		}
	}
	for _, e := range eps {
		di := cfg.Domain(e.Domain)
		if e.Level != "soldier" || di < 0 || (e.Cluster != "" && e.Cluster != cfg.Cluster.Name) {
			continue
		}
		index := r.index[di]
		probe := recording.AppKey(recording.AppRPS, firstApp(index))
		es := &episodeSeries{ep: e, domain: di, apps: make([][]float64, len(index)*len(appMetrics))}
		err := st.Steps(e.ID, time.Time{}, time.Time{}, func(s store.Step) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			r.steps++
			r.bar.update(false, "reading episodes: %d steps, episode %s", r.steps, e.ID)
			if _, ok := s.Outcome[probe]; !ok {
				r.without++
				return nil
			}
			es.at = append(es.at, s.At)
			es.p99 = append(es.p99, outcome(s, "p99_seconds"))
			es.errs = append(es.errs, outcome(s, "error_rate"))
			for j := range es.apps {
				v := nanValue
				if m := j % len(appMetrics); appMetrics[m] == recording.AppStarting || appMetrics[m] == recording.AppPending {
					v = 0 // recorded only when not 0
				}
				es.apps[j] = append(es.apps[j], v)
			}
			n := len(es.at) - 1
			for k, v := range s.Outcome {
				metric, app, ok := recording.SplitAppKey(k)
				if !ok {
					continue
				}
				ai, ok := index[app]
				if !ok {
					continue
				}
				if m := slices.Index(appMetrics, metric); m >= 0 {
					es.apps[ai*len(appMetrics)+m][n] = v
				}
			}
			for app, ai := range index {
				if s.Outcome[recording.AppKey(recording.AppBlind, app)] == 1 {
					for m := range appMetrics {
						es.apps[ai*len(appMetrics)+m][n] = nanValue
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("read episode %q of %s: %w", e.ID, st.Path(), err)
		}
		if len(es.at) > 0 {
			es.first, es.last = es.at[0], es.at[len(es.at)-1]
			r.series = append(r.series, es)
		}
	}
	return nil
}

var nanValue = math.NaN()

func outcome(s store.Step, key string) float64 {
	if v, ok := s.Outcome[key]; ok {
		return v
	}
	return nanValue
}

// firstApp is the name of the app at position 0.
func firstApp(index map[string]int) string {
	for name, i := range index {
		if i == 0 {
			return name
		}
	}
	return ""
}

// groupRuns puts episodes that overlap in time into one run, at most one per
// domain: in start order, each episode joins the first run it overlaps that
// lacks its domain.
func groupRuns(cfg *domains.Config, series []*episodeSeries) []*calibrate.Run {
	slices.SortStableFunc(series, func(a, b *episodeSeries) int {
		return cmp.Or(a.first.Compare(b.first), cmp.Compare(a.domain, b.domain))
	})
	type group struct {
		first, last time.Time
		members     []*episodeSeries
		has         []bool
	}
	var groups []*group
	for _, es := range series {
		var g *group
		for _, c := range groups {
			if !c.has[es.domain] && !es.first.After(c.last) && !es.last.Before(c.first) {
				g = c
				break
			}
		}
		if g == nil {
			g = &group{first: es.first, last: es.last, has: make([]bool, len(cfg.Domains))}
			groups = append(groups, g)
		}
		g.members = append(g.members, es)
		g.has[es.domain] = true
		if es.first.Before(g.first) {
			g.first = es.first
		}
		if es.last.After(g.last) {
			g.last = es.last
		}
	}
	tick := cfg.Soldier.Tick
	runs := make([]*calibrate.Run, 0, len(groups))
	for _, g := range groups {
		n := int(g.last.Sub(g.first)/tick) + 1
		r := calibrate.NewRun(cfg, g.members[0].ep.ID, g.first, tick, n)
		for _, es := range g.members {
			d := &r.Domains[es.domain]
			for s, at := range es.at {
				k, ok := r.Index(at)
				if !ok {
					continue
				}
				d.P99[k], d.ErrorRate[k] = es.p99[s], es.errs[s]
				for ai := range d.Apps {
					a := &d.Apps[ai]
					for m, dst := range [][]float64{a.RPS, a.CPUUtil, a.Ready, a.Starting, a.Pending, a.Target} {
						dst[k] = es.apps[ai*len(appMetrics)+m][s]
					}
				}
			}
		}
		runs = append(runs, r)
	}
	return runs
}
