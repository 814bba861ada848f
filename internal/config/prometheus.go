package config

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"github.com/hashicorp/hcl/v2"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/regimentd/regiment/internal/core/domains"
)

// prometheusHCL is the prometheus block:
//
//	prometheus {
//	  url               = "https://prometheus.monitoring:9090"
//	  max_age           = "2m"
//	  timeout           = "5s"
//	  bearer_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token"
//	  headers           = { "X-Scope-OrgID" = "payments" }
//	  tls {
//	    ca_file              = "/etc/regiment/prometheus/ca.crt"
//	    cert_file            = "..."   # with key_file: mTLS
//	    key_file             = "..."
//	    server_name          = "prometheus.monitoring.svc"
//	    insecure_skip_verify = false
//	  }
//	  queries {
//	    batch_by = ["namespace", "app"]   # these queries are batched, one series per app
//	    rps      = "sum by (namespace, app) (irate(http_requests_total{namespace=~\"{{.Namespaces}}\",app=~\"{{.Labels.app}}\"}[2m]))"
//	  }
//	}
//
// An apps block may hold a queries block too; its queries replace the
// prometheus block's for the set's apps. Files are named, never read here:
// the Soldier reads them when it starts, so the same config validates on
// machines that do not hold the secrets.
type prometheusHCL struct {
	Def             hcl.Range
	URL             stringAttr   `hcl:"url"`
	MaxAge          durationAttr `hcl:"max_age"`
	Timeout         durationAttr `hcl:"timeout"`
	BearerToken     stringAttr   `hcl:"bearer_token"` // refused: secrets do not belong in the config
	BearerTokenFile stringAttr   `hcl:"bearer_token_file"`
	Headers         mapAttr      `hcl:"headers"`
	TLS             promTLSHCL
	Queries         queriesHCL
}

func (p *prometheusHCL) children() []child {
	return []child{
		{typ: "tls", once: true, example: `tls { ca_file = "ca.crt" }`,
			open: func(def hcl.Range, _ label) node { p.TLS.Def = def; return &p.TLS }},
		{typ: "queries", once: true, example: `queries { rps = "sum(rate(...))" }`,
			open: func(def hcl.Range, _ label) node { p.Queries.Def = def; return &p.Queries }},
	}
}

type promTLSHCL struct {
	Def                hcl.Range
	CAFile             stringAttr `hcl:"ca_file"`
	CertFile           stringAttr `hcl:"cert_file"`
	KeyFile            stringAttr `hcl:"key_file"`
	ServerName         stringAttr `hcl:"server_name"`
	InsecureSkipVerify boolAttr   `hcl:"insecure_skip_verify"`
}

func (t *promTLSHCL) children() []child { return nil }

// translate builds the plain prometheus config. Relative paths resolve
// against the directory of the file the block is in.
func (p *prometheusHCL) translate() domains.Prometheus {
	dir := ""
	if p.Def != (hcl.Range{}) {
		dir = filepath.Dir(p.Def.Filename)
	}
	path := func(a stringAttr) string {
		if a.V == "" || filepath.IsAbs(a.V) || dir == "" {
			return a.V
		}
		return filepath.Join(dir, a.V)
	}
	t := &p.TLS
	return domains.Prometheus{
		URL: p.URL.V, MaxAge: p.MaxAge.V, Timeout: p.Timeout.V,
		BearerTokenFile: path(p.BearerTokenFile), Headers: p.Headers.V,
		TLS: domains.PrometheusTLS{CAFile: path(t.CAFile), CertFile: path(t.CertFile), KeyFile: path(t.KeyFile),
			ServerName: t.ServerName.V, InsecureSkipVerify: t.InsecureSkipVerify.V},
		Queries: p.Queries.translate(),
	}
}

// queriesHCL is a queries block, in prometheus or in an apps block.
type queriesHCL struct {
	Def       hcl.Range
	RPS       stringAttr `hcl:"rps"`
	P99       stringAttr `hcl:"p99"`
	ErrorRate stringAttr `hcl:"error_rate"`
	CPU       stringAttr `hcl:"cpu"`
	Memory    stringAttr `hcl:"memory"`
	Restarts  stringAttr `hcl:"restarts"`
	BatchBy   listAttr   `hcl:"batch_by"`
}

