# A valid config mapping apps onto Kubernetes workloads.
cluster "prod" {
  capacity_cores = 1000
}

kubernetes {
  namespace       = "shop"
  lease_namespace = "regiment"
  lease_duration  = "30s"
  hpa_headroom    = 0.25
  writes_per_second = 80
  write_burst       = 40
  pool_node_selector = "karpenter.sh/nodepool=general"
  pool_max_cores     = 640
  balloon_pod_cores  = 4
  balloon_priority_class = "overprovisioning"
  balloon_tolerations = ["dedicated=apps:NoSchedule", "gpu:NoSchedule", "example.com/spot"]
}

prometheus {
  url     = "http://prometheus.monitoring:9090"
  max_age = "1m"
  queries {
    rps = "sum(rate(requests_total{namespace=\"{{.Namespace}}\",{{.Matchers}}}[2m]))"
  }
}

domain "payment" {
  floor = 0.2
  slo {
    latency_p99 = "150ms"
  }
  apps "checkout" {
    count           = 2
    cpu_per_replica = 0.5
    service_time    = "25ms"
    workload {
      name      = "checkout-{i}"
      namespace = "payments"
      selector  = "app=checkout,shard={i}"
      hpa       = "checkout-{i}-hpa"
    }
  }
  apps "ledger" {
    cpu_per_replica = 1
    service_time    = "5ms"
    workload {
      kind = "StatefulSet"
    }
  }
}

domain "fraud" {
  slo {
    latency_p99 = "80ms"
  }
  apps "scoring" {
    count           = 2
    cpu_per_replica = 1
    service_time    = "10ms"
  }
}
