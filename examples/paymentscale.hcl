# A payments company at scale: 5 domains, 1,550 apps in 10 app sets on one
# contested pool of 12,000 cores. The speed benchmark and the evaluation's
# large example.
cluster "paymentscale" {
  capacity_cores      = 12000  # 375 nodes of 32 cores
  node_cores          = 32
  node_provision_time = "3m"
  provisioner_rate    = 20
  node_idle_timeout   = "10m"
  cost_per_core_hour  = 0.04
  telemetry_lag       = "20s"
}

commander {
  tick = "60s"
  dead_zone = 0.02
  reserve_min = 0.02
}
soldier {
  tick = "10s"
  actuation = "hpa-bounds"
  overage_cap = 0.10
  scale_down_cooldown = "5m"
}

domain "payment" {
  priority = 0
  weight   = 1.0
  floor    = 0.20
  ceiling  = 0.60
  slo {
    latency_p99 = "400ms"
    error_budget = 0.001
  }

  apps "checkout" {
    count           = 300
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 200
    service_time    = "40ms"
    concurrency     = 2
    depends_on      = ["fraud/scoring", "payment/ledger"]
  }
  apps "ledger" {
    count           = 150
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 100
    service_time    = "15ms"
    concurrency     = 4
  }
  apps "gateway" {
    count           = 50
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 100
    service_time    = "5ms"
    concurrency     = 8
  }
}

domain "fraud" {
  priority = 0
  weight   = 0.9
  floor    = 0.15
  ceiling  = 0.50
  slo {
    latency_p99 = "150ms"
    error_budget = 0.001
  }

  apps "scoring" {
    count           = 200
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 150
    service_time    = "10ms"
    concurrency     = 2
  }
  apps "rules" {
    count           = 100
    cpu_per_replica = 0.5
    min_replicas    = 1
    max_replicas    = 50
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
    count           = 300
    cpu_per_replica = 0.5
    min_replicas    = 1
    max_replicas    = 100
    service_time    = "40ms"
    concurrency     = 4
  }
  apps "catalog" {
    count           = 100
    cpu_per_replica = 0.5
    min_replicas    = 1
    max_replicas    = 100
    service_time    = "30ms"
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
    count           = 150
    cpu_per_replica = 2
    min_replicas    = 1
    max_replicas    = 60
    service_time    = "200ms"
    concurrency     = 8
  }
  apps "stream" {
    count           = 50
    cpu_per_replica = 1
    min_replicas    = 1
    max_replicas    = 60
    service_time    = "50ms"
    concurrency     = 4
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
    count           = 150
    cpu_per_replica = 0.5
    min_replicas    = 1
    max_replicas    = 40
    service_time    = "50ms"
    concurrency     = 2
  }
}

nats  { url = "" }
store {
  path = "data/regiment.db"
  retention = "168h"
}
