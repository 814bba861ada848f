# Regiment on a staging cluster (docs/staging.md): three domains whose apps
# are found on the cluster by label, every domain in recommend mode: the
# Soldiers observe, decide and record, and write nothing; the cluster's own
# HPAs keep scaling. Change one domain's mode to "active" when its report
# (regiment report) says so.
cluster "staging" {
  capacity_cores = 2000 # the most the pool may grow to; shared out less what others request on its nodes
  node_cores     = 16
}

commander {
  tick   = "60s"
  policy = "forecast"
}

soldier {
  tick      = "10s"
  actuation = "hpa-bounds" # write the apps' HPAs' bounds (when active)
  mode      = "recommend"  # every domain unless it says otherwise
}

kubernetes {
  lease_namespace    = "regiment"           # the release's namespace
  pool_node_selector = "pool=general"       # the contested pool's nodes: capacity from the cluster
}

prometheus {
  url = "http://prometheus.monitoring.svc:9090"
}

store {
  path = "/data/regiment.db"
}

domain "payment" {
  priority = 0
  floor    = 0.3
  mode     = "recommend"
  slo {
    latency_p99 = "150ms"
  }
  discover {
    namespaces   = ["payments", "storefront"]
    selector     = "regiment.io/domain=payment"
    service_time = "25ms"
    min_replicas = 2
    max_replicas = 50
  }
}

domain "fraud" {
  priority = 1
  floor    = 0.1
  mode     = "recommend"
  slo {
    latency_p99 = "80ms"
  }
  discover {
    namespaces   = ["risk"]
    selector     = "regiment.io/domain=fraud"
    service_time = "10ms"
    min_replicas = 2
    max_replicas = 40
  }
}

domain "merchant" {
  priority = 2
  floor    = 0.1
  mode     = "recommend"
  slo {
    latency_p99 = "300ms"
  }
  discover {
    namespaces   = ["storefront"]
    selector     = "regiment.io/domain=merchant"
    service_time = "40ms"
    min_replicas = 2
    max_replicas = 30
  }
}
