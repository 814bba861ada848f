// Package reward holds Regiment's reward functions: pure functions that score
// one control step and return the score term by term, for the Commander
// (Commander), a domain's Soldier (Soldier) and the factored single-service
// policy (Service). The terms and their shapes are docs/architecture.md's
// (section Reward); each function's doc writes out its formulas.
//
// # Terms and weights
//
// Every term is normalised to [-1, 1] and signed so that higher is better:
// rewards are positive, penalties are at most 0. Weights are magnitudes
// (>= 0, see the Validate methods), so a penalty's weight makes it a negative
// contribution, and Total is the weighted sum of the terms, computed in the
// order AppendTerms lists them:
//
//	Total = sum_k Weight_k x Value_k
//
// Each Breakdown keeps the Weights it was computed with, so its Terms carry
// name, value and weight and explain Total on their own. A caller that stores
// the breakdown as named values (store.Step.Reward) writes each Term's Name
// and Value and Total under TotalName ("total"). Term names are stable
// snake_case keys; renaming one breaks stored episodes.
//
// Defaults (DefaultCommanderWeights, DefaultSoldierWeights,
// DefaultServiceWeights) are documented field by field on the Weights types.
// The zero Weights weigh nothing.
//
// # Decisions where the spec is open
//
//   - An objective <= 0 (SLO, ErrorBudget, SLA) means none is set: its ratio
//     is 0, always met.
//   - Commander adherence uses latency only (r = p99 / SLO); errors enter
//     through Degradation. The Soldier has no degradation term, so its
//     adherence takes the worse of p99 / SLO and errorRate / errorBudget.
//   - Adherence is the mean over domains, unweighted (priority weights enter
//     through Degradation); with no domains it is 0.
//   - Degradation's ratios are not clipped at 2 before weighting; the term is
//     clipped at 1 after.
//   - Cost is -cost / referenceCost, clipped at -1 (cost at or above the
//     reference); referenceCost <= 0 disables it. Energy is the same shape,
//     -power / referencePower (the pool at full load), and weighs 0 by
//     default (CommanderWeights.Energy says why).
//   - Node churn is churnedNodes / nodes, clipped at 1; oscillation is
//     oscillating apps / apps, clipped at 1; a count below 1 in a denominator
//     reads as 1. Counting the events (ChurnWindow, OscillationWindow,
//     ProactiveLead) is the caller's job; this package only normalises.
//   - Proactivity is 1 when both gates hold (Proactive and BeatProportional)
//     and 0 otherwise; it is the only bonus.
//   - Floor proximity of a domain is 1 at or below its floor, falling linearly
//     to 0 at CommanderWeights.FloorMargin (default 0.05) of share above it;
//     the term is minus the maximum over domains with a floor (Floor > 0)
//     whose demand exceeds their share (Demand > Share): a quiet domain sits
//     at its floor by right, and would otherwise pin the term at -1.
//   - Utilisation deviation is scaled by max(t, 1 - t) so that any
//     utilisation in [0, 1] stays within [-1, 0]; it is clipped at -1 beyond.
//     With no budget it is 0 when nothing is used and -1 otherwise.
//   - Alignment treats missing entries of the shorter slice as 0; when nothing
//     was intended, doing nothing scores 1 and doing anything 0. Its epsilon
//     (1e-9) sits only in the cosine's denominator, so a matched allocation
//     scores 1 - O(1e-9 / |a|^2).
//   - Cold start is -(replicas - ready) / replicas, 0 with no replicas.
//   - Per-service CPU cost is normalised by ServiceInput.MaxCPUCores (an
//     addition to the input), so that 0.1 x CPU cost stays in
//     [-0.1, 0]; the error term is the raw excess over the threshold (already
//     a fraction); the SLA violation ratio is max(0, p99 / SLA - 1), clipped
//     at 1; downstream pressure is all or nothing.
//
// # Invariants
//
//   - Latencies and their objectives share a unit (seconds by convention);
//     only their ratio matters. Costs share a unit with the reference; cores
//     with cores.
//   - Every term is finite and within its documented range for any input,
//     including negative, infinite and NaN values: a negative quantity reads
//     as 0, an infinite ratio hits the clip, and a NaN scores the worst value
//     of the term it feeds (for Commander adherence, of its domain's share of
//     the mean). A bad measurement therefore never looks good, and a stored
//     breakdown stays encodable (the store rejects NaN). Total is finite for
//     finite weights.
//   - Commander, Soldier, Service and the building blocks do not allocate;
//     Terms does (AppendTerms into a caller-owned buffer does not).
//
// # Concurrency
//
// Everything here is a pure function of its arguments and safe for
// concurrent use. Input slices are read, never kept or written.
//
// # Imports
//
// Standard library only (math, errors, fmt, time). It must not import
// anything else from the repository, nor NATS, bbolt, client-go or HCL, so
// that the simulator, trainers and daemons can all share it.
package reward
