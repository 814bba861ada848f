# The seed-scale world: the one large shared cluster Regiment is built for.
# Every figure below reproduces one of the seed's (docs/seed-scale.md has the
# table of seed figures next to what this world produces under hpa, and the
# commands that measure them).
#
#   1,550 apps in 5 domains: payment 500 (P0), fraud 300 (P0), merchant 400
#   (P1), data 200 (P2), platform 150 (P3), in 4-7 app sets per domain.
#   ~75,000 pods at the daily peak under hpa in this contested pool (the seed:
#   one point of the pool is ~750 pods; payment ~30% of it, platform ~10%).
#   The seed's other ~25,000 pods (DaemonSets, stateful sets on dedicated
#   pools) are not contested and not simulated.
#   Nodes of 32 cores; a pool of ~2,000-2,500 nodes at peak.
#   Average CPU usage under hpa of 65-70% of provisioned node cores.
#   min_replicas as teams set them: 2-3 for most apps, 20-40 for a handful of
#   P0 front doors; floors are well under 20% of hpa's core-hours.
#
# App sizes are heavy-tailed: a timeseries trace splits a domain's demand
# between its apps by log-normal weights (app_skew, the sigma, in the
# scenarios: 1.6 at seed scale, so the top 5% of a domain's apps carry about
# half its traffic); an azure-functions trace gives each app its own function,
# which are heavy-tailed by nature.
cluster "seedscale" {
  capacity_cores      = 96000   # at most 3,000 nodes of 32 cores: headroom above the ~2,300-node peak
  node_cores          = 32      # a common large instance (e.g. m6i.8xlarge: 32 vCPU)
  node_provision_time = "90s"   # launch, boot, kubelet ready: 60-120 s on a large cloud
  # The node provisioner (docs/simulator.md#the-node-provisioner): Karpenter, as the seed's cluster
  # (its diagrams name it), with its defaults (BATCH_IDLE_DURATION 1s, BATCH_MAX_DURATION 10s, an
  # offering that hit insufficient capacity unavailable for 3m), launching through EC2's documented
  # per-account buckets.
  provisioner           = "karpenter"
  launch_request_rate   = 5     # EC2 request bucket of launch calls (RunInstances, CreateFleet): 5 a second
  launch_request_burst  = 50    # ... holding 50 calls; Karpenter batches identical CreateFleet calls up to 1,000 instances
  launch_instance_rate  = 2     # EC2 resource bucket of RunInstances: 2 instances a second (120 a minute)
  launch_instance_burst = 1000  # ... holding 1,000 instances
  # The region's spare capacity of the node type: a calibrated assumption, the one free parameter.
  # 600 nodes lie between the largest burst of node requests of a day without a flash sale (under
  # 200 within a minute or two: the kick-off ramps of the diurnal and postmortem days) and the seed's
  # stampede (the postmortems' flash sale on a busy hour: ~900 nodes within two minutes from
  # hundreds of services at once), and
  # at least half that stampede, so one unavailable-offerings TTL (3 min) covers the rest: new
  # capacity about four minutes after the burst, the seed's figure. It frees 2 a second, the
  # instance bucket's own rate, so that bucket and the spare capacity sustain the same launches.
  spare_capacity        = 600
  spare_capacity_rate   = 120   # nodes per minute
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
  headroom    = 0.06  # one headroom for domains alike in burstiness, as the seed's; P0 and P2-P3 set their own (chosen on the training days, docs/experiments.md)
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
    count           = 8
    cpu_per_replica = 1
    min_replicas    = 30
    max_replicas    = 3000
    service_time    = "8ms"
    concurrency     = 8
    startup_time    = "30s"
  }
  apps "checkout" {
    count           = 150
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
    count           = 90
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
    count           = 80
    cpu_per_replica = 1
    min_replicas    = 3
    max_replicas    = 1500
    service_time    = "15ms"
    concurrency     = 4
    startup_time    = "60s"
  }
  apps "tokenisation" {
    count           = 60
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "10ms"
    concurrency     = 2
  }
  apps "payouts" {
    count           = 60
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 1000
    service_time    = "50ms"
    concurrency     = 4
  }
  apps "notifications" {
    count           = 52
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
    count           = 110
    cpu_per_replica = 1
    min_replicas    = 3
    max_replicas    = 2000
    service_time    = "10ms"
    concurrency     = 2
    startup_time    = "60s"
  }
  apps "rules" {
    count           = 80
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "8ms"
    concurrency     = 2
  }
  apps "features" {
    count           = 50
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 1000
    service_time    = "12ms"
    concurrency     = 4
  }
  apps "graph" {
    count           = 30
    cpu_per_replica = 2
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "40ms"
    concurrency     = 8
  }
  apps "review" {
    count           = 30
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
    count           = 150
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 2000
    service_time    = "40ms"
    concurrency     = 4
  }
  apps "catalog" {
    count           = 80
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "30ms"
    concurrency     = 4
  }
  apps "search" {
    count           = 60
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "60ms"
    concurrency     = 4
  }
  apps "orders" {
    count           = 60
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 1500
    service_time    = "25ms"
    concurrency     = 2
  }
  apps "onboarding" {
    count           = 50
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
    count           = 80
    cpu_per_replica = 2
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "200ms"
    concurrency     = 8
    startup_time    = "60s"
  }
  apps "stream" {
    count           = 60
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "50ms"
    concurrency     = 4
  }
  apps "loaders" {
    count           = 30
    cpu_per_replica = 2
    min_replicas    = 2
    service_time    = "300ms"
    concurrency     = 8
    max_replicas    = 600
  }
  apps "reporting" {
    count           = 30
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
    count           = 60
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "50ms"
    concurrency     = 2
  }
  apps "ci" {
    count           = 40
    cpu_per_replica = 2
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "100ms"
    concurrency     = 4
  }
  apps "observability" {
    count           = 30
    cpu_per_replica = 1
    min_replicas    = 2
    max_replicas    = 500
    service_time    = "30ms"
    concurrency     = 4
  }
  apps "auth" {
    count           = 20
    cpu_per_replica = 0.5
    min_replicas    = 3
    max_replicas    = 500
    service_time    = "10ms"
    concurrency     = 4
  }
}
