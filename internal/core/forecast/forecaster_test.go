package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// epoch is an arbitrary midnight UTC: step 0 of the synthetic series is
// phase 0 and slice 0.
var epoch = time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)

func minute(i int) time.Time { return epoch.Add(time.Duration(i) * time.Minute) }

// feed observes series[i] at minute(i) for every i.
func feed(f *Forecaster, series []float64) {
	for i, y := range series {
		f.Observe(minute(i), y)
	}
}

func near(got, want, relTol float64) bool {
	return math.Abs(got-want) <= relTol*math.Max(math.Abs(want), 1)
}

func TestForecastBeforeObservations(t *testing.T) {
	f := New(Config{})
	fc := f.Forecast(epoch)
	if fc.Horizons != DefaultConfig().Horizons {
		t.Errorf("Horizons = %v, want the defaults %v", fc.Horizons, DefaultConfig().Horizons)
	}
	for h := range NumHorizons {
		if fc.Model[h] != ModelNone || fc.P10[h] != 0 || fc.P50[h] != 0 || fc.P80[h] != 0 || fc.P90[h] != 0 {
			t.Errorf("horizon %d: %v %v/%v/%v/%v, want none and zeros", h, fc.Model[h], fc.P10[h], fc.P50[h], fc.P80[h], fc.P90[h])
		}
	}
}

// A constant series has no error: every quantile is the constant, whichever
// model answers.
func TestConstantSeries(t *testing.T) {
	const level = 1234.5
	for _, tc := range []struct {
		name    string
		minutes int
		model   Model
	}{
		{"fallback after one hour", 60, ModelSmoothing},
		{"fallback after twelve hours", 720, ModelSmoothing},
		{"seasonal after three days", 3 * 1440, ModelSeasonal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New(Config{})
			series := make([]float64, tc.minutes)
			for i := range series {
				series[i] = level
			}
			feed(f, series)
			fc := f.Forecast(minute(tc.minutes - 1))
			for h := range NumHorizons {
				if fc.Model[h] != tc.model {
					t.Errorf("horizon %d: model %v, want %v", h, fc.Model[h], tc.model)
				}
				for name, p := range map[string]float64{"P10": fc.P10[h], "P50": fc.P50[h], "P80": fc.P80[h], "P90": fc.P90[h]} {
					if !near(p, level, 1e-9) {
						t.Errorf("horizon %d: %s = %v, want %v", h, name, p, level)
					}
				}
				if u := fc.Uncertainty(h); u > 1e-9 {
					t.Errorf("horizon %d: uncertainty %v, want 0", h, u)
				}
			}
		})
	}
}

// With less than a day of history the fallback answers; on a linear ramp its
// damped trend lags, and the conformal median of its residuals puts P50 back
// on the ramp.
func TestLinearTrendFallback(t *testing.T) {
	ramp := func(i int) float64 { return 1000 + 2*float64(i) }
	t.Run("P50 follows a clean ramp", func(t *testing.T) {
		const now = 12 * 60
		f := New(Config{})
		for i := range now + 1 {
			f.Observe(minute(i), ramp(i))
		}
		fc := f.Forecast(minute(now))
		prev := ramp(now)
		for h, d := range fc.Horizons {
			want := ramp(now + int(d/time.Minute))
			if fc.Model[h] != ModelSmoothing {
				t.Errorf("+%v: model %v, want smoothing", d, fc.Model[h])
			}
			if !near(fc.P50[h], want, 0.005) {
				t.Errorf("+%v: P50 = %.1f, want %.1f within 0.5%%", d, fc.P50[h], want)
			}
			if fc.P50[h] <= prev {
				t.Errorf("+%v: P50 %.1f not above %.1f, the last value or shorter horizon", d, fc.P50[h], prev)
			}
			prev = fc.P50[h]
		}
	})
	// On a noisy ramp the band keeps its coverage. P80 errs on the safe
	// side (about 15% exceedance at +30 min rather than 20%): the residual
	// window trails the ramp, whose relative slope shrinks, and holds the
	// larger residuals of the trend's start-up.
	t.Run("a noisy ramp is covered", func(t *testing.T) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(seed, 3))
		series := make([]float64, 1439)
		for i := range series {
			series[i] = ramp(i) * (1 + 0.02*rng.NormFloat64())
		}
		rep := EvaluateConfig(Config{}, series, epoch, 120)
		t.Logf("ramp with 2%% noise, less than a day\n%v", rep)
		if rep.Seasonal != 0 {
			t.Errorf("seasonal model made %.1f%% of the forecasts, want none", 100*rep.Seasonal)
		}
		for h, sc := range rep.Horizon {
			if sc.Coverage < 0.75 || sc.Coverage > 0.85 {
				t.Errorf("+%v: [P10, P90] covered %.1f%%, want 80%% +- 5", rep.Horizons[h], 100*sc.Coverage)
			}
			if sc.Exceed80 < 0.10 || sc.Exceed80 > 0.25 {
				t.Errorf("+%v: P80 exceeded %.1f%% of the time, want 10%% to 25%%", rep.Horizons[h], 100*sc.Exceed80)
			}
			if sc.MAPE > 0.025 {
				t.Errorf("+%v: MAPE %.2f%%, want at most 2.5%% (the noise alone gives 1.6%%)", rep.Horizons[h], 100*sc.MAPE)
			}
		}
	})
}

