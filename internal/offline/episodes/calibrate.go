package episodes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/calibrate"
)

// Runs are the Soldier episodes read for calibration.
type Runs struct {
	Runs     []*calibrate.Run // the episodes grouped into runs of the cluster
	Stores   []string         // the stores read, by Source.Name: a file's path or a daemon's URL
	Episodes int              // Soldier episodes with per-app telemetry
	Steps    int              // steps read
	Without  int              // steps skipped: without per-app telemetry (recorded by an older Regiment)
}

// ReadRuns reads the Soldier episodes of cfg's cluster and domains stored in
// srcs (Sources: bbolt files, and snapshots downloaded from running
// daemons) into calibration runs (calibrate.Fit). onRead, when not nil,
// sees the steps read so far and the episode being read.
func ReadRuns(ctx context.Context, cfg *domains.Config, srcs []Source, onRead func(steps int, episode string)) (Runs, error) {
	if len(srcs) == 0 {
		return Runs{}, errors.New("open episodes: no store given")
	}
	if onRead == nil {
		onRead = func(int, string) {}
	}
	r := &seriesReader{cfg: cfg, onRead: onRead}
	names := make([]string, 0, len(srcs))
	for _, src := range srcs {
		names = append(names, src.Name)
		if err := r.readFile(ctx, src); err != nil {
			return Runs{}, err
		}
	}
	rd := Runs{Stores: names, Episodes: len(r.series), Steps: r.steps, Without: r.without}
	if len(r.series) > 0 {
		rd.Runs = groupRuns(cfg, r.series)
	}
	return rd, nil
}

// Fit fits cfg to the runs read with calibrate.Fit and opt; progress gets
// what was read and skipped first.
func (rd Runs) Fit(cfg *domains.Config, opt calibrate.Options, progress io.Writer) (*calibrate.Result, error) {
	if rd.Without > 0 {
		fmt.Fprintf(progress, "skipped %d steps without per-app telemetry (recorded by an older Regiment)\n", rd.Without)
	}
	if rd.Episodes == 0 {
		return nil, fmt.Errorf("no Soldier steps with per-app telemetry for cluster %q in %s (%d steps read)", cfg.Cluster.Name, strings.Join(rd.Stores, ", "), rd.Steps)
	}
	fmt.Fprintf(progress, "read %d steps of %d Soldier episodes from %d store(s): %d run(s)\n", rd.Steps, rd.Episodes, len(rd.Stores), len(rd.Runs))
	res, err := calibrate.Fit(cfg, rd.Runs, opt)
	if err != nil {
		return nil, fmt.Errorf("calibrate from %s: %w", strings.Join(rd.Stores, ", "), err)
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

// StoreFiles resolves --episodes: a comma-separated list of bbolt files and
// directories, a directory standing for every *.db file in it (regiment.db
// of "regiment run", soldier-<domain>.db of the Soldier daemons).
func StoreFiles(spec string) ([]string, error) {
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
	onRead  func(steps int, episode string)
	index   []map[string]int // [domain]["domain/app"]: the app's position in its domain
	series  []*episodeSeries
	steps   int
	without int // steps without per-app telemetry
}

func (r *seriesReader) readFile(ctx context.Context, src Source) error {
	st, err := src.Open("calibrate")
	if err != nil {
		return err
	}
	defer st.Close()
	return r.read(ctx, st, src.Name)
}

// read reads the store st, called name in errors.
func (r *seriesReader) read(ctx context.Context, st *store.Store, name string) error {
	cfg := r.cfg
	eps, err := st.Episodes()
	if err != nil {
		return fmt.Errorf("list episodes of %s: %w", name, err)
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
			r.onRead(r.steps, e.ID)
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
			return fmt.Errorf("read episode %q of %s: %w", e.ID, name, err)
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

// Calibrate fits cfg to the Soldier episodes stored in spec (a directory
// whose *.db stores are read, a bbolt file, or a comma-separated list of
// both; StoreFiles) with the default options, and validates the result by
// replay; progress, when not nil, gets a progress line while steps are read
// and a summary. cfg is not modified: the calibrated config is
// Result.Config. "regiment train --episodes" calls it.
func Calibrate(ctx context.Context, cfg *domains.Config, spec string, progress io.Writer) (*calibrate.Result, error) {
	paths, err := StoreFiles(spec)
	if err != nil {
		return nil, err
	}
	srcs := make([]Source, len(paths))
	for i, p := range paths {
		srcs[i] = Source{Name: p, Path: p}
	}
	return CalibrateFrom(ctx, cfg, srcs, progress, calibrate.Options{})
}

// CalibrateFrom is Calibrate with options, from the stores srcs (Sources:
// files, and running daemons' snapshots): `regiment calibrate`.
func CalibrateFrom(ctx context.Context, cfg *domains.Config, srcs []Source, progress io.Writer, opt calibrate.Options) (*calibrate.Result, error) {
	if progress == nil {
		progress = io.Discard
	}
	bar := cli.NewProgress(progress)
	rd, err := ReadRuns(ctx, cfg, srcs, func(steps int, episode string) {
		bar.Update(false, "reading episodes: %d steps, episode %s", steps, episode)
	})
	bar.Done()
	if err != nil {
		return nil, err
	}
	return rd.Fit(cfg, opt, progress)
}

// CalibrateStores is CalibrateFrom on the stores of spec (Resolve, with
// the token of tokenFile): `regiment calibrate`. The snapshots it
// downloaded from daemons are removed when it returns.
func CalibrateStores(ctx context.Context, cfg *domains.Config, spec, tokenFile string, progress io.Writer, opt calibrate.Options) (*calibrate.Result, error) {
	srcs, done, err := Resolve(ctx, spec, tokenFile)
	defer done()
	if err != nil {
		return nil, err
	}
	return CalibrateFrom(ctx, cfg, srcs, progress, opt)
}
