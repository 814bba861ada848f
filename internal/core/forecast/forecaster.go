package forecast

import (
	"fmt"
	"math"
	"time"
)

// NumHorizons is the number of lead times in a Forecast.
const NumHorizons = 3

// Slices is the number of equal time-of-day slices of a period (4 hours each
// for a day) that calibrate the seasonal model separately.
const Slices = 6

// Quantile levels of a Forecast.
const (
	q10 = 0.10
	q50 = 0.50
	q80 = 0.80
	q90 = 0.90
)

// Model names the model behind one horizon of a Forecast.
type Model uint8

const (
	// ModelNone: nothing observed yet; every quantile is 0.
	ModelNone Model = iota
	// ModelSmoothing: the fallback, Holt's damped linear trend, calibrated
	// on its recent residuals at that horizon.
	ModelSmoothing
	// ModelSeasonal: Holt-Winters with a daily profile, calibrated on its
	// residuals at that horizon in the target's time-of-day slice.
	ModelSeasonal
)

func (m Model) String() string {
	switch m {
	case ModelNone:
		return "none"
	case ModelSmoothing:
		return "smoothing"
	case ModelSeasonal:
		return "seasonal"
	}
	return fmt.Sprintf("Model(%d)", uint8(m))
}

// Forecast holds demand quantiles at each horizon, in the unit of the
// observations. For every horizon i, 0 <= P10[i] <= P50[i] <= P80[i] <= P90[i].
type Forecast struct {
	// Horizons are the lead times, from the time passed to Forecast.
	Horizons [NumHorizons]time.Duration
	// P10, P50, P80 and P90 are the 10th, 50th, 80th and 90th percentiles of
	// demand at each horizon: demand should exceed P80 one time in five.
	P10, P50, P80, P90 [NumHorizons]float64
	// Model is the model behind each horizon.
	Model [NumHorizons]Model
	// Residuals is how many past residuals calibrated each horizon's
	// quantiles; with 0, all four quantiles equal the point forecast.
	Residuals [NumHorizons]int
}

// Uncertainty returns (P90 - P10) / P50 at horizon i, the relative width of
// the 80% band, or 0 when P50 is 0.
func (f Forecast) Uncertainty(i int) float64 {
	if f.P50[i] <= 0 {
		return 0
	}
	return (f.P90[i] - f.P10[i]) / f.P50[i]
}

// point is a pending point forecast on the log scale, kept until its target
// step is observed.
type point struct {
	step int64
	x    float64
}

// noStep marks an empty pending slot.
const noStep = math.MinInt64

// Forecaster forecasts one demand series. See the package documentation for
// the model, the calibration and the invariants. It is not safe for
// concurrent use.
type Forecaster struct {
	cfg     Config
	stepSec int64
	period  int                     // steps per period
	ahead   [NumHorizons]int        // horizons in steps
	reach   [NumHorizons]float64    // phiSum(Phi, ahead[h])
	pending [2][NumHorizons][]point // by model (0 fallback, 1 seasonal), by target step mod len

	started bool
	last    int64 // step index of the last observation
	seen    int   // steps since the first observation, saturating at period

	holt     holt
	seasonal seasonal
	history  []float64 // log observations by phase, until the seasonal model is ready
	scratch  []float64

	holtRes     [NumHorizons]residuals
	seasonalRes [Slices][NumHorizons]residuals
}

