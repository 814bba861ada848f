// Command regimes prints the regime statistics of scenario sets side by
// side: for each scenario, the per-minute demand of each distinct trace
// window it replays (a timeseries trace's window, or an azure-functions
// block's functions summed over the domain), its minute-to-minute jitter,
// its residual around a smooth trend (and the Poisson share of it), its
// 5-minute rise quantiles and its peak over mean; then each set's figures
// per regime, pooled. Statistics are of the traces as the scenarios replay
// them, before peak_rps scaling, events and noise: the kinds of day a set
// holds. The formulas are in Stats.
//
//	go run ./hack/regimes --config examples/seedscale.hcl examples/scenarios/seed/train examples/scenarios/seed/eval
//
// docs/seed-scale.md ("The training and evaluation split") reads its output,
// and the residuals size the seed scenarios' burst_sigma (docs/simulator.md).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// tournament is the first day of the 1998 World Cup (10 June): the
// WorldCup98 trace's minutes before it are its quiet regime.
var tournament = time.Date(1998, 6, 10, 0, 0, 0, 0, time.UTC)

// Regimes, in table order.
const (
	regimeQuiet      = "quiet"
	regimeTournament = "tournament"
	regimeFunctions  = "per-function"
)

var regimes = []string{regimeQuiet, regimeTournament, regimeFunctions}

func main() {
	cfgPath := flag.String("config", "examples/seedscale.hcl", "config the scenarios are written for")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: regimes [--config file] set-dir ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*cfgPath, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "regimes:", err)
		os.Exit(1)
	}
}

// window is one distinct trace window a scenario replays.
type window struct {
	scenario, what, regime string
	st                     Stats
	apps                   Stats // per-function blocks: every picked function's own series, pooled

	// What it reads, for the disjointness check: the trace, and its
	// minutes (timeseries, app_shift included) or its rows (azure).
	trace    string
	from, to int
	rows     domains.Rows
}

// overlaps lists the windows of set a that read what a window of set b
// reads: the same minutes of a timeseries trace (app_shift included), or
// the same rows of an azure-functions trace.
func overlaps(a, b []window) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if x.trace != y.trace {
				continue
			}
			if x.regime == regimeFunctions {
				if x.rows == domains.RowsAll || y.rows == domains.RowsAll || x.rows == y.rows {
					out = append(out, fmt.Sprintf("%s and %s replay the same %s rows of %s", x.scenario, y.scenario, x.rows, filepath.Base(x.trace)))
				}
				continue
			}
			if x.from <= y.to && y.from <= x.to {
				out = append(out, fmt.Sprintf("%s (%s) and %s (%s) read the same minutes of %s", x.scenario, x.what, y.scenario, y.what, filepath.Base(x.trace)))
			}
		}
	}
	return out
}

func run(cfgPath string, sets []string) error {
	cfg, err := config.LoadFile(cfgPath)
	if err != nil {
		return err
	}
	traces := map[string][]trace.Series{}
	bySet := make([][]window, len(sets))
	for i, dir := range sets {
		files, err := filepath.Glob(filepath.Join(dir, "*.hcl"))
		if err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("%s: no scenario (*.hcl)", dir)
		}
		for _, f := range files {
			sc, err := config.LoadScenarioFile(f, cfg)
			if err != nil {
				return err
			}
			ws, err := windows(cfg, sc, filepath.Base(f), traces)
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
			bySet[i] = append(bySet[i], ws...)
		}
	}
	bad := false
	for i := range bySet {
		for j := i + 1; j < len(bySet); j++ {
			for _, o := range overlaps(bySet[i], bySet[j]) {
				fmt.Fprintf(os.Stderr, "regimes: %s and %s overlap: %s\n", sets[i], sets[j], o)
				bad = true
			}
		}
	}
	if bad {
		return fmt.Errorf("the sets are not disjoint")
	}
	if len(sets) > 1 {
		fmt.Println("The sets are disjoint: no two read the same minutes of a timeseries trace (app_shift included) or the same rows of an azure-functions trace.")
		fmt.Println()
	}
	fmt.Println("Per scenario: each distinct trace window it replays (before peak_rps, events and noise).")
	fmt.Println()
	header()
	for i, ws := range bySet {
		for _, w := range ws {
			row(filepath.Base(sets[i]), w.scenario+": "+w.what, w.regime, w.st)
		}
	}
	fmt.Println()
	fmt.Println("Per set and regime, pooled over its windows.")
	fmt.Println()
	header()
	for _, rg := range append(slices.Clone(regimes), "all") {
		for i, ws := range bySet {
			var sts []Stats
			for _, w := range ws {
				if w.regime == rg || rg == "all" {
					sts = append(sts, w.st)
				}
			}
			if len(sts) > 0 {
				row(filepath.Base(sets[i]), fmt.Sprintf("%d windows", len(sts)), rg, pool(sts))
			}
		}
	}
	fmt.Println()
	fmt.Println("Per-function blocks, app level: every picked function's own series, pooled.")
	fmt.Println()
	header()
	for i, ws := range bySet {
		for _, w := range ws {
			if w.regime == regimeFunctions && w.apps.Minutes > 0 {
				row(filepath.Base(sets[i]), w.scenario+": "+w.what, w.regime, w.apps)
			}
		}
	}
	return nil
}

