# A tenth of the seed-scale world (examples/seedscale.hcl), the world
# `make run` and `regiment run` use by default: 155 apps in the same 5 domains
# and app sets, ~7,500 pods at the daily peak under hpa on ~210 nodes of 32
# cores, demand-dominated (min_replicas floors are about a fifth of hpa's
# core-hours), with the provisioner's rate and burst scaled by a tenth too, so
# that a correlated spike queues for nodes as it does at full scale. Every
# other setting is the seed-scale world's; see its comments for the figures
# they reproduce.

cluster "tenth" {
  capacity_cores      = 9600    # at most 300 nodes of 32 cores
  node_cores          = 32      # a common large instance (e.g. m6i.8xlarge: 32 vCPU)
  node_provision_time = "90s"   # launch, boot, kubelet ready: 60-120 s on a large cloud
  # The seed world's provisioner (Karpenter with EC2's buckets, which are per account and do not
  # shrink with the cluster), with a tenth of its region's spare capacity and its refill, so that a
  # correlated burst a tenth the size stalls the same way.
  provisioner           = "karpenter"
  launch_instance_rate  = 2     # EC2 resource bucket of RunInstances: 2 instances a second
  launch_instance_burst = 1000
  spare_capacity        = 60    # a tenth of the seed world's 600
  spare_capacity_rate   = 12    # nodes per minute, a tenth of the seed world's
  node_idle_timeout   = "10m"   # cluster-autoscaler's scale-down-unneeded-time
  cost_per_core_hour  = 0.04
  telemetry_lag       = "20s"   # metrics-server scrape + HPA sync, as the seed's pipeline
  # Scheduling (issue 31): the seed's cluster had no PriorityClasses it could
  # trust (they drifted and were copy-pasted, so apps ran without them and
  # whoever asked first was scheduled first): pending pods are scheduled in
  # arrival order and nothing is preempted. hpa-priority runs this world with
  # priority_classes = true (docs/simulator.md#scheduling).
  priority_classes    = false
  # Replicas of 0.5, 1 and 2 cores divide a 32-core node, so CPU requests
  # pack without loss; the seed gives no fragmentation figure, and its 65-70%
  # CPU usage of provisioned cores under hpa is met with ideal packing.
  packing_loss        = 0
}

commander {
  tick        = "60s"
  dead_zone   = 0.02
  reserve_min = 0.02
  headroom    = 0.06  # the seed-scale world's: one headroom for domains alike in burstiness
}
soldier {
  tick                = "10s"
  actuation           = "hpa-bounds"
  overage_cap         = 0.10
  scale_down_cooldown = "5m"
  target_utilisation  = 0.78  # the CPU target of the seed's HPAs; Soldiers size small apps at it, large ones up to max_utilisation
}

# Payment: authorisation, capture, ledger. P0; about 30% of the pool.
domain "payment" {
  priority = 0
  weight   = 1.0
  floor    = 0.20
  ceiling  = 0.60
  headroom = 0.08  # P0 gets more than the Commander's 0.06, P2-P3 less (chosen on the training days)
  slo {
    latency_p99  = "400ms"
    error_budget = 0.001
  }
  apps "gateway" { # the front doors: few apps, high floors
    count           = 1
    cpu_per_replica = 1
    min_replicas    = 30
    max_replicas    = 3000
    service_time    = "8ms"
    concurrency     = 8
    startup_time    = "30s"
  }
  apps "checkout" {
    count           = 15
    cpu_per_replica = 1
    min_replicas    = 3
    max_replicas    = 2000
    service_time    = "40ms"
    concurrency     = 4
    startup_time    = "45s"
    depends_on      = ["fraud/scoring", "payment/ledger"]
    call_ratio      = 2      # each checkout is scored twice (pre- and post-authorisation)
    call_lag        = "20s"  # fraud trails authorisation by 10-30 s (the seed)
  }
  apps "authorisation" {
    count           = 9
    cpu_per_replica = 1
    min_replicas    = 3
    max_replicas    = 2000
    service_time    = "30ms"
    concurrency     = 4
    startup_time    = "45s"
    depends_on      = ["fraud/rules"]
    call_ratio      = 3      # three rule sets per authorisation
    call_lag        = "20s"
  }
  apps "ledger" {
    count           = 8
    cpu_per_replica = 1
    min_replicas    = 3
    max_replicas    = 1500
    service_time    = "15ms"
    concurrency     = 4
    startup_time    = "60s"
  }
  apps "tokenisation" {
    count           = 6
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "10ms"
    concurrency     = 2
  }
  apps "payouts" {
    count           = 6
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 1000
    service_time    = "50ms"
    concurrency     = 4
  }
  apps "notifications" {
    count           = 5
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1000
    service_time    = "20ms"
    concurrency     = 2
  }
}

