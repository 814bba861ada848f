// Package eval runs policies side by side on scenarios and reports how they
// did: Run simulates every scenario x policy x seed, Report.WriteJSON,
// Report.WriteMarkdown, Report.WriteSeries and Report.WritePlots write
// report.json, report.md, series.csv and PNG plots (Report.Write writes all of
// them into a directory). `regiment eval` is the shell around it.
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
//   - sim_seconds: simulated time; wall_seconds: time the run took, the only
//     figure that varies between identical runs.
//
// Aggregates are the mean, min and max over seeds of each figure, per
// scenario x policy (and tier).
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