// sine is a daily cycle between 500 and 1500 with multiplicative Gaussian
// noise of 5%, one value per minute.
func sine(rng *rand.Rand, days int) []float64 {
	s := make([]float64, days*1440)
	for i := range s {
		phase := 2 * math.Pi * float64(i%1440) / 1440
		s[i] = 1000 * (1 + 0.5*math.Sin(phase)) * math.Exp(0.05*rng.NormFloat64())
	}
	return s
}

// After two days of a daily sine, the seasonal model answers and its P80 is
// exceeded 20% +- 5 of the time in every slice, at every horizon.
func TestDailySineCalibration(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	series := sine(rng, 6)
	rep := EvaluateConfig(Config{}, series, epoch, 2*1440)
	t.Logf("daily sine, 2 days warm-up, 4 scored\n%v", rep)
	if rep.Seasonal < 0.99 {
		t.Errorf("seasonal model made %.1f%% of the forecasts, want all", 100*rep.Seasonal)
	}
	for s := range Slices {
		for h := range NumHorizons {
			c := rep.Cell[s][h]
			if c.N < 900 {
				t.Errorf("slice %d +%v: %d forecasts scored, want about 960", s, rep.Horizons[h], c.N)
			}
			if c.Exceed80 < 0.15 || c.Exceed80 > 0.25 {
				t.Errorf("slice %d +%v: P80 exceeded %.1f%% of the time, want 20%% +- 5", s, rep.Horizons[h], 100*c.Exceed80)
			}
		}
	}
	// The noise alone puts a MAPE floor of about 4% (mean |e^(0.05z) - 1|).
	if m := rep.Horizon[1].MAPE; m > 0.06 {
		t.Errorf("+15m MAPE %.1f%%, want at most 6%%", 100*m)
	}
}

// The seasonal model is worth having: on a daily sine it beats the fallback
// at +30 min.
func TestSeasonalBeatsFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	series := sine(rng, 5)
	seasonal := EvaluateConfig(Config{}, series, epoch, 2*1440)
	// A period longer than the series keeps the seasonal model out.
	fallback := EvaluateConfig(Config{Period: 7 * 24 * time.Hour}, series, epoch, 2*1440)
	if fallback.Seasonal != 0 {
		t.Fatalf("fallback run used the seasonal model for %.1f%%", 100*fallback.Seasonal)
	}
	s, f := seasonal.Horizon[2].MAPE, fallback.Horizon[2].MAPE
	t.Logf("+30m MAPE: seasonal %.2f%%, fallback %.2f%%", 100*s, 100*f)
	if s >= f {
		t.Errorf("+30m MAPE: seasonal %.2f%% not below fallback %.2f%%", 100*s, 100*f)
	}
}

