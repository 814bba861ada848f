package forecast

import (
	"errors"
	"fmt"
	"time"
)

// Config tunes a Forecaster. A zero field takes its default (DefaultConfig);
// there is no way to ask for exactly 0 where 0 is not the default; use a tiny
// value such as 1e-9 instead.
type Config struct {
	// Step is the spacing of observations and the model's time unit. A whole
	// number of seconds, at least 1 s. Default 1 min (the Commander tick).
	Step time.Duration
	// Period is the length of one season: the seasonal model keeps one index
	// per Step within it and the calibration slices split it in Slices equal
	// parts. A multiple of Step with at least Slices steps. Default 24 h.
	Period time.Duration
	// Horizons are the lead times of a Forecast. Each a positive multiple of
	// Step, at most Period. Default 5, 15 and 30 min.
	Horizons [NumHorizons]time.Duration

	// Alpha is the seasonal model's level smoothing weight per step, in
	// (0, 1]. Default 0.2.
	Alpha float64
	// Beta is the seasonal model's trend smoothing weight per step, in
	// (0, 1]. Default 0.01.
	Beta float64
	// Gamma is the seasonal model's seasonal smoothing weight per period, in
	// (0, 1]: each day moves the daily profile about Gamma of the way towards
	// that day's values. Default 0.1 (a profile of roughly the last ten
	// days).
	Gamma float64
	// BaseAlpha is the smoothing weight per step of the slow deseasonalised
	// level that the seasonal profile is measured against, in (0, 1].
	// Default Step/Period (a time constant of one period).
	BaseAlpha float64
	// Phi damps both models' trends per step, in (0, 1]; 1 is an undamped
	// linear trend. Default 0.97 (a trend's reach is at most Phi/(1-Phi),
	// about 32 steps).
	Phi float64
	// SeasonWindow is the half-width, in steps, of the moving average that
	// smooths the seasonal profile: each index is updated from the
	// 2*SeasonWindow+1 steps around it. Default 7 (15 minutes).
	SeasonWindow int

	// SmoothingAlpha is the fallback model's level smoothing weight per step,
	// in (0, 1]. Default 0.1.
	SmoothingAlpha float64
	// SmoothingBeta is the fallback model's trend smoothing weight per step,
	// in (0, 1]. Default 0.005.
	SmoothingBeta float64

	// Residuals is how many past forecast residuals of the seasonal model are
	// kept per horizon and time-of-day slice: its calibration window. Between
	// 1 and 65536. Default 720 (three days of one 4-hour slice at one step
	// per minute).
	Residuals int
	// SmoothingResiduals is how many past residuals of the fallback model
	// are kept per horizon: its calibration window, short because the
	// fallback serves while history is short. Between 1 and 65536. Default
	// 240 (four hours at one step per minute).
	SmoothingResiduals int
	// MinResiduals is how many residuals a slice needs before the seasonal
	// model's quantiles are used for it; until then the fallback answers.
	// Between 1 and Residuals. Default 60.
	MinResiduals int
	// Offset is added to every observation before taking logarithms, in the
	// observations' unit (e.g. requests per second); it keeps zero demand
	// finite and damps relative noise at tiny rates. Positive. Default 1.
	Offset float64
}

// DefaultConfig returns the configuration New uses for zero fields. Its
// BaseAlpha is 0, derived from Step and Period by WithDefaults.
func DefaultConfig() Config {
	return Config{
		Step:               time.Minute,
		Period:             24 * time.Hour,
		Horizons:           [NumHorizons]time.Duration{5 * time.Minute, 15 * time.Minute, 30 * time.Minute},
		Alpha:              0.2,
		Beta:               0.01,
		Gamma:              0.1,
		Phi:                0.97,
		SeasonWindow:       7,
		SmoothingAlpha:     0.1,
		SmoothingBeta:      0.005,
		Residuals:          720,
		SmoothingResiduals: 240,
		MinResiduals:       60,
		Offset:             1,
	}
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	set := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	if c.Step == 0 {
		c.Step = d.Step
	}
	if c.Period == 0 {
		c.Period = d.Period
	}
	for i := range c.Horizons {
		if c.Horizons[i] == 0 {
			c.Horizons[i] = d.Horizons[i]
		}
	}
	set(&c.Alpha, d.Alpha)
	set(&c.Beta, d.Beta)
	set(&c.Gamma, d.Gamma)
	if c.BaseAlpha == 0 && c.Step > 0 && c.Period >= c.Step {
		c.BaseAlpha = float64(c.Step) / float64(c.Period)
	}
	set(&c.Phi, d.Phi)
	set(&c.SmoothingAlpha, d.SmoothingAlpha)
	set(&c.SmoothingBeta, d.SmoothingBeta)
	set(&c.Offset, d.Offset)
	if c.SeasonWindow == 0 {
		c.SeasonWindow = d.SeasonWindow
	}
	if c.Residuals == 0 {
		c.Residuals = d.Residuals
	}
	if c.SmoothingResiduals == 0 {
		c.SmoothingResiduals = d.SmoothingResiduals
	}
	if c.MinResiduals == 0 {
		c.MinResiduals = min(d.MinResiduals, c.Residuals)
	}
	return c
}

// maxSteps bounds Period/Step, and so the seasonal profile's memory.
const maxSteps = 1 << 20

// Validate reports every out-of-range field of c, after defaults, joined into
// one error.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Step < time.Second || c.Step%time.Second != 0 {
		bad("step %v: want a whole number of seconds, at least 1s", c.Step)
	} else {
		switch n := c.Period / c.Step; {
		case c.Period%c.Step != 0:
			bad("period %v: want a multiple of step %v", c.Period, c.Step)
		case n < Slices || n > maxSteps:
			bad("period %v: want between %d and %d steps of %v", c.Period, Slices, maxSteps, c.Step)
		case 2*c.SeasonWindow+1 > int(n):
			bad("season window %d: wider than the period's %d steps", c.SeasonWindow, n)
		}
		for i, h := range c.Horizons {
			if h <= 0 || h%c.Step != 0 || h > c.Period {
				bad("horizon %d (%v): want a positive multiple of step %v, at most period %v", i, h, c.Step, c.Period)
			}
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"alpha", c.Alpha}, {"beta", c.Beta}, {"gamma", c.Gamma}, {"phi", c.Phi}, {"base alpha", c.BaseAlpha},
		{"smoothing alpha", c.SmoothingAlpha}, {"smoothing beta", c.SmoothingBeta},
	} {
		if !(p.v > 0 && p.v <= 1) {
			bad("%s %v: want a value in (0, 1]", p.name, p.v)
		}
	}
	if c.SeasonWindow < 0 {
		bad("season window %d: want >= 0", c.SeasonWindow)
	}
	if c.Residuals < 1 || c.Residuals > 1<<16 {
		bad("residuals %d: want between 1 and 65536", c.Residuals)
	}
	if c.SmoothingResiduals < 1 || c.SmoothingResiduals > 1<<16 {
		bad("smoothing residuals %d: want between 1 and 65536", c.SmoothingResiduals)
	}
	if c.MinResiduals < 1 || c.MinResiduals > c.Residuals {
		bad("min residuals %d: want between 1 and residuals (%d)", c.MinResiduals, c.Residuals)
	}
	if !(c.Offset > 0) || c.Offset > 1e300 {
		bad("offset %v: want a positive value", c.Offset)
	}
	if len(errs) > 0 {
		return fmt.Errorf("forecast config: %w", errors.Join(errs...))
	}
	return nil
}
