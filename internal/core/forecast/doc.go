// Package forecast forecasts one domain's demand a few minutes ahead, as
// calibrated quantiles: P10, P50, P80 and P90 at +5, +15 and +30 minutes by
// default. The Commander budgets ahead of the P80 forecasts and reads
// (P90-P10)/P50 as the forecast's uncertainty.
//
// A Forecaster is fed one observation per step (Observe, a minute by
// default, the Commander tick) and asked for a Forecast at any time. Time is
// a parameter: nothing here reads the clock.
//
// # Models
//
// Both models work on x = log(y + Offset), so their additive components are
// relative changes and a daily profile scales with the level.
//
//   - The seasonal model is Holt-Winters' additive method with a damped
//     trend (Hyndman and Athanasopoulos, "Forecasting: Principles and
//     Practice", 3rd ed., 8.3) over a daily profile of one index per step.
//     The profile is smoothed over a window of steps and measured against a
//     slow (one-day) deseasonalised level rather than the fast one; see
//     seasonal.update for why. It starts once a whole period of history is
//     in, initialised from that period with its trend removed.
//   - The fallback is Holt's linear trend method, damped (FPP3 8.2). It runs
//     all the time and answers whenever the seasonal model cannot yet: with
//     less than a period of history, or while the target's time-of-day slice
//     has fewer than MinResiduals residuals of the seasonal model.
//
// # Calibration
//
// Every step, each model's point forecast for each horizon is kept until
// its target step is observed; the signed log residual x - xhat then joins a
// calibration set: per horizon for the fallback, per horizon and per
// time-of-day slice of the target (Slices = 6, four hours each by default)
// for the seasonal model. Each set is a ring of the last Residuals values.
// Quantile q of a forecast is exp(xhat + r_q) - Offset, floored at 0, with
// r_q the split-conformal quantile of the set (residuals.quantile: Vovk et
// al. 2005; Lei et al. 2018); calibrating per slice is Mondrian conformal
// prediction. Signed residuals, not absolute ones, so that a skewed error or
// a biased point forecast (a damped trend lagging a ramp) is corrected in
// each quantile separately: P50 is the point forecast plus the median
// residual. The guarantee assumes the recent residuals are exchangeable with
// the next; after a change of regime the quantiles are off until the ring
// has turned over (by default 720 residuals, three days of a slice, for the
// seasonal model and 240, four hours, for the fallback).
//
// # Invariants
//
//   - Demand is in the observations' unit (requests per second, or per
//     minute for a trace), finite and >= 0; a negative observation counts as
//     0, a NaN or infinite one is dropped.
//   - For every horizon, 0 <= P10 <= P50 <= P80 <= P90.
//   - A step is Config.Step long; an observation belongs to the nearest step,
//     counted from the Unix epoch. Time of day (the profile's phase and the
//     calibration slice) is the step's position in Config.Period from the
//     epoch: for the default 24 h period, UTC time of day.
//   - Memory is fixed by New: three arrays of Period/Step values (profile,
//     first-day history, scratch), one ring of pending forecasts per model
//     and horizon, and 3 fallback and 3*Slices seasonal residual rings of
//     2*SmoothingResiduals and 2*Residuals values: about 250 KiB per
//     Forecaster by default. Observe and Forecast do not allocate.
//
// # Evaluation
//
// Evaluate replays a series through a Forecaster and reports, per
// time-of-day slice and per horizon, how often demand exceeded P80 (target
// 20%), how often it fell within [P10, P90] (target 80%), and the MAPE of
// P50.
//
// A Forecaster is not safe for concurrent use; the Commander owns one per
// domain. Package forecast imports only the standard library; it must not
// import NATS, bbolt, client-go or HCL (its tests read traces with internal/offline/sim/trace).
package forecast
