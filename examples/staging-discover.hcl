# A staging cluster in ten minutes: no list of apps. Each domain takes the
# Deployments labelled regiment.io/domain=<domain> in its namespaces
# (docs/kubernetes.md#discovering-apps), and the Commander shares out the
# nodes labelled pool=general (docs/kubernetes.md#pool-capacity):
#
#   kubectl -n shop label deployment checkout cart regiment.io/domain=payment
#   kubectl -n shop label deployment search recommend regiment.io/domain=catalog
#   kubectl label node <node> pool=general
#
# Use it as the regiment.hcl of an overlay (deploy/overlays/example shows how)
# with a Soldier per domain; discovery needs list and watch of Deployments in
# each discover namespace, and pool capacity list and watch of Nodes and Pods.
cluster "staging" {
  capacity_cores = 2000 # a cap: the pool's nodes say how much there is
}

soldier {
  mode = "shadow" # decide and record, let the baseline act; "active" once the records look right
}

kubernetes {
  namespace          = "shop"
  lease_namespace    = "regiment"
  pool_node_selector = "pool=general"
}

prometheus {
  url = "http://prometheus.monitoring.svc:9090"
}

domain "payment" {
  priority = 0
  floor    = 0.3
  slo {
    latency_p99 = "150ms"
  }
  discover {
    namespaces   = ["shop"]
    selector     = "regiment.io/domain=payment"
    service_time = "25ms" # per app: annotate regiment.io/service-time to differ
    min_replicas = 2
    max_replicas = 50
  }
}

domain "catalog" {
  priority = 1
  slo {
    latency_p99 = "300ms"
  }
  discover {
    namespaces   = ["shop"]
    selector     = "regiment.io/domain=catalog"
    service_time = "40ms"
    max_replicas = 30
  }
}