// New returns a Forecaster with every buffer allocated; Observe and Forecast
// do not allocate. Zero fields of cfg take their defaults. New panics if cfg
// fails Validate: check it where configuration is loaded.
func New(cfg Config) *Forecaster {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.WithDefaults()
	f := &Forecaster{
		cfg:     cfg,
		stepSec: int64(cfg.Step / time.Second),
		period:  int(cfg.Period / cfg.Step),
	}
	maxAhead := 0
	for i, h := range cfg.Horizons {
		f.ahead[i] = int(h / cfg.Step)
		f.reach[i] = phiSum(cfg.Phi, f.ahead[i])
		maxAhead = max(maxAhead, f.ahead[i])
	}
	points := make([]point, 2*NumHorizons*(maxAhead+1))
	for m := range f.pending {
		for h := range f.pending[m] {
			f.pending[m][h], points = points[:maxAhead+1:maxAhead+1], points[maxAhead+1:]
		}
	}
	floats := make([]float64, 3*f.period+2*NumHorizons*(cfg.SmoothingResiduals+Slices*cfg.Residuals))
	take := func(n int) []float64 {
		s := floats[:n:n]
		floats = floats[n:]
		return s
	}
	f.history, f.scratch = take(f.period), take(f.period)
	f.holt = holt{alpha: cfg.SmoothingAlpha, beta: cfg.SmoothingBeta, phi: cfg.Phi}
	f.seasonal = seasonal{
		alpha: cfg.Alpha, beta: cfg.Beta, gamma: cfg.Gamma, phi: cfg.Phi,
		baseAlpha: cfg.BaseAlpha, window: cfg.SeasonWindow, season: take(f.period),
	}
	for h := range NumHorizons {
		f.holtRes[h] = newResiduals(take(2*cfg.SmoothingResiduals), cfg.SmoothingResiduals)
		for s := range Slices {
			f.seasonalRes[s][h] = newResiduals(take(2*cfg.Residuals), cfg.Residuals)
		}
	}
	f.Reset()
	return f
}

// Config returns the configuration in use, with defaults filled in.
func (f *Forecaster) Config() Config { return f.cfg }

// Reset forgets every observation and residual, as if newly made.
func (f *Forecaster) Reset() {
	f.started, f.seen = false, 0
	f.holt.n = 0
	f.seasonal.ready = false
	for m := range f.pending {
		for h := range f.pending[m] {
			for i := range f.pending[m][h] {
				f.pending[m][h][i] = point{step: noStep}
			}
		}
	}
	for h := range NumHorizons {
		f.holtRes[h].reset()
		for s := range Slices {
			f.seasonalRes[s][h].reset()
		}
	}
}

// Observe records the demand rps seen at time at; one call per Step.
//
// The observation belongs to the step nearest to at. An observation for a
// step at or before the last observed one is dropped (duplicates, reordered
// ticks), as is a NaN or infinite value; a negative value counts as 0. Steps
// skipped since the last observation are coasted over: both models move
// along their damped trends as if the step had been observed exactly as
// forecast, the profile is untouched and nothing is calibrated. A gap of a
// whole period or more resets the Forecaster first.
func (f *Forecaster) Observe(at time.Time, rps float64) {
	if math.IsNaN(rps) || math.IsInf(rps, 0) {
		return
	}
	k := f.stepOf(at)
	if f.started {
		if k <= f.last {
			return
		}
		if k-f.last > int64(f.period) {
			f.Reset()
		} else {
			for j := f.last + 1; j < k; j++ {
				f.impute(j)
			}
		}
	}
	f.observe(k, math.Log(max(rps, 0)+f.cfg.Offset))
}

// observe scores the pending forecasts for step k against x, updates both
// models with x and issues their forecasts from k.
func (f *Forecaster) observe(k int64, x float64) {
	p := f.phase(k)
	s := f.sliceOf(p)
	for h := range NumHorizons {
		if pt := f.pending[0][h][mod(k, len(f.pending[0][h]))]; pt.step == k {
			f.holtRes[h].add(x - pt.x)
		}
		if pt := f.pending[1][h][mod(k, len(f.pending[1][h]))]; pt.step == k {
			f.seasonalRes[s][h].add(x - pt.x)
		}
	}
	f.advance(k, p, x)
	for h, n := range f.ahead {
		t := k + int64(n)
		f.pending[0][h][mod(t, len(f.pending[0][h]))] = point{t, f.holt.predict(f.reach[h])}
		if f.seasonal.ready {
			f.pending[1][h][mod(t, len(f.pending[1][h]))] = point{t, f.seasonal.predict(f.reach[h], f.phase(t))}
		}
	}
}