func TestObserveTimeRules(t *testing.T) {
	// Each case feeds a short series at the given minutes to a fresh
	// Forecaster and checks the pending and calibration state.
	base := func() *Forecaster {
		f := New(Config{})
		for i := range 10 {
			f.Observe(minute(i), 100)
		}
		return f
	}
	t.Run("an observation at or before the last step is dropped", func(t *testing.T) {
		f := base()
		f.Observe(minute(9), 1e6)
		f.Observe(minute(3), 1e6)
		f.Observe(minute(9).Add(20*time.Second), 1e6) // nearest step is still 9
		if fc := f.Forecast(minute(9)); !near(fc.P50[0], 100, 1e-9) {
			t.Errorf("P50 = %v after dropped observations, want 100", fc.P50[0])
		}
	})
	t.Run("an observation belongs to the nearest step", func(t *testing.T) {
		f := base()
		f.Observe(minute(10).Add(-29*time.Second), 100)
		if f.last != f.stepOf(minute(10)) {
			t.Errorf("last step %d, want %d", f.last, f.stepOf(minute(10)))
		}
	})
	t.Run("NaN and infinite values are dropped, negative ones count as 0", func(t *testing.T) {
		f := base()
		f.Observe(minute(10), math.NaN())
		f.Observe(minute(10), math.Inf(1))
		if f.last != f.stepOf(minute(9)) {
			t.Fatalf("a NaN or Inf observation moved the last step")
		}
		f.Observe(minute(10), -5)
		if got, want := f.history[f.phase(f.last)], math.Log(f.cfg.Offset); got != want {
			t.Errorf("negative observation stored as %v, want log(0 + Offset) = %v", got, want)
		}
	})
	t.Run("skipped steps are imputed and calibrate nothing", func(t *testing.T) {
		f := base()
		before := f.holtRes[0].len()
		f.Observe(minute(20), 100)
		if f.last != f.stepOf(minute(20)) || f.seen != 21 {
			t.Errorf("last %d seen %d, want step of minute 20 and 21 steps", f.last, f.seen)
		}
		// Only the forecast made at minute 9 for minute 14 could have matured,
		// and its target was skipped.
		if got := f.holtRes[0].len(); got != before {
			t.Errorf("+5m residuals %d -> %d over a gap, want no new ones", before, got)
		}
		if fc := f.Forecast(minute(20)); !near(fc.P50[2], 100, 1e-9) {
			t.Errorf("P50 = %v after a gap in a constant series, want 100", fc.P50[2])
		}
	})
	t.Run("a gap of more than a period resets", func(t *testing.T) {
		f := base()
		f.Observe(minute(10+1440), 50)
		if f.seen != 1 || f.holtRes[0].len() != 0 {
			t.Errorf("seen %d, %d residuals after a day's gap; want a fresh start", f.seen, f.holtRes[0].len())
		}
		if fc := f.Forecast(minute(10 + 1440)); !near(fc.P50[0], 50, 1e-9) {
			t.Errorf("P50 = %v, want the new observation 50", fc.P50[0])
		}
	})
	t.Run("a forecast later than the last observation counts horizons from its time", func(t *testing.T) {
		f := New(Config{})
		for i := range 600 {
			f.Observe(minute(i), 1000+float64(i))
		}
		now, later := f.Forecast(minute(599)), f.Forecast(minute(629))
		for h := range NumHorizons {
			if later.P50[h] <= now.P50[h] {
				t.Errorf("+%v on a rising ramp: P50 from 30 min later %v, not above P50 from now %v", now.Horizons[h], later.P50[h], now.P50[h])
			}
		}
	})
	t.Run("a forecast earlier than the last observation counts from the last", func(t *testing.T) {
		f := base()
		if a, b := f.Forecast(minute(2)), f.Forecast(minute(9)); a != b {
			t.Errorf("Forecast(earlier) = %+v, want %+v", a, b)
		}
	})
	t.Run("the time-of-day slice is the UTC four-hour block", func(t *testing.T) {
		f := New(Config{})
		for _, tc := range []struct {
			at    time.Time
			slice int
		}{
			{epoch, 0},
			{epoch.Add(4*time.Hour - time.Minute), 0},
			{epoch.Add(4 * time.Hour), 1},
			{epoch.Add(23*time.Hour + 59*time.Minute), 5},
			{time.Date(2024, 3, 4, 9, 0, 0, 0, time.FixedZone("CET", 3600)), 2}, // 08:00 UTC
			{time.Time{}, 0},                   // year 1, before the Unix epoch
			{time.Time{}.Add(-time.Minute), 5}, // 23:59 the day before
		} {
			if got := f.SliceOf(tc.at); got != tc.slice {
				t.Errorf("SliceOf(%v) = %d, want %d", tc.at, got, tc.slice)
			}
		}
	})
}

// Quantiles are ordered and non-negative whatever the input.
func TestQuantilesOrdered(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	f := New(Config{Period: 2 * time.Hour, Residuals: 50, MinResiduals: 10})
	for i := range 2000 {
		y := math.Exp(8 * rng.Float64())
		if rng.IntN(10) == 0 {
			y = 0
		}
		f.Observe(minute(i), y)
		fc := f.Forecast(minute(i))
		for h := range NumHorizons {
			if !(0 <= fc.P10[h] && fc.P10[h] <= fc.P50[h] && fc.P50[h] <= fc.P80[h] && fc.P80[h] <= fc.P90[h]) {
				t.Fatalf("minute %d +%v: P10..P90 = %v %v %v %v, not ordered", i, fc.Horizons[h], fc.P10[h], fc.P50[h], fc.P80[h], fc.P90[h])
			}
		}
	}
}

func TestReset(t *testing.T) {
	f := New(Config{})
	feed(f, sine(rand.New(rand.NewPCG(1, 1)), 2))
	f.Reset()
	if fc := f.Forecast(minute(0)); fc.Model[0] != ModelNone {
		t.Errorf("after Reset model %v, want none", fc.Model[0])
	}
	f.Observe(minute(0), 10)
	if fc := f.Forecast(minute(0)); fc.Model[0] != ModelSmoothing || !near(fc.P50[0], 10, 1e-9) {
		t.Errorf("after Reset and one observation: %v P50 %v, want smoothing 10", fc.Model[0], fc.P50[0])
	}
}

func TestNoAllocations(t *testing.T) {
	f := New(Config{})
	series := sine(rand.New(rand.NewPCG(3, 1)), 2)
	feed(f, series)
	i := len(series)
	allocs := testing.AllocsPerRun(1000, func() {
		f.Observe(minute(i), series[i%len(series)])
		_ = f.Forecast(minute(i))
		i++
	})
	if allocs != 0 {
		t.Errorf("Observe+Forecast allocate %v times per call, want 0", allocs)
	}
}

func TestModelString(t *testing.T) {
	for m, want := range map[Model]string{ModelNone: "none", ModelSmoothing: "smoothing", ModelSeasonal: "seasonal", 9: "Model(9)"} {
		if got := m.String(); got != want {
			t.Errorf("Model(%d).String() = %q, want %q", m, got, want)
		}
	}
}
