package forecast

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Score summarises scored forecasts: each pairs a Forecast's quantiles at one
// horizon with the demand later observed at that horizon's target step.
type Score struct {
	// N is the number of forecasts scored.
	N int
	// Exceed80 is the fraction of them whose actual was above P80; a
	// calibrated forecaster scores 0.20.
	Exceed80 float64
	// Coverage is the fraction whose actual was within [P10, P90]; a
	// calibrated forecaster scores 0.80.
	Coverage float64
	// MAPE is the mean absolute percentage error of P50, |P50 - y| / y, over
	// the MAPEN forecasts whose actual y was at least the report's MAPEFloor.
	MAPE  float64
	MAPEN int
	// NaiveMAPE is the MAPE, over the same forecasts, of persistence: the
	// demand observed when the forecast was issued, the baseline a
	// forecaster must beat.
	NaiveMAPE float64

	exceed, inside int
	ape, naive     float64
}

// add scores one forecast whose actual was y; last is the demand observed
// when it was issued.
func (s *Score) add(y, p10, p50, p80, p90, last, floor float64) {
	s.N++
	if y > p80 {
		s.exceed++
	}
	if p10 <= y && y <= p90 {
		s.inside++
	}
	if y >= floor {
		s.MAPEN++
		s.ape += math.Abs(p50-y) / y
		s.naive += math.Abs(last-y) / y
	}
}

func (s *Score) merge(o Score) {
	s.N += o.N
	s.exceed += o.exceed
	s.inside += o.inside
	s.MAPEN += o.MAPEN
	s.ape += o.ape
	s.naive += o.naive
}

func (s *Score) finish() {
	if s.N > 0 {
		s.Exceed80 = float64(s.exceed) / float64(s.N)
		s.Coverage = float64(s.inside) / float64(s.N)
	}
	if s.MAPEN > 0 {
		s.MAPE = s.ape / float64(s.MAPEN)
		s.NaiveMAPE = s.naive / float64(s.MAPEN)
	}
}

// Report is the outcome of replaying a series through a Forecaster.
type Report struct {
	// Horizons are the forecast lead times, indexing the per-horizon scores.
	Horizons [NumHorizons]time.Duration
	// Period is the seasonal period; slice s covers [s, s+1) * Period/Slices
	// of it.
	Period time.Duration
	// Steps is the length of the replayed series; Warmup the number of
	// leading steps whose forecasts were not scored.
	Steps, Warmup int
	// MAPEFloor is the smallest actual that counts towards MAPE: actuals
	// below max(1, 1% of the mean scored actual) are skipped, as a
	// percentage error of a near-zero demand says nothing useful.
	MAPEFloor float64
	// Overall pools every scored forecast.
	Overall Score
	// Horizon[h] pools horizon h over all slices; Horizon[1].MAPE is the
	// 15-minute MAPE with the default horizons.
	Horizon [NumHorizons]Score
	// Slice[s] pools all horizons whose target falls in time-of-day slice s
	// (4 hours each with the default period: slice s covers [4s, 4s+4) h
	// UTC).
	Slice [Slices]Score
	// Cell[s][h] is horizon h with targets in slice s.
	Cell [Slices][NumHorizons]Score
	// Seasonal is the fraction of scored forecasts made by the seasonal
	// model; the rest came from the fallback.
	Seasonal float64
}

// Evaluate replays series, one value per step starting at start, through a
// Forecaster with the default configuration and the given step, and scores
// its forecasts; see EvaluateConfig.
func Evaluate(series []float64, step time.Duration, start time.Time, warmup int) Report {
	cfg := DefaultConfig()
	cfg.Step = step
	return EvaluateConfig(cfg, series, start, warmup)
}

// EvaluateConfig replays series, whose values must be finite and >= 0,
// through New(cfg): series[i] is observed at
// start + i*cfg.Step, and after each observation a Forecast is taken at that
// time. Forecasts taken after observing series[warmup] or later are scored
// against the actual at each horizon's target step, when that step is within
// the series. Scores are assigned to the target's time-of-day slice, the
// slice the Forecaster calibrates with. It panics if cfg fails Validate.
func EvaluateConfig(cfg Config, series []float64, start time.Time, warmup int) Report {
	f := New(cfg)
	cfg = f.Config()
	rep := Report{Horizons: cfg.Horizons, Period: cfg.Period, Steps: len(series), Warmup: warmup}

	// The floor needs the mean of the actuals that will be scored: those from
	// the first target step on.
	first := max(warmup, 0) + slices.Min(f.ahead[:])
	var sum float64
	var n int
	for i := first; i < len(series); i++ {
		sum += series[i]
		n++
	}
	rep.MAPEFloor = 1
	if n > 0 {
		rep.MAPEFloor = max(1, 0.01*sum/float64(n))
	}

	var seasonal int
	issued := make([]Forecast, slices.Max(f.ahead[:])+1) // by issue step mod len
	for i, y := range series {
		at := start.Add(time.Duration(i) * cfg.Step)
		for h, n := range f.ahead {
			j := i - n // the step that forecast step i at horizon h
			if j < max(warmup, 0) {
				continue
			}
			fc := &issued[j%len(issued)]
			s := f.SliceOf(at)
			rep.Cell[s][h].add(y, fc.P10[h], fc.P50[h], fc.P80[h], fc.P90[h], series[j], rep.MAPEFloor)
			if fc.Model[h] == ModelSeasonal {
				seasonal++
			}
		}
		f.Observe(at, y)
		issued[i%len(issued)] = f.Forecast(at)
	}

	for s := range Slices {
		for h := range NumHorizons {
			c := rep.Cell[s][h]
			rep.Slice[s].merge(c)
			rep.Horizon[h].merge(c)
			rep.Overall.merge(c)
			rep.Cell[s][h].finish()
		}
		rep.Slice[s].finish()
	}
	for h := range NumHorizons {
		rep.Horizon[h].finish()
	}
	rep.Overall.finish()
	if rep.Overall.N > 0 {
		rep.Seasonal = float64(seasonal) / float64(rep.Overall.N)
	}
	return rep
}

// String renders the report as a small table: one row per slice and one per
// horizon, then the overall figures.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d steps, %d warm-up, %.0f%% seasonal, MAPE floor %.4g\n",
		r.Steps, r.Warmup, 100*r.Seasonal, r.MAPEFloor)
	fmt.Fprintf(&b, "%-12s %8s %9s %9s %8s %8s\n", "", "n", ">p80", "p10-p90", "MAPE", "naive")
	row := func(name string, s Score) {
		fmt.Fprintf(&b, "%-12s %8d %8.1f%% %8.1f%% %7.1f%% %7.1f%%\n", name, s.N, 100*s.Exceed80, 100*s.Coverage, 100*s.MAPE, 100*s.NaiveMAPE)
	}
	width := r.Period / Slices
	for s, sc := range r.Slice {
		row(fmtDuration(time.Duration(s)*width)+"-"+fmtDuration(time.Duration(s+1)*width), sc)
	}
	for h, sc := range r.Horizon {
		row("+"+fmtDuration(r.Horizons[h]), sc)
	}
	row("overall", r.Overall)
	return b.String()
}

// fmtDuration prints 15m0s as 15m and 4h0m0s as 4h.
func fmtDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
