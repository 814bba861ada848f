// Package eval runs policies side by side on scenarios and reports how they
// did: Run simulates every scenario x policy x seed, Report.WriteJSON,
// Report.WriteMarkdown, Report.WriteSeries and Report.WritePlots write
// report.json, report.md, series.csv and PNG plots (Report.Write writes all of
// them into a directory). `regiment eval` is the shell around it.
// WriteMetrics, WriteCeilingBound and Report.WriteTotalsText write the
// plain-text tables `regiment sim`, `run` and `eval` print.
//
// # Same traffic for every policy
//
// Run k of a scenario (k = 0 .. Seeds-1) uses seed = scenario seed + k, for
// every policy: the simulator draws its demand shares and noise from the seed
// alone, and no policy decision feeds back into demand, so the runs of one
// seed see the same requests, tick for tick. Traces are loaded once by the
// caller and shared read-only; each run builds its own sim.Sim and policy.
//
// # Metrics
//
// Every figure of a run (RunResult) is a pure function of config, scenario,
// seed and policy, except WallSeconds. Definitions, with the unit of each:
//
//   - cost_core_hours: provisioned node cores (ready and provisioning) x
//     hours; cost is that x cost_per_core_hour (sim.Metrics).
//   - slo_compliance: share of app-ticks with traffic whose p99 is within the
//     domain's latency objective and whose error rate is within its error
//     budget, [0, 1] (sim.Metrics; per tier from sim.Sim.DomainTicks).
//   - breach_app_minutes: app-ticks in breach x tick length, in minutes.
//   - scaling_actions: replica target changes (one per app per changed tick).
//   - cascade_events: app-ticks in breach whose own queue meets the SLO while
//     at least one callee is in breach of its own SLO (sim.Sim.AddCascades).
//   - overprovision_pct: per tick, 100 x (cores of scheduled replicas - cores
//     needed) / cores needed, averaged over ticks. Scheduled replicas are
//     ready and starting ones; an app needs clamp(ceil(rps / (concurrency /
//     service_time x target_utilisation)), min_replicas, max_replicas)
//     replicas for its current arrival rate (external plus calls, noise
//     included, events' service-time factors not), at the Soldier's target
//     utilisation. Per tier over the tier's apps, overall over all apps;
//     ticks where nothing is needed are left out. Negative is under-provisioned.
//   - reward_mean: mean over ticks of reward.Commander's Total with
//     reward.DefaultCommanderWeights, scored from the newest per-domain
//     telemetry of every simulator tick (not only Commander ticks): per domain
//     the p99 and error rate against the SLO, the domain weight, and the
//     share = domain cores used / capacity_cores; cost = provisioned node
//     cores / capacity_cores (the reference is the whole pool, so the cost
//     term is minus the pool's provisioned fraction). Node churn, proactivity
//     and floor proximity are 0: they judge a Commander's own decisions,
//     which the baselines do not make. reward_terms holds the mean of each
//     term. The Commander's reward is used, not the Soldiers', because it
//     needs no directive: every policy can be scored the same way.
//   - requests, bad_requests, bad_request_ratio: requests that arrived at
//     the apps (arrival rate x tick), those that failed or took longer than
//     their domain's p99 objective (per app and tick, 1 - (1 - errors)(1 -
//     P(T > objective)), sim.Metrics), and their ratio; per tier and, in
//     totals, the ratio of the sums. Request-weighted, where
//     breach_app_minutes weighs every app alike.
//   - energy_kwh: the nodes' energy under the cluster's power model (idle
//     watts a provisioned node plus watts a busy core, sim.Metrics); per
//     tier, the tier's busy cores plus the idle power by its scheduled
//     cores. reward_terms.energy is the Commander reward's energy term
//     (power over the pool's at full load), weighed 0 by default.
//   - regiment-independent (Independent) beside regiment: Regiment's
//     Soldiers without their Commander; report.md's totals end with
//     regiment's figures over its.
//   - peak_nodes: most ready and provisioning nodes at once; pending_pod_hours:
//     replica-hours spent pending (waiting for node capacity), per tier too.
//   - node_churn: node_provisions (nodes the provisioner started) plus
//     node_removals (idle nodes scaled down) over the run; node requests
//     still queued are not churn. node_churn_per_hour is node_churn over
//     simulated hours.
//   - scale_out, scale_out_all: scale-out episodes (sim.ScaleOut). An app is
//     short at a tick when its arrival rate exceeds ready replicas x
//     concurrency / service_time (full utilisation, no event service-time
//     factor); an episode runs from its first short tick after a covered one
//     to the next covered tick, its duration the short ticks x the tick;
//     episodes open at the end count their duration so far (open). An
//     episode is correlated when at least max(2, ceil(5% of the apps))
//     distinct apps, its own included, start one within 30 s of its start.
//     scale_out holds the correlated episodes, scale_out_all every one:
//     episodes and nearest-rank p50_seconds and p95_seconds, cluster-wide
//     and per tier (over the tier's episodes).
//   - provisioner_stalls, longest_stall_minutes, max_node_requests_2m,
//     launch_failures: the simulator's (sim.Metrics): failed scale-ups that
//     held node requests back, the longest wait of such a stall, the most
//     nodes requested within two minutes, failed instance launches. An
//     aggregate also counts stalled_runs, the seeds with a stall.
//   - max_scale_ups_30s: the most distinct apps whose replica target rose at
//     ticks within one 30 s window [t - 30 s, t].
//   - avg_cpu_utilisation: busy core-hours over provisioned node core-hours
//     (cost_core_hours); an app's busy cores are its ready replicas' cores x
//     min(arrivals / capacity, 1).
//   - peak_pods: most ready, starting and pending replicas at once.
//   - floor_core_hours: sum over apps of min_replicas x cpu_per_replica x
//     simulated hours, per tier too: what the floors alone would hold.
//   - sim_seconds: simulated time; wall_seconds: time the run took, the only
//     figure that varies between identical runs.
//
// Aggregates are the mean, min and max over seeds of each figure, per
// scenario x policy (and tier); scale-out percentiles are over the seeds
// that had an episode (scale_out.seeds of them). gap_captured is, per
// scenario x policy, (hpa - policy) / (hpa - oracle) on the mean
// cost_core_hours: 1 for the oracle, 0 for hpa, null unless both ran and
// the oracle is at least 1% cheaper than hpa.
//
// # Determinism
//
// Runs go to Workers goroutines in any order, but results are stored by
// scenario, policy and seed, in the order the options list them, so
// report.json is byte-identical for identical inputs once the wall_seconds
// fields are set aside; series.csv, report.md without its wall-time column
// and the plots depend on the inputs alone.
//
// # Cost per tick
//
// The per-tick accounting (reward, cascades, overprovisioning, sampling)
// reads the simulator's newest telemetry into buffers sized at the start and
// does not allocate; it is O(apps + dependencies).
//
// # Imports
//
// eval is an I/O shell above the cores: it imports sim, reward, baseline,
// simcluster and domains, and gonum.org/v1/plot for the plots. It does no
// terminal I/O and handles no signals; progress goes to a callback.
package eval
