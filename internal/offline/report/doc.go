// Package report compares what recommend-mode Soldiers recorded they would
// have done with what the cluster did (`regiment report`): per domain and
// app, replicas over time both ways, core-hours both ways and breach minutes
// both ways.
//
// Measured: the live replicas (each app's workload target), the request rate
// of each app, the domain's SLO met or not (recorded p99 and error rate), the
// live HPA bounds, the apps that breached with their ceiling's replicas
// ready (listed apart: no autoscaler serves them), and those whose sizing
// wanted more than that ceiling, with the most it wanted. Recommended: the Soldier's policy's targets after its
// stabiliser and guards, as recorded ("policy/<app>"). Estimated, both ways
// alike so the two columns compare: core-hours are replicas x cpu_per_replica
// over each recorded tick (requested cores, not nodes: bin packing and node
// churn are not modelled); an app's p99 is the simulator's steady-state
// M/M/c queue (sim.Queue) with c = replicas x concurrency servers of rate
// 1/service_time serving the recorded request rate, every replica assumed
// ready (start-up delays, backlogs, callees' latency and errors are not
// modelled), and an app-tick is in breach when that p99 exceeds its domain's
// latency objective or its load reaches 98% of capacity. Service times are
// the config's: give the config `regiment calibrate` wrote for estimates
// fitted to the same cluster.
//
// The apps are the store's own: every app with a recorded target in a
// recommend-mode step, listed in the config or found by label (discover),
// under its name in the store ("domain/app"), with the namespace, workload,
// CPU request and service time its Soldier's episode describes
// (recording.AppMeta), else the config's, else the discover block's
// defaults (no CPU request: no core-hours, and report.md says so). An app
// found partway through has no values (NaN) before its first step.
//
// Stores are read as files: a daemon's running store through its snapshot
// (episodes.Sources downloads a URL into a temporary file).
//
// The package reads stores and writes files; its estimates (Compare, P99)
// are pure. It imports domains, store, recording, episodes, sim and
// gonum/plot.
package report