func header() {
	fmt.Printf("| %-5s | %-54s | %-12s | %7s | %8s | %8s | %6s | %7s | %7s | %8s | %8s | %9s |\n",
		"set", "window", "regime", "minutes", "jitter", "residual", "AC1", "Poisson", "excess", "rise5 95", "rise5 99", "peak/mean")
	fmt.Printf("|%s|%s|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|%s:|%s:|\n", strings.Repeat("-", 7), strings.Repeat("-", 56), strings.Repeat("-", 14),
		strings.Repeat("-", 8), strings.Repeat("-", 9), strings.Repeat("-", 9), strings.Repeat("-", 7), strings.Repeat("-", 8), strings.Repeat("-", 8),
		strings.Repeat("-", 9), strings.Repeat("-", 9), strings.Repeat("-", 10))
}

func row(set, what, regime string, st Stats) {
	pct := func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
	fmt.Printf("| %-5s | %-54s | %-12s | %7d | %8s | %8s | %6.2f | %7s | %7s | %8s | %8s | %9.2f |\n",
		set, what, regime, st.Minutes, pct(st.Jitter), pct(st.Residual), st.ResidualAC1, pct(st.PoissonFloor), pct(st.Excess),
		pct(st.RiseQ95), pct(st.RiseQ99), st.PeakToMean)
}

// windows is the distinct trace windows of sc's traffic blocks: blocks
// that replay the same minutes of the same series count once.
func windows(cfg *domains.Config, sc *domains.Scenario, name string, traces map[string][]trace.Series) ([]window, error) {
	minutes := int(sc.Duration/time.Minute) + 1
	apps := map[int]int{} // apps per domain index
	for _, a := range cfg.Apps() {
		apps[a.Domain]++
	}
	seen := map[string]bool{}
	var out []window
	for i := range sc.Traffic {
		tr := &sc.Traffic[i]
		series, ok := traces[tr.Trace]
		if !ok {
			s, err := trace.ReadFile(tr.Trace, tr.Format)
			if err != nil {
				return nil, err
			}
			traces[tr.Trace], series = s, s
		}
		switch tr.Format {
		case domains.FormatTimeseries:
			s := series[0]
			offset := 0
			if !sc.Start.IsZero() && !s.Start.IsZero() {
				offset = int(sc.Start.Sub(s.Start) / time.Minute)
			}
			key := fmt.Sprintf("%s@%d", tr.Trace, offset)
			if seen[key] {
				continue
			}
			seen[key] = true
			regime := regimeQuiet
			if !sc.Start.Before(tournament) {
				regime = regimeTournament
			}
			shift := 0
			if tr.AppOwn > 0 {
				shift = int(tr.AppShift / time.Minute)
			}
			out = append(out, window{scenario: name, regime: regime,
				what:  fmt.Sprintf("%s %s", filepath.Base(filepath.Dir(tr.Trace)), sc.Start.Format("01-02 15:04")),
				st:    measure(slice(s.Values, offset, minutes)),
				trace: tr.Trace, from: offset - shift, to: offset + minutes + shift})
		case domains.FormatAzureFunctions:
			n := apps[cfg.Domain(tr.Domain)]
			if tr.Functions == domains.FunctionsSummed {
				n = 0 // every function of the ranks, whatever the apps
			}
			key := fmt.Sprintf("%s|%s|%s|%d|%d|%d|%s", tr.Trace, tr.FunctionRows, tr.Functions, tr.FunctionOffset, tr.FunctionStride, n, sc.Start.Format("15:04"))
			if seen[key] {
				continue
			}
			seen[key] = true
			fns := sim.DomainFunctions(series, tr, apps[cfg.Domain(tr.Domain)])
			if len(fns) == 0 {
				return nil, fmt.Errorf("traffic %q picks no function", tr.Domain)
			}
			offset := 0
			if !sc.Start.IsZero() {
				y, mo, d := sc.Start.UTC().Date()
				offset = int(sc.Start.Sub(time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)) / time.Minute)
			}
			sum := make([]float64, minutes)
			var each []Stats
			for _, f := range fns {
				v := slice(f.Values, offset, minutes)
				for m := range sum {
					sum[m] += v[m]
				}
				each = append(each, measure(v))
			}
			out = append(out, window{scenario: name, regime: regimeFunctions,
				what: fmt.Sprintf("%s %s, %d fns (%s rows)", tr.Domain, tr.Functions, len(fns), tr.FunctionRows),
				st:   measure(sum), apps: pool(each),
				trace: tr.Trace, rows: tr.FunctionRows})
		}
	}
	return out, nil
}

// slice is n minutes of v from offset, wrapping past its end as the
// simulator's demand does.
func slice(v []float64, offset, n int) []float64 {
	out := make([]float64, n)
	for m := range out {
		out[m] = v[(offset+m)%len(v)]
	}
	return out
}