func (q *queriesHCL) children() []child { return nil }

// list returns the query attributes in domains.Signals order.
func (q *queriesHCL) list() []*stringAttr {
	return []*stringAttr{&q.RPS, &q.P99, &q.ErrorRate, &q.CPU, &q.Memory, &q.Restarts}
}

// translate returns the queries written in the block, each batched by the
// block's batch_by (per app without it); the others are left empty.
func (q *queriesHCL) translate() domains.PrometheusQueries {
	var out domains.PrometheusQueries
	for i, a := range q.list() {
		if a.V != "" {
			*out.List()[i] = domains.Query{Template: a.V, BatchBy: q.BatchBy.V}
		}
	}
	return out
}

// validatePrometheus checks the prometheus block and every apps block's
// queries.
func validatePrometheus(cfg *domains.Config, h *configHCL, c checker) {
	p, hp := &cfg.Prometheus, &h.Prometheus
	if hp.Def != (hcl.Range{}) {
		c.required(&hp.URL.attr, `url = "http://prometheus:9090"`)
	}
	if u := &hp.URL; u.ok() {
		if pu, err := url.Parse(u.V); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			c.ds.add(u.Range, "Invalid url", "%s is not an http(s) URL (example: \"http://prometheus.monitoring:9090\")", clip(u.V))
		}
	}
	c.duration(&hp.MaxAge, p.MaxAge, positive)
	c.duration(&hp.Timeout, p.Timeout, positive)
	if hp.BearerToken.Set {
		c.ds.add(hp.BearerToken.Range, "Inline token not allowed", `secrets do not belong in the config; write the token to a file and set bearer_token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token"`)
	}
	validateHeaders(&hp.Headers, c)
	t := &hp.TLS
	hasCert, hasKey := t.CertFile.ok() && t.CertFile.V != "", t.KeyFile.ok() && t.KeyFile.V != ""
	if hasCert != hasKey {
		set, missing := &t.CertFile, "key_file"
		if hasKey {
			set, missing = &t.KeyFile, "cert_file"
		}
		c.ds.add(set.Range, "Missing "+missing, "a client certificate needs both cert_file and key_file")
	}

	labels := selectorLabels(cfg)
	validateQueries(&hp.Queries, labels, c)
	for i := range cfg.Domains {
		for j := range cfg.Domains[i].AppSets {
			a, ha := &cfg.Domains[i].AppSets[j], h.Domains[i].AppSets[j]
			validateQueries(&ha.Queries, labels, c)
			validateBatchKeys(cfg, a, &hp.Queries, &ha.Queries, c)
		}
	}
}

// validateHeaders checks header names (HTTP tokens, not Authorization) and
// values (no line breaks).
func validateHeaders(hs *mapAttr, c checker) {
	if !hs.ok() {
		return
	}
	keys := make([]string, 0, len(hs.V))
	for k := range hs.V {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch {
		case k == "" || strings.IndexFunc(k, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) }) >= 0:
			c.ds.add(hs.Range, "Invalid headers", "%s is not an HTTP header name (example: \"X-Scope-OrgID\")", clip(k))
		case strings.EqualFold(k, "Authorization"):
			c.ds.add(hs.Range, "Invalid headers", "Authorization is not set inline: secrets do not belong in the config; set bearer_token_file")
		case strings.ContainsAny(hs.V[k], "\r\n\x00"):
			c.ds.add(hs.Range, "Invalid headers", "the value of %s has a line break", k)
		}
	}
}

// selectorLabels are the PromQL label names of every app's selector keys.
func selectorLabels(cfg *domains.Config) map[string]string {
	out := map[string]string{"app": "web"}
	for i := range cfg.Domains {
		for j := range cfg.Domains[i].AppSets {
			for _, k := range selectorKeys(&cfg.Domains[i].AppSets[j]) {
				out[domains.PromLabel(k)] = "web"
			}
		}
	}
	return out
}

