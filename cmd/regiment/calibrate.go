package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/regimentd/regiment/calibrate"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
	"github.com/regimentd/regiment/recording"
	"github.com/regimentd/regiment/store"
)

const calibrateUsage = `Usage: regiment calibrate --config F --episodes DIR [--out calibrated.hcl] [--json report.json]

Fits the simulator to what the Soldiers recorded, per app set of the config:

  service_time  from cpu_util = rps x service_time / (ready x concurrency),
                the median over ticks with cpu_util in [0.05, 0.95]
  startup_time  from replicas seen starting to the same replicas ready
                (first in, first out), the median; resolution one Soldier tick
  call_ratio    for sets with depends_on: the least-squares slope of the
                callee's rps changes on the callers' rps changes

Then it replays the recorded demand and replica targets through the simulator,
with the config as given and with the calibrated one, and reports the Pearson r
between recorded and simulated p99 and served rps, per domain and overall.
A series passes at r >= --target (0.85). Exit status 0: every series passes
after calibration; 1: some fail (the outputs are still written) or an error.

The episodes are the Soldier episodes of DIR/regiment.db (DIR is the --data
directory of "regiment run" or the daemons' store directory), or of a bbolt
file given directly. Soldier steps hold per-app telemetry ("rps/<app>",
"cpu_util/<app>", ... outcome keys) from this version of Regiment on; older
steps are skipped. The store must not be held by a running daemon.

--out writes the config file with the applied estimates edited in place
(comments and layout kept); --json writes the full report (estimates, samples,
scores before and after). "regiment train --episodes DIR" runs the same
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
	episodes := fs.String("episodes", "", "store `dir`ectory holding regiment.db, or a bbolt file; required")
	out := fs.String("out", "", "write the calibrated config (HCL) to `file`")
	jsonOut := fs.String("json", "", "write the report as JSON to `file`")
	target := fs.Float64("target", 0.85, "Pearson r each replayed series must reach")
	minSamples := fs.Int("min-samples", 30, "fewest samples an estimate needs to replace the configured value")
	fs.Usage = func() {
		fmt.Fprint(stderr, calibrateUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
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
		b, err := json.MarshalIndent(res, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "regiment calibrate: write report: %v\n", err)
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
// directory holding regiment.db, or a bbolt file) with the default options,
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
	path := episodesDir
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "regiment.db")
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open episodes: no store at %s (point --episodes at the directory a commander, soldier or \"regiment run\" wrote)", path)
	}
	st, err := store.Open(path, store.Options{ReadOnly: true})
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("open episodes: %s is locked by another process (a running daemon or \"regiment run\"); stop it or calibrate a copy", path)
	}
	if err != nil {
		return nil, fmt.Errorf("open episodes %q: %w", path, err)
	}
	defer st.Close()
	runs, err := readRuns(ctx, st, cfg, progress)
	if err != nil {
		return nil, err
	}
	res, err := calibrate.Fit(cfg, runs, opt)
	if err != nil {
		return nil, fmt.Errorf("calibrate from %s: %w", path, err)
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

// readRuns reads every Soldier episode of cfg's cluster and domains and
// groups episodes that overlap in time, one per domain, into runs.
func readRuns(ctx context.Context, st *store.Store, cfg *domains.Config, progress io.Writer) ([]*calibrate.Run, error) {
	eps, err := st.Episodes()
	if err != nil {
		return nil, fmt.Errorf("list episodes: %w", err)
	}
	// index[domain]["domain/app"] is the app's position in its domain.
	index := make([]map[string]int, len(cfg.Domains))
	for i := range index {
		index[i] = map[string]int{}
	}
	for _, a := range cfg.Apps() {
		index[a.Domain][a.Name] = len(index[a.Domain])
	}
	bar := newProgress(progress)
	defer bar.done()
	var series []*episodeSeries
	steps, without := 0, 0
	for _, e := range eps {
		di := cfg.Domain(e.Domain)
		if e.Level != "soldier" || di < 0 || (e.Cluster != "" && e.Cluster != cfg.Cluster.Name) {
			continue
		}
		es := &episodeSeries{ep: e, domain: di, apps: make([][]float64, len(index[di])*len(appMetrics))}
		err := st.Steps(e.ID, time.Time{}, time.Time{}, func(s store.Step) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			steps++
			bar.update(false, "reading episodes: %d steps, episode %s", steps, e.ID)
			if _, ok := s.Outcome[recording.AppKey(recording.AppRPS, firstApp(index[di]))]; !ok {
				without++
				return nil
			}
			es.at = append(es.at, s.At)
			es.p99 = append(es.p99, outcome(s, "p99_seconds"))
			es.errs = append(es.errs, outcome(s, "error_rate"))
			for j := range es.apps {
				es.apps[j] = append(es.apps[j], nanValue)
			}
			n := len(es.at) - 1
			for k, v := range s.Outcome {
				metric, app, ok := recording.SplitAppKey(k)
				if !ok {
					continue
				}
				ai, ok := index[di][app]
				if !ok {
					continue
				}
				if m := slices.Index(appMetrics, metric); m >= 0 {
					es.apps[ai*len(appMetrics)+m][n] = v
				}
			}
			for app, ai := range index[di] {
				if s.Outcome[recording.AppKey(recording.AppBlind, app)] == 1 {
					for m := range appMetrics {
						es.apps[ai*len(appMetrics)+m][n] = nanValue
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read episode %q: %w", e.ID, err)
		}
		if len(es.at) > 0 {
			es.first, es.last = es.at[0], es.at[len(es.at)-1]
			series = append(series, es)
		}
	}
	bar.done()
	if without > 0 {
		fmt.Fprintf(progress, "skipped %d steps without per-app telemetry (recorded by an older Regiment)\n", without)
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("no Soldier steps with per-app telemetry for cluster %q in the store (%d steps read)", cfg.Cluster.Name, steps)
	}
	runs := groupRuns(cfg, series)
	fmt.Fprintf(progress, "read %d steps of %d Soldier episodes: %d run(s)\n", steps, len(series), len(runs))
	return runs, nil
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
