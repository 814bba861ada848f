# A small cluster: 5 domains, 22 apps. Quick to simulate; the default of
# `regiment run` and the daemons' end-to-end tests.
cluster "small" {
  capacity_cores      = 640    # contested pool: at most 40 nodes of 16 cores
  node_cores          = 16
  node_provision_time = "2m"
  provisioner_rate    = 10     # node starts per minute
  node_idle_timeout   = "10m"
  cost_per_core_hour  = 0.04
  telemetry_lag       = "20s"
}

commander {
  tick   = "60s"
  # The heuristic. The learned Commander trained on this cluster,
  # "../models/commander.ckpt" (docs/training.md#the-learned-commander), is
  # about a point cheaper on the held-out scenarios for 2.6 points more
  # breaches: a trade, not a win, so it is opt-in.
  policy = "forecast"
}
soldier {
  tick = "10s"
  actuation = "replicas"
  scale_down_cooldown = "5m"
}

domain "payment" {
  priority = 0
  weight   = 1.0
  floor    = 0.15
  ceiling  = 0.60
  slo {
    latency_p99 = "400ms"
    error_budget = 0.001
  }
  apps "checkout" {
    count           = 4
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 60
    service_time    = "25ms"
    concurrency     = 4
    depends_on      = ["fraud/scoring", "payment/ledger"]
  }
  apps "ledger" {
    count           = 2
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 40
    service_time    = "15ms"
    concurrency     = 8
  }
}

domain "fraud" {
  priority = 0
  weight   = 0.9
  floor    = 0.10
  ceiling  = 0.50
  slo {
    latency_p99 = "150ms"
    error_budget = 0.001
  }
  apps "scoring" {
    count           = 2
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 60
    service_time    = "10ms"
    concurrency     = 4
  }
  apps "rules" {
    count           = 2
    cpu_per_replica = 0.5
    min_replicas    = 1
    max_replicas    = 20
    service_time    = "20ms"
    concurrency     = 2
  }
}

domain "merchant" {
  priority = 1
  weight   = 0.6
  floor    = 0.10
  ceiling  = 0.50
  slo {
    latency_p99 = "500ms"
    error_budget = 0.005
  }
  apps "api" {
    count           = 6
    cpu_per_replica = 0.5
    min_replicas    = 1
    max_replicas    = 40
    service_time    = "40ms"
    concurrency     = 4
  }
}

domain "data" {
  priority = 2
  weight   = 0.3
  floor    = 0.05
  ceiling  = 0.50
  slo {
    latency_p99 = "2s"
    error_budget = 0.01
  }
  apps "etl" {
    count           = 3
    cpu_per_replica = 2
    min_replicas    = 1
    max_replicas    = 30
    service_time    = "200ms"
    concurrency     = 8
  }
}

domain "platform" {
  priority = 3
  weight   = 0.2
  floor    = 0.05
  ceiling  = 0.30
  slo {
    latency_p99 = "1s"
    error_budget = 0.01
  }
  apps "tools" {
    count           = 3
    cpu_per_replica = 0.5
    min_replicas    = 1
    max_replicas    = 20
    service_time    = "50ms"
    concurrency     = 2
  }
}

nats  { url = "" }
store {
  path = "data/regiment.db"
  retention = "168h"
}
