package domains

import "time"

// Prometheus says where app metrics are read, how to authenticate, and with
// which queries. Files (token, CA, client certificate) are read by the
// Soldier when it starts, not when the config is validated; the token file
// again whenever it changes.
type Prometheus struct {
	// URL is the Prometheus HTTP API base, e.g. http://prometheus:9090
	// (Thanos Query, Mimir's or Cortex's /prometheus prefix, VictoriaMetrics
	// alike). Empty: no metrics; every app's metrics are reported missing.
	URL string
	// MaxAge is how long the last good value of a metric is held, marked
	// stale, when queries fail or return nothing; after it the metric is
	// missing. Default 2m.
	MaxAge time.Duration
	// Timeout bounds one query. Default 5s.
	Timeout time.Duration
	// BearerTokenFile is a file whose content, whitespace trimmed, is sent
	// as "Authorization: Bearer <token>" with every query. It is read again
	// whenever its modification time or size changes, so a rotated projected
	// ServiceAccount token is used from the next query. Empty: none.
	BearerTokenFile string
	// Headers are sent with every query, e.g. X-Scope-OrgID for a Mimir,
	// Cortex or Thanos tenant. Authorization is refused here: use
	// BearerTokenFile.
	Headers map[string]string
	TLS     PrometheusTLS
	Queries PrometheusQueries
}

// PrometheusTLS verifies the Prometheus server (https URLs) and
// authenticates to it.
type PrometheusTLS struct {
	CAFile     string // PEM roots to verify the server with; empty: system roots
	CertFile   string // PEM client certificate (mTLS); with KeyFile
	KeyFile    string // PEM key of CertFile
	ServerName string // name to verify the server certificate against; empty: the URL's host
	// InsecureSkipVerify accepts any server certificate. The Soldier logs a
	// warning at start when it is set. Default false.
	InsecureSkipVerify bool
}

// Signals names the per-app metrics read from Prometheus, in the order of
// PrometheusQueries.List; each is also the query's HCL attribute.
var Signals = [...]string{"rps", "p99", "error_rate", "cpu", "memory", "restarts"}

// PrometheusQueries are the queries of the signals, per app or batched per
// domain (see Query). The defaults, DefaultPrometheusQueries, assume an
// http_requests_total counter with a code label and an
// http_request_duration_seconds histogram carrying the namespace and pod
// labels of the Kubernetes service discovery, cAdvisor, and
// kube-state-metrics.
type PrometheusQueries struct {
	RPS       Query // requests per second
	P99       Query // 99th percentile latency, seconds
	ErrorRate Query // failed share of requests, [0, 1]
	CPU       Query // used share of requested CPU, >= 0 (above 1 when bursting)
	Memory    Query // working set over requested memory, >= 0
	Restarts  Query // container restarts per minute
}

// List returns the six queries in Signals order.
func (q *PrometheusQueries) List() []*Query {
	return []*Query{&q.RPS, &q.P99, &q.ErrorRate, &q.CPU, &q.Memory, &q.Restarts}
}

// Query is one signal's PromQL, a Go text/template.
//
// Per app (BatchBy empty): the template is rendered for each app with
// QueryVars and must return one sample; a domain of n apps costs n queries
// per signal per tick.
//
// Batched (BatchBy set): the template is rendered once for all the apps of
// a domain that share it, with BatchVars, and must return one series per
// app, told apart by the labels in BatchBy: "namespace" holds the app's
// namespace, "workload" its workload name, and any other label the value of
// the selector key of that name (app for app=checkout). An app with no
// series has no data; an app with several is an error.
type Query struct {
	Template string
	BatchBy  []string
}

// QueryVars are what a per-app query template sees.
type QueryVars struct {
	Namespace string
	Name      string // the workload
	Selector  string // as written, app=checkout,tier=web
	Matchers  string // the selector as PromQL matchers: app="checkout",tier="web"
	// Pods is an RE2 regex matching the names of the app's pods (Deployment:
	// name-hash-suffix; StatefulSet: name-ordinal), its one group the
	// workload name; use it with pod=~"{{.Pods}}".
	Pods string
}

