# A valid config reading metrics from a Mimir tenant over mTLS, with an
# app set that reads its p99 its own way.
cluster "prod" {
  capacity_cores = 1000
}

prometheus {
  url               = "https://mimir.monitoring:8080/prometheus"
  bearer_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token"
  headers           = { "X-Scope-OrgID" = "payments" }
  tls {
    ca_file     = "ca.crt"
    cert_file   = "client.crt"
    key_file    = "client.key"
    server_name = "mimir"
  }
  queries {
    batch_by = ["namespace", "app"]
    rps      = "sum by (namespace, app) (rate(requests_total{namespace=~\"{{.Namespaces}}\",app=~\"{{.Labels.app}}\"}[1m]))"
  }
}

domain "payment" {
  slo {
    latency_p99 = "150ms"
  }
  apps "checkout" {
    cpu_per_replica = 0.5
    service_time    = "25ms"
    queries {
      p99 = "max(edge_p99_seconds{service=\"{{.Name}}\"})"
    }
  }
  apps "ledger" {
    cpu_per_replica = 1
    service_time    = "5ms"
  }
}
