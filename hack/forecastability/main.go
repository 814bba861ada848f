// Command forecastability measures how much of a demand trace's next few
// minutes its past holds: the error of simple forecasters over short
// horizons, and of the best linear predictor of the change, fitted on the
// history or, as a limit no forecaster reaches, on the scored minutes
// themselves. An autoscaler's headroom must cover the demand's rise over
// its lead (replica startup, node provisioning: 1-5 minutes); a forecaster
// buys headroom down only by the share of that rise it predicts.
//
//	go run ./hack/forecastability --trace traces/worldcup98/worldcup98_days01-60_per_minute.csv.gz --from 40d
//
// docs/experiments.md ("What foresight the bars need") reads its output.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/offline/sim/trace"
)

// lags is how many past one-minute changes of log demand the linear
// predictor reads, besides a constant and the level against the last hour's
// mean.
const lags = 15

// first is the first minute the predictor can be fitted or scored at: an
// hour of history for its level. The day's and the week's shapes are scored
// only when the history before --from holds a day or a week.
const first = 61

func main() {
	path := flag.String("trace", "", "demand trace file (CSV); required")
	format := flag.String("format", "timeseries", "trace format: timeseries or azure-functions")
	from := flag.String("from", "40d", "first minute scored, in whole days (40d) or minutes (57600); the history before it fits the predictor")
	hs := flag.String("horizons", "1,3,5", "horizons, whole minutes, comma-separated")
	flag.Parse()
	if err := run(*path, domains.TraceFormat(*format), *from, *hs); err != nil {
		fmt.Fprintln(os.Stderr, "forecastability:", err)
		os.Exit(1)
	}
}

func run(path string, format domains.TraceFormat, from, hs string) error {
	if path == "" {
		return fmt.Errorf("--trace is required")
	}
	series, err := trace.ReadFile(path, format)
	if err != nil {
		return err
	}
	y := trace.Sum(series) // every series summed per minute, as a domain's demand
	start, err := minutes(from)
	if err != nil || start < first || start >= len(y)-1 {
		return fmt.Errorf("--from %q: want a minute in [%d, %d) (an hour of history first)", from, first, len(y)-1)
	}
	var horizons []int
	for f := range strings.SplitSeq(hs, ",") {
		h, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || h < 1 || h > 60 {
			return fmt.Errorf("--horizons %q: want whole minutes in [1, 60]", hs)
		}
		horizons = append(horizons, h)
	}
	fmt.Printf("%s: %d minutes, scored from minute %d (%d minutes)\n", path, len(y), start, len(y)-start)
	fmt.Println("demand h minutes ahead over the forecast, minus 1:")
	fmt.Printf("%-4s %-36s %7s %7s %7s %7s %9s\n", "h", "forecaster", "MAPE", "q95", "q99", "q99.9", "explained")
	logY := make([]float64, len(y))
	for i, v := range y {
		logY[i] = math.Log(max(v, 1))
	}
	for _, h := range horizons {
		simple := []struct {
			name string
			f    func(t int) float64
		}{
			{"persistence (the present)", func(t int) float64 { return y[t] }},
			{"mean of the last 3 minutes", func(t int) float64 { return (y[t] + y[t-1] + y[t-2]) / 3 }},
			{"trend of the last 5 minutes (>= half)", func(t int) float64 { return max(y[t]/2, y[t]+float64(h)*(y[t]-y[t-5])/5) }},
		}
		for _, back := range []struct {
			name    string
			minutes int
		}{{"the day before's shape", 1440}, {"the week before's shape", 7 * 1440}} {
			if start >= back.minutes {
				simple = append(simple, struct {
					name string
					f    func(t int) float64
				}{back.name, func(t int) float64 { return y[t] * y[t-back.minutes+h] / max(1, y[t-back.minutes]) }})
			}
		}
		var base []float64
		for _, s := range simple {
			e := errors(y, start, h, s.f)
			if base == nil {
				base = e
			}
			print(h, s.name, e, base)
		}
		for _, fit := range []struct {
			name   string
			lo, hi int
		}{
			{fmt.Sprintf("AR(%d), fitted on the history", lags), first, start},
			{fmt.Sprintf("AR(%d), fitted on the scored (limit)", lags), start, len(y)},
		} {
			w := fitAR(logY, fit.lo, fit.hi-h, h)
			e := errors(y, start, h, func(t int) float64 { return math.Exp(logY[t] + dot(w, features(logY, t))) })
			print(h, fit.name, e, base)
		}
	}
	return nil
}

// minutes parses whole days ("40d") or minutes.
func minutes(s string) (int, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		return n * 1440, err
	}
	return strconv.Atoi(s)
}

// errors is y[t+h] / f(t) - 1 for every scored minute t with demand.
func errors(y []float64, start, h int, f func(t int) float64) []float64 {
	var e []float64
	for t := start; t+h < len(y); t++ {
		if y[t] > 0 {
			e = append(e, y[t+h]/max(f(t), 1)-1)
		}
	}
	return e
}

// print writes one row: the errors' mean absolute value and upper quantiles,
// and the share of the variance of log(y[t+h] / y[t]) the forecaster
// explains over persistence's errors base.
func print(h int, name string, e, base []float64) {
	mape := 0.0
	for _, x := range e {
		mape += math.Abs(x)
	}
	mape /= float64(len(e))
	sorted := slices.Sorted(slices.Values(e))
	q := func(p float64) float64 { return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))] }
	v := func(e []float64) float64 {
		s := 0.0
		for _, x := range e {
			l := math.Log1p(max(x, -0.999))
			s += l * l
		}
		return s
	}
	fmt.Printf("%-4s %-36s %6.1f%% %6.1f%% %6.1f%% %6.1f%% %8.1f%%\n", strconv.Itoa(h)+"m", name,
		100*mape, 100*q(0.95), 100*q(0.99), 100*q(0.999), 100*(1-v(e)/v(base)))
}

// features is the predictor's input at minute t: a constant, the last lags
// one-minute changes of log demand, and the level against the last hour's
// mean.
func features(logY []float64, t int) []float64 {
	x := make([]float64, 0, lags+2)
	x = append(x, 1)
	for i := range lags {
		x = append(x, logY[t-i]-logY[t-i-1])
	}
	mean := 0.0
	for j := range 60 {
		mean += logY[t-j]
	}
	return append(x, logY[t]-mean/60)
}

// fitAR is the least-squares weights of features(t) for log(y[t+h] / y[t])
// over t in [lo, hi).
func fitAR(logY []float64, lo, hi, h int) []float64 {
	k := lags + 2
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1) // the normal equations, augmented
	}
	for t := lo; t < hi; t++ {
		x, z := features(logY, t), logY[t+h]-logY[t]
		for i := range k {
			a[i][k] += x[i] * z
			for j := range k {
				a[i][j] += x[i] * x[j]
			}
		}
	}
	for c := range k { // Gauss-Jordan with partial pivoting
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := range k {
			if r != c {
				f := a[r][c] / a[c][c]
				for j := c; j <= k; j++ {
					a[r][j] -= f * a[c][j]
				}
			}
		}
	}
	w := make([]float64, k)
	for i := range k {
		w[i] = a[i][k] / a[i][i]
	}
	return w
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