// selectorKeys are the label keys of set a's selector (default app=<name>).
func selectorKeys(a *domains.AppSet) []string {
	sel := "app=" + a.Name
	if a.Workload.Selector != "" {
		sel = a.Workload.Selector
	}
	var out []string
	for _, term := range strings.Split(sel, ",") {
		k, _, _ := strings.Cut(strings.TrimSpace(term), "=")
		out = append(out, k)
	}
	return out
}

// validateQueries checks that each query of q parses and runs on sample
// values of its form, and that batch_by names labels.
func validateQueries(q *queriesHCL, labels map[string]string, c checker) {
	batched := q.BatchBy.ok() && len(q.BatchBy.V) > 0
	if q.BatchBy.ok() {
		for i, l := range q.BatchBy.V {
			if l == "" || domains.PromLabel(l) != l || l[0] >= '0' && l[0] <= '9' {
				c.ds.add(q.BatchBy.Ranges[i], "Invalid batch_by", "%s is not a PromQL label name (example: \"namespace\")", clip(l))
			}
		}
	}
	for _, a := range q.list() {
		c.query(a, batched, labels)
	}
}

// query checks that a query template parses and runs on sample values.
func (c checker) query(a *stringAttr, batched bool, labels map[string]string) {
	if !a.ok() {
		return
	}
	var rendered strings.Builder
	t, err := template.New(a.Name).Option("missingkey=error").Parse(a.V)
	if err == nil {
		var vars any = domains.QueryVars{Namespace: "ns", Name: "web", Selector: "app=web", Matchers: `app="web"`, Pods: "(web)-.+"}
		if batched {
			vars = domains.BatchVars{Namespaces: "ns", Workloads: "web", Pods: "(web)-.+", Labels: labels}
		}
		err = t.Execute(&rendered, vars)
	}
	if err != nil {
		use := "{{.Namespace}}, {{.Name}}, {{.Selector}}, {{.Matchers}} or {{.Pods}} (a per-app query)"
		if batched {
			use = "{{.Namespaces}}, {{.Workloads}}, {{.Pods}} or {{.Labels.<selector key>}} (a query batched by batch_by)"
		}
		c.ds.add(a.Range, "Invalid "+a.Name, "not a query template: %v; use %s", trimTemplateError(err), use)
		return
	}
	if msg := promqlError(rendered.String()); msg != "" {
		c.ds.add(a.Range, "Invalid "+a.Name, "not PromQL: %s", msg)
	}
}

// promqlError is what Prometheus's parser says of query (a template
// rendered on sample values), with the parser's line:col in the query and
// the text there; "" if it parses.
func promqlError(query string) string {
	_, err := parser.NewParser(parser.Options{}).ParseExpr(query)
	if err == nil {
		return ""
	}
	var errs parser.ParseErrors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return err.Error()
	}
	e := errs[0]
	pos := e.PositionRange.StartPosInput(query, 0)
	near := ""
	if start := int(e.PositionRange.Start); start >= 0 && start <= len(query) {
		near = query[start:]
		if len(near) > 30 {
			near = near[:30] + "..."
		}
		near = fmt.Sprintf(" (at %q)", near)
		if near == ` (at "")` {
			near = " (at its end)"
		}
	}
	return fmt.Sprintf("%v at %s of the query as run%s", e.Err, pos, near)
}

// validateBatchKeys checks that every batched query of set a's apps can tell
// them apart: each label of its batch_by is namespace, workload, or a key
// of the set's selector.
func validateBatchKeys(cfg *domains.Config, a *domains.AppSet, global, own *queriesHCL, c checker) {
	keys := map[string]bool{"namespace": true, "workload": true}
	for _, k := range selectorKeys(a) {
		keys[domains.PromLabel(k)] = true
	}
	qs := cfg.Queries(domains.App{AppSet: a})
	for i, q := range qs.List() {
		for _, l := range q.BatchBy {
			if keys[l] {
				continue
			}
			where := &global.BatchBy
			if own.list()[i].ok() {
				where = &own.BatchBy
			}
			c.ds.add(where.Range, "Invalid batch_by", "apps %q: %s batches by %q, which is not namespace, workload or a key of the set's selector; add it to the selector or batch by labels the apps have", a.Name, domains.Signals[i], l)
			return
		}
	}
}

func trimTemplateError(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "template: ") {
		return s[i+2:]
	}
	return s
}
