// Package baseline holds the reference policies Regiment is measured against,
// built by name with New, in report order (Names):
//
//   - hpa: the Kubernetes HorizontalPodAutoscaler v2 on CPU utilisation, one
//     per app, with the documented defaults (target utilisation from the
//     config, tolerance 0.1, 15 s sync, scale-up by max(100%, 4 pods) per 15 s,
//     scale-down stabilised over 300 s). Its pure core is Recommend, which
//     returns the replica count and the reason, like the controller's
//     replica calculator and behaviour normalisation (hpa.go); HPA is the
//     simulator shell that keeps each app's history (hpapolicy.go). It reads
//     the CPU utilisation metrics-server would report (used over requested,
//     above 100% for burstable pods up to the app set's cpu_limit_ratio).
//   - hpa-priority: the same HPA in a world whose pods carry PriorityClasses
//     by tier (World sets Cluster.PriorityClasses on a copy of the config):
//     scheduling by tier with kube-scheduler's preemption, the strong
//     baseline the seed's author concedes gets 60-70% of the way. Build its
//     simulation from World; New refuses one without PriorityClasses.
//   - hpa-legacy: the same HPA without spec.behavior (as an HPA created
//     without one is), which the controller scales by its legacy path: at
//     most max(2x, 4) replicas per reconcile, the highest recommendation of
//     the last 5 minutes held either way.
//   - tuned-hpa: the same HPA with the target utilisation, scale-down
//     window and per-HPA tolerance a documented grid search picked for its
//     world (TunedHPA, TuneHPA, tune.go): the seed-scale world's for
//     examples/seedscale.hcl and examples/tenth.hcl, paymentscale's for
//     every other world.
//   - proportional: domain budgets in proportion to current request rates
//     within floors and ceilings, apps sized by utilisation inside them.
//   - static: every app sized once for its peak.
//   - oracle: knows the future demand exactly (sim.Future) and holds, per app,
//     the fewest replicas that meet the SLO over the startup time of a new
//     replica, on nodes it asks for ahead through the pool's capacity target
//     (Sim.SetCapacityTarget) as late as the provisioner allows
//     (Sim.ProvisionerStarts: with cluster-autoscaler or karpenter, the
//     cloud's sustained launch rate without its bursts, so no launch of its
//     fails and it never stalls the provisioner): the cost floor at full
//     compliance. No real policy can match it.
//
// Invariants: replica targets stay within each app's [min, max] (the oracle
// and the HPA never leave them; static and proportional clamp); utilisations
// are shares of a replica's CPU request: in [0, 1] for proportional (the
// busy share, sim.AppTelemetry.CPUUtil, as the Soldier observes it), in
// [0, cpu_limit_ratio] for the HPA (CPURequestUtil); times are the
// simulator's.
//
// Policies implement sim.Policy. Decide is a function of the telemetry and
// the policy's own state, takes no locks, does no I/O and does not allocate
// in steady state. A policy serves one simulation and is not safe for
// concurrent use. Static and the oracle read the simulation they are built
// for (its peak demand, its future), so build them before stepping it.
//
// Package baseline imports only domains, sim and the standard library; its
// tests also read the example configs (internal/config, internal/offline/sim/trace).
package baseline