// BatchVars are what a batched query template sees: RE2 alternations over
// the apps of one batch, for =~ matchers and label_replace.
type BatchVars struct {
	Namespaces string // ns1|ns2
	Workloads  string // checkout-10|checkout-1|ledger (longest first)
	// Pods matches the pod names of every app of the batch, its one group
	// the workload name: label_replace(v, "workload", "$1", "pod",
	// "{{.Pods}}") labels each pod's series with its app's workload.
	Pods string
	// Labels maps each selector key of the apps (as a PromQL label name) to
	// the alternation of its values: {{.Labels.app}} is checkout|ledger.
	Labels map[string]string
}

// BatchByWorkload is the BatchBy of the default queries.
var BatchByWorkload = []string{"namespace", "workload"}

// byWorkload wraps a PromQL vector expression of pod series so that each
// carries its app's workload label, and sums it per app.
func byWorkload(expr string, extra ...string) string {
	by := "namespace, workload"
	for _, l := range extra {
		by += ", " + l
	}
	return `sum by (` + by + `) (label_replace(` + expr + `, "workload", "$1", "pod", "{{.Pods}}"))`
}

// podsOfBatch selects the series of a batch's pods.
const podsOfBatch = `namespace=~"{{.Namespaces}}",pod=~"{{.Pods}}"`

// DefaultPrometheusQueries are the queries used for those not configured:
// each batched by (namespace, workload), six queries per domain per tick.
// The sizing signals (rps, cpu) are irate over the last two samples: the
// rate of one scrape interval, as fresh as the metrics are and as the
// simulator measures them (a 10 s sample), where a one-minute rate() lags a
// rise by half a minute; the Stabiliser, not the query, smooths them
// (docs/experiments.md, "The Soldiers' rate window"). The 2m range holds two
// samples at any scrape interval up to a minute. The SLO signals (p99, error
// rate) are over a minute, as an SLO is judged.
var DefaultPrometheusQueries = PrometheusQueries{
	RPS: Query{Template: byWorkload(`irate(http_requests_total{` + podsOfBatch + `}[2m])`), BatchBy: BatchByWorkload},
	P99: Query{Template: `histogram_quantile(0.99, ` +
		byWorkload(`rate(http_request_duration_seconds_bucket{`+podsOfBatch+`}[1m])`, "le") + `)`, BatchBy: BatchByWorkload},
	// An app that never failed has no 5xx series: "or 0 x all" makes its
	// error rate 0 rather than no data.
	ErrorRate: Query{Template: `(` + byWorkload(`rate(http_requests_total{`+podsOfBatch+`,code=~"5.."}[1m])`) +
		` or 0 * ` + byWorkload(`rate(http_requests_total{`+podsOfBatch+`}[1m])`) + `) / ` +
		byWorkload(`rate(http_requests_total{`+podsOfBatch+`}[1m])`), BatchBy: BatchByWorkload},
	CPU: Query{Template: byWorkload(`irate(container_cpu_usage_seconds_total{`+podsOfBatch+`,container!=""}[2m])`) +
		` / ` + byWorkload(`kube_pod_container_resource_requests{`+podsOfBatch+`,resource="cpu"}`), BatchBy: BatchByWorkload},
	Memory: Query{Template: byWorkload(`container_memory_working_set_bytes{`+podsOfBatch+`,container!=""}`) +
		` / ` + byWorkload(`kube_pod_container_resource_requests{`+podsOfBatch+`,resource="memory"}`), BatchBy: BatchByWorkload},
	Restarts: Query{Template: byWorkload(`increase(kube_pod_container_status_restarts_total{`+podsOfBatch+`}[5m])`) + ` / 5`,
		BatchBy: BatchByWorkload},
}

// Queries returns app a's queries: its set's (AppSet.Queries) where set,
// else the prometheus block's. c must have Defaults applied.
func (c *Config) Queries(a App) PrometheusQueries {
	out := c.Prometheus.Queries
	own := a.AppSet.Queries
	for i, q := range own.List() {
		if q.Template != "" {
			*out.List()[i] = *q
		}
	}
	return out
}

// PromLabel is the PromQL label name of Kubernetes label key k: characters
// PromQL does not allow are replaced by "_", as Prometheus's Kubernetes
// relabelling does (app.kubernetes.io/name: app_kubernetes_io_name).
func PromLabel(k string) string {
	b := []byte(k)
	for i, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