# Fraud: scoring inline with authorisation; its demand is payment's calls.
domain "fraud" {
  priority = 0
  weight   = 0.9
  floor    = 0.10
  ceiling  = 0.50
  headroom = 0.08  # as payment
  slo {
    latency_p99  = "150ms"
    error_budget = 0.001
  }
  apps "scoring" {
    count           = 11
    cpu_per_replica = 1
    min_replicas    = 3
    max_replicas    = 2000
    service_time    = "10ms"
    concurrency     = 2
    startup_time    = "60s"
  }
  apps "rules" {
    count           = 8
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "8ms"
    concurrency     = 2
  }
  apps "features" {
    count           = 5
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 1000
    service_time    = "12ms"
    concurrency     = 4
  }
  apps "graph" {
    count           = 3
    cpu_per_replica = 2
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "40ms"
    concurrency     = 8
  }
  apps "review" {
    count           = 3
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "30ms"
    concurrency     = 2
  }
}

# Merchant APIs: catalogue, orders, onboarding. P1; about 30% of the pool.
domain "merchant" {
  priority = 1
  weight   = 0.6
  floor    = 0.10
  ceiling  = 0.50
  slo {
    latency_p99  = "500ms"
    error_budget = 0.005
  }
  apps "api" {
    count           = 15
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 2000
    service_time    = "40ms"
    concurrency     = 4
  }
  apps "catalog" {
    count           = 8
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "30ms"
    concurrency     = 4
  }
  apps "search" {
    count           = 6
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "60ms"
    concurrency     = 4
  }
  apps "orders" {
    count           = 6
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "25ms"
    concurrency     = 2
  }
  apps "onboarding" {
    count           = 5
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "50ms"
    concurrency     = 4
  }
}

# Data pipelines: ETL, streams, loaders, reporting. P2; about 10% of the pool.
domain "data" {
  priority = 2
  weight   = 0.3
  floor    = 0.05
  ceiling  = 0.50
  headroom = 0.02  # as platform
  slo {
    latency_p99  = "2s"
    error_budget = 0.01
  }
  apps "etl" {
    count           = 8
    cpu_per_replica = 2
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "200ms"
    concurrency     = 8
    startup_time    = "60s"
  }
  apps "stream" {
    count           = 6
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "50ms"
    concurrency     = 4
  }
  apps "loaders" {
    count           = 3
    cpu_per_replica = 2
    min_replicas    = 2
    service_time    = "300ms"
    concurrency     = 8
    max_replicas    = 600
  }
  apps "reporting" {
    count           = 3
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 300
    service_time    = "150ms"
    concurrency     = 4
  }
}

# Platform: internal tools, CI runners, observability. P3; about 10% of the pool.
domain "platform" {
  priority = 3
  weight   = 0.2
  floor    = 0.05
  ceiling  = 0.30
  headroom = 0.02  # a P2-P3 breach costs least: less margin than the Commander's 0.06
  slo {
    latency_p99  = "1s"
    error_budget = 0.01
  }
  apps "tools" {
    count           = 6
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "50ms"
    concurrency     = 2
  }
  apps "ci" {
    count           = 4
    cpu_per_replica = 2
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "100ms"
    concurrency     = 4
  }
  apps "observability" {
    count           = 3
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "30ms"
    concurrency     = 4
  }
  apps "auth" {
    count           = 2
    cpu_per_replica = 0.5
    min_replicas    = 3
    max_replicas    = 500
    service_time    = "10ms"
    concurrency     = 4
  }
}
