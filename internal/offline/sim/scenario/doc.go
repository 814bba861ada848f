// Package scenario is the one loader of simulated worlds: a cluster config, a
// scenario file read against it and the traces the scenario names. Every
// caller that simulates from files goes through it (regiment sim, run,
// eval, train and validate, the simulated Soldier daemon, internal/offline/sim/simtest), so
// they read the same files the same way and report the same errors, each
// with its file and line.
//
// Load checks the traffic as a simulation would (sim.CheckTraffic): a
// trace with no series, all zero or not covering the scenario's start is
// refused before any simulation is built. Read leaves that check to
// sim.New, for a caller that simulates another config than the one the
// scenario was read against (the Soldier daemon's, with its own step).
//
// A loaded sim.Scenario is shared read-only by every simulation of it.
//
// It imports domains, internal/config, sim and internal/offline/sim/trace; nothing in the
// decision cores imports it.
package scenario