// impute moves both models over a step that was not observed. Until the
// seasonal model is ready, the fallback's forecast stands in for the
// observation in the history it will start from.
func (f *Forecaster) impute(k int64) {
	if f.seasonal.ready {
		f.seasonal.coast()
	} else {
		p := f.phase(k)
		f.history[p] = f.holt.predict(f.cfg.Phi)
		f.count(p)
	}
	f.holt.coast()
	f.last = k
}

// advance updates both models with the observation x at step k, phase p.
func (f *Forecaster) advance(k int64, p int, x float64) {
	f.holt.update(x)
	if f.seasonal.ready {
		f.seasonal.update(x, p)
	} else {
		f.history[p] = x
		f.count(p)
	}
	f.started, f.last = true, k
}

// count notes one more step of history ending at phase p and initialises
// the seasonal model once a whole period is in.
func (f *Forecaster) count(p int) {
	f.seen++
	if f.seen >= f.period {
		f.seasonal.init(f.history, p, f.scratch)
	}
}

// Forecast returns demand quantiles at each horizon after at, from the
// observations so far. When at is later than the last observation, the
// horizons are counted from at and the model forecasts over the gap too; the
// calibration is still that of the nominal horizon, so the quantiles are then
// too narrow. Before any observation every quantile is 0.
//
// Each horizon uses the seasonal model once it has a period of history and
// at least MinResiduals residuals in the target's time-of-day slice, and the
// fallback otherwise. Quantile q is exp(xhat + r_q) - Offset, floored at 0,
// where xhat is the model's log-scale point forecast and r_q the conformal
// quantile of its signed log residuals (see residuals.quantile).
func (f *Forecaster) Forecast(at time.Time) Forecast {
	fc := Forecast{Horizons: f.cfg.Horizons}
	if !f.started {
		return fc
	}
	d := max(f.stepOf(at)-f.last, 0)
	for h, n := range f.ahead {
		ahead := int(min(d+int64(n), math.MaxInt32))
		q := f.phase(f.last + int64(ahead))
		reach := f.reach[h]
		if d > 0 {
			reach = phiSum(f.cfg.Phi, ahead)
		}
		var x float64
		res := &f.holtRes[h]
		fc.Model[h] = ModelSmoothing
		if r := &f.seasonalRes[f.sliceOf(q)][h]; f.seasonal.ready && r.len() >= f.cfg.MinResiduals {
			x, res, fc.Model[h] = f.seasonal.predict(reach, q), r, ModelSeasonal
		} else {
			x = f.holt.predict(reach)
		}
		fc.Residuals[h] = res.len()
		fc.P10[h] = f.demand(x + res.quantile(q10))
		fc.P50[h] = f.demand(x + res.quantile(q50))
		fc.P80[h] = f.demand(x + res.quantile(q80))
		fc.P90[h] = f.demand(x + res.quantile(q90))
	}
	return fc
}

// demand maps a log-scale value back to demand, the inverse of
// x = log(y + Offset), floored at 0.
func (f *Forecaster) demand(x float64) float64 {
	return max(math.Exp(min(x, 700))-f.cfg.Offset, 0)
}

// stepOf returns the index of the step nearest to t, counted from the Unix
// epoch (negative before it).
func (f *Forecaster) stepOf(t time.Time) int64 {
	return floorDiv(t.Unix()+f.stepSec/2, f.stepSec)
}

// phase returns step k's position in the period, in [0, period): with the
// default 1-minute step and 24-hour period, the minute of the UTC day.
func (f *Forecaster) phase(k int64) int { return mod(k, f.period) }

// sliceOf returns the time-of-day slice of phase p, in [0, Slices).
func (f *Forecaster) sliceOf(p int) int { return p * Slices / f.period }

// SliceOf returns the time-of-day slice, in [0, Slices), of the step nearest
// to t: with the default configuration, slice i covers [4i, 4i+4) h UTC.
func (f *Forecaster) SliceOf(t time.Time) int { return f.sliceOf(f.phase(f.stepOf(t))) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func mod(a int64, n int) int {
	r := int(a % int64(n))
	if r < 0 {
		r += n
	}
	return r
}
