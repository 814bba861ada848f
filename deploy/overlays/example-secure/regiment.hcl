# Example cluster config for deploy/overlays/example: two domains whose apps
# run as Deployments with HPAs in namespace "shop".
cluster "shop" {
  capacity_cores = 400
  node_cores     = 16
}

commander {
  tick   = "60s"
  policy = "forecast"
}

soldier {
  tick      = "10s"
  actuation = "hpa-bounds"
  mode      = "active"
}

kubernetes {
  namespace       = "shop"
  lease_namespace = "regiment"
  lease_duration  = "40s"
  hpa_headroom    = 0.5
}

prometheus {
  url     = "http://prometheus.monitoring.svc:9090"
  max_age = "2m"
}

domain "payment" {
  priority = 0
  floor    = 0.3
  slo {
    latency_p99 = "150ms"
  }
  apps "checkout" {
    count           = 2
    cpu_per_replica = 0.5
    min_replicas    = 2
    max_replicas    = 60
    service_time    = "25ms"
    concurrency     = 4
    workload {
      name     = "checkout-{i}"
      selector = "app=checkout-{i}"
    }
  }
}

domain "fraud" {
  priority = 1
  floor    = 0.1
  slo {
    latency_p99 = "80ms"
  }
  apps "scoring" {
    cpu_per_replica = 1
    min_replicas    = 1
    max_replicas    = 40
    service_time    = "10ms"
  }
}

nats {
  url            = "tls://nats.regiment.svc:4222"
  # Each daemon's own seed and the CA, from its Secret regiment-nats-<user>
  # mounted here (deploy/components/nats-secure).
  nkey_seed_file = "/etc/regiment-nats/seed"
  # Signed directives (docs/security.md#signed-directives): the Commander
  # signs with the seed in its Secret regiment-nats-commander (key
  # directive-signing.nk; Soldiers have no such file and read none); the
  # Soldiers take only directives signed by this key. It is an example key:
  # replace it with the public key `regiment nats-config --seeds DIR` prints
  # for DIR/directive-signing.nk, or every directive is refused.
  directive_signing_key_file = "/etc/regiment-nats/directive-signing.nk"
  directive_keys             = ["UC6TNH5FDDUE7X2FGYO6TII7M4VJXGR55JCC6NRCACTPPOZDGKRRZ47E"]
  tls {
    ca_file = "/etc/regiment-nats/ca.crt"
  }
}

store {
  path = "/data/regiment.db"
}
