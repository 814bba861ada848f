// Package calibrate fits the simulator to recorded Soldier steps: per app set
// the service time, the startup delay and the dependency call ratio, and then
// measures how well the calibrated simulator reproduces what was recorded by
// replaying the recorded demand and replica targets through it (Pearson r of
// p99 latency and served throughput per domain and overall).
//
// It is a pure core: the caller (cmd/regiment's calibrate command) reads the
// episode store and hands plain per-app series on a tick grid (Run); Fit
// returns a calibrated copy of the config and a report, and PatchHCL writes
// the fitted values back into the config's HCL source. Nothing here does I/O.
//
// # Estimators
//
// Service time, per tick with some but not saturating load (cpu_util in
// [UtilMin, UtilMax]), from the utilisation law of a replica pool with
// concurrency c per replica (Little's law on the busy slots):
//
//	util = rps * service_time / (ready * c)
//	service_time = util * ready * c / rps
//
// The fit is the median over the ticks of every app of the set (robust to
// slow-dependency spells and metric glitches).
//
// Startup delay: replicas that enter "starting" (scheduled) are matched,
// first in first out, to the replicas that later turn ready; the delay of each
// is the ticks between the two. Stretches where replicas are removed (the
// total falls) or a sample is missing restart the matching. The fit is the
// median delay in ticks times the tick, so its resolution is one Soldier tick,
// which is also the simulator's (it rounds startup_time up to whole ticks).
//
// Call ratio: the simulator adds call_ratio x the caller's arrivals to each
// callee, on top of the callee's own external demand. Levels cannot separate
// the two when both follow the same traffic shape, so the ratio is the least
// squares slope through the origin of tick-to-tick changes,
//
//	r = sum(dx * dy) / sum(dx * dx)
//	dx = change of the callers' summed rps, dy = change of the callee's rps
//	     (minus the calls of other caller sets at their configured ratios)
//
// which is unbiased when the callee's own demand changes independently of the
// caller's from one tick to the next (per-app noise), but not when both jump
// together (a domain-wide flash sale). Since the callee's own demand is never
// negative, r is also at most y/x at every tick: the fit is capped by the
// smallest, over callees, of the 1st percentile of y/x. The level ratio
// sum(x y)/sum(x x) is reported alongside: it equals r only when the callee
// has no demand of its own. One ratio is fitted per set (the config has one
// call_ratio per set, shared by all its callees); it pools every callee.
//
// # Replay
//
// Validation runs the simulator (sim) over each Run with no traces: each
// app's external demand is its recorded rps minus the calls its callers make
// at the config's ratios (sim.SetDemand), and the recorded replica targets are
// applied as a policy would. Recorded telemetry is TelemetryLag old; the
// replay compares the simulator's equally lagged telemetry, tick for tick,
// after a warm-up that provisions the first recorded state. Served
// throughput is rps x (1 - error rate) of the domain. Pearson r of served
// throughput is dominated by the replayed demand; p99 is the demanding test.
//
// # Invariants
//
// Times are in seconds (float64) in estimates and durations in the config;
// NaN in a series marks a tick without a step. Fit never modifies its input
// config: the calibrated config is a copy with its own Domains and AppSets.
//
// WriteConfig writes the calibrated copy of a config file (regiment
// calibrate --out), checked to load with internal/config first.
//
// calibrate imports domains, internal/config, sim and the HCL writer; not
// store, soldier or recording.
package calibrate
