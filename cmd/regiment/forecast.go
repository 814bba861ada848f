package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/regimentd/regiment/internal/cli"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/forecast"
	"github.com/regimentd/regiment/internal/offline/episodes"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// The forecaster's calibration target: P80 exceeded 20% +- 5 of the time,
// overall and in every time-of-day slice.

// forecastUsage is what `regiment forecast --help` prints before the flags.
const forecastUsage = `Usage: regiment forecast --trace F [--format timeseries|azure-functions] [--warmup D] [--json F]

Replays a recorded demand trace through the Commander's demand forecaster
(package forecast: a seasonal model calibrated per 4-hour time-of-day slice,
exponential smoothing while history is short) one minute at a time, and scores
every forecast issued after --warmup against the demand that followed, at
+5, +15 and +30 minutes. Every series of the trace is summed per minute (all
functions of an azure-functions trace), as a domain's demand would be.

Per 4-hour slice, per horizon and overall it prints how often the demand
exceeded the forecast's P80 (a calibrated forecaster: 20%), how often it fell
within [P10, P90] (80%), the MAPE of P50, and the MAPE of persistence (the
demand when the forecast was issued) for comparison. Exits 0 when P80 is
exceeded 20% +- 5 of the time overall and in every slice, 1 when it is not
or the trace cannot be read, 2 on a usage error.

Example (the World Cup 98 trace: 40 quiet days of history, then the
tournament):
  regiment forecast --trace traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz --warmup 40d

Flags:
`

// runForecast replays a recorded demand trace through the Commander's
// forecaster and reports its calibration and accuracy. Exit 0 when P80 is
// calibrated, 1 when it is not or the trace cannot be read, 2 on a usage
// error.
func runForecast(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fail := cli.Failer("regiment forecast", stderr)
	fs := cli.NewFlagSet("regiment forecast", forecastUsage, stderr)
	tracePath := fs.String("trace", "", "demand trace `file` (CSV); required")
	format := fs.String("format", string(domains.FormatTimeseries), "trace `format`: timeseries or azure-functions")
	warmupFlag := fs.String("warmup", "1d", "history replayed before forecasts are scored: a `duration` (90m, 36h) or whole days (40d)")
	jsonOut := fs.String("json", "", "also write the full report as JSON to `file`")
	if code, done := cli.ParseFlags(fs, args); done {
		return code
	}
	usageErr := cli.UsageFailer(fs, stderr)
	if *tracePath == "" || fs.NArg() > 0 {
		return usageErr("--trace is required, and takes no arguments")
	}
	tf := domains.TraceFormat(*format)
	if tf != domains.FormatTimeseries && tf != domains.FormatAzureFunctions {
		return usageErr("unknown --format %q: timeseries or azure-functions", *format)
	}
	warmup, err := parseWarmup(*warmupFlag)
	if err != nil {
		return usageErr("--warmup: %v", err)
	}

	series, err := trace.ReadFile(*tracePath, tf)
	if err != nil {
		return fail(err)
	}
	demand := trace.Sum(series)
	steps := int(warmup / time.Minute)
	if steps >= len(demand) {
		fmt.Fprintf(stderr, "regiment forecast: the warm-up (%s, %d minutes) leaves nothing of the trace's %d minutes to score: shorten --warmup\n",
			warmup, steps, len(demand))
		return 1
	}
	rep := forecast.Evaluate(demand, time.Minute, series[0].Start, steps)

	fmt.Fprintf(stdout, "%s: %d series, %d minutes from %s\n%v\n", *tracePath, len(series), len(demand), startLabel(series[0].Start), rep)
	ok := rep.WriteVerdict(stdout)
	if *jsonOut != "" {
		if err := cli.WriteJSON(*jsonOut, rep); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", *jsonOut)
	}
	if !ok {
		return 1
	}
	return 0
}

// parseWarmup reads a duration, or whole days as "40d"; it must be >= 0 and
// a whole number of minutes.
func parseWarmup(s string) (time.Duration, error) {
	d, err := episodes.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a duration (90m, 36h) nor whole days (40d)", s)
	}
	if d < 0 || d%time.Minute != 0 {
		return 0, fmt.Errorf("%q must be a whole number of minutes, >= 0", s)
	}
	return d, nil
}

// startLabel is a trace's start for the report: its date, or "minute 0" for
// a trace without one (azure-functions).
func startLabel(t time.Time) string {
	if t.IsZero() {
		return "minute 0 of an undated day"
	}
	return t.Format(time.RFC3339)
}
