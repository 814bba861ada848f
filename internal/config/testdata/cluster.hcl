# A valid config exercising every block and attribute.
cluster "prod" {
  capacity_cores      = 12000
  node_cores          = 32
  node_provision_time = "3m"
  provisioner_rate    = 20
  node_idle_timeout   = "10m"
  cost_per_core_hour  = 0.04
  telemetry_lag       = "20s"
}

commander {
  tick             = "60s"
  policy           = "forecast"
  dead_zone        = 0.02
  reserve_min      = 0.02
  max_share_change = 0.10
  directive_ttl    = "3m"
}

soldier {
  tick                = "10s"
  policy              = "proportional"
  actuation           = "hpa-bounds"
  overage_cap         = 0.10
  scale_down_cooldown = "5m"
  mode                = "active"
  target_utilisation  = 0.7
  error_rate_veto     = 0.01
}

domain "payment" {
  priority = 0
  weight   = 1.0
  floor    = 0.20
  ceiling  = 0.60
  slo {
    latency_p99  = "150ms"
    error_budget = 0.001
  }
  apps "checkout" {
    count           = 120
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 200
    service_time    = "25ms"
    concurrency     = 4
    startup_time    = "30s"
    timeout         = "5s"
    depends_on      = ["fraud/scoring"]
    call_ratio      = 1.0
  }
}

domain "fraud" {
  priority = 1
  weight   = 0.5
  floor    = 0.10
  slo {
    latency_p99 = "80ms"
  }
  apps "scoring" {
    count           = 4
    cpu_per_replica = 1
    service_time    = "10ms"
  }
}

nats {
  url         = ""
  credentials = ""
}

store {
  path      = "data/regiment.db"
  retention = "168h"
}
