// Package sim is the cluster simulator policies are evaluated and trained
// on: one contested node pool shared by the config's domains, stepped one
// Soldier tick at a time, deterministic for a config, scenario and seed.
//
// Each tick (Sim.Step): demand is read from the scenario's traces (each
// app's share of its domain's shape, mixed with a component of its own
// under app_own, precomputed at New), times its domain's burst (an AR(1)
// log-normal per minute, burst_sigma) and its events (flash sales, batch
// windows, slow dependencies), then drawn as the tick's Poisson count
// (arrival_noise "poisson") or with the multiplicative per-app noise; the
// noise has a random stream of its own (noise.go); dependencies add their callers' load; every app is an
// M/M/c queue with c = ready replicas x concurrency, whose response-time
// distribution is exact (Erlang C, queue.go) and whose p99 comes from a
// Newton solve on the log-survival; load beyond 98% of capacity builds a
// backlog that carries over and times out into errors; callee p99 and
// errors add to their callers'. Replica targets (Sim.Targets, written by a
// Policy) become pending pods, scheduled onto free node cores as
// kube-scheduler does (schedule.go): in arrival order, or with
// Cluster.PriorityClasses by tier, then arrival, a pod that does not fit
// preempting lower tiers (reactive, pod-scoped, the victims' cores freed
// after their 30 s grace period, their replicas recreated pending); a
// replica takes cpu / (1 - packing_loss) of a node. Pods are ready after
// the app's startup time; pending pods ask for nodes, which the provisioner
// starts in request order (provisioner.go): a token bucket of
// provisioner_burst starts refilled at provisioner_rate that never fails
// (the default), or Cluster Autoscaler or Karpenter launching through the
// cloud's API buckets and the region's spare capacity, where a launch can
// fail and the provisioner then stalls (a node-group backoff, an offering
// unavailable for a while); each node is ready after node_provision_time;
// idle nodes go after node_idle_timeout. A capacity target (SetCapacityTarget,
// cores) asks for nodes ahead of the pods, through the same provisioner, and
// holds them against scale-down: the placeholder pods of a real cluster's
// overprovisioning. Telemetry is what a metrics pipeline
// would show, telemetry_lag old; a domain's p99, that of its apps' merged
// response times, is solved when first read (Telemetry.DomainP99), so a
// policy that reads none does not pay for it.
//
// CPU: an app's replicas serve at most their request's worth, ready x
// concurrency slots at the service time, whatever the app set's
// cpu_limit_ratio. The telemetry reports two readings of arrivals over that
// capacity: CPUUtil, the busy share, capped at 1, and CPURequestUtil, the
// CPU used over the CPU requested as metrics-server reports it for a
// burstable pod, capped at the limit ratio (an app asked for 3x what its
// pods request shows 200% at a limit of 2x). The service capacity does not
// grow with the limit: the scheduler places pods by their requests, so CPU
// beyond a request is the node's idle CPU, which the simulator does not
// track and no pod is promised; taking the request's worth keeps latency,
// errors and cost of a replica trajectory what they were, and changes only
// what an HPA sees. The cost is that an overloaded app's reading is its
// demand rather than its served work: a real pod bursting to its limit
// would also serve faster.
//
// Units: time in simulated time (time.Time, time.Duration), rates per
// second, latencies in seconds, cores in CPU cores; cost is provisioned node
// cores x hours (Metrics), energy kWh under the cluster's power model (idle
// watts a provisioned node plus watts a busy core), requests counted as
// arrivals x tick. Apps are indexed by config order across domains.
//
// Metrics count the ticks after the initial state and the scenario's
// warm-up (Scenario.Warmup, Sim.Accounted).
//
// Invariants: Step does not allocate (TestStepDoesNotAllocate); the same
// inputs give byte-identical Metrics; randomness comes only from the
// scenario's seed. Future gives the oracle the exact demand to come.
//
// Assembly: on amd64 the Erlang C recursions run twelve at a time in SSE2
// (erlang_amd64.s), with the same bits as Queue.ErlangC. Off amd64 and at
// GOAMD64=v3 and above, where the compiler fuses multiply-adds, the Go
// reference erlangGroupGo runs instead, within 1e-12 relative of it.
//
// Concurrency: a Sim is not safe for concurrent use; run one per goroutine.
// sim imports only domains, internal/offline/sim/trace and the standard library.
package sim
