package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/regimentd/regiment/domains"
)

// Errors a query returns when it has no usable value; callers branch on them
// to tell "no data" from "Prometheus failed".
var (
	ErrNoData    = errors.New("query returned no series")
	ErrNotFinite = errors.New("query returned NaN or an infinity")
)

// Prometheus reads app metrics from the Prometheus HTTP API (instant queries,
// GET /api/v1/query), with the per-app query templates of the config.
type Prometheus struct {
	base    string
	hc      *http.Client
	timeout time.Duration
	queries [numMetrics]*template.Template
}

// Metric names the four metrics an app has.
type Metric int

const (
	MetricRPS Metric = iota
	MetricP99
	MetricErrorRate
	MetricCPU
	numMetrics
)

func (m Metric) String() string {
	return [...]string{"rps", "p99", "error_rate", "cpu"}[m]
}

// NewPrometheus returns a client for cfg (cfg.URL must be set) using hc
// (nil: a default client).
func NewPrometheus(cfg domains.Prometheus, hc *http.Client) (*Prometheus, error) {
	if cfg.URL == "" {
		return nil, errors.New("kube: prometheus: no url")
	}
	if hc == nil {
		hc = &http.Client{}
	}
	p := &Prometheus{base: strings.TrimSuffix(cfg.URL, "/"), hc: hc, timeout: cfg.Timeout}
	q := cfg.Queries
	for m, text := range [numMetrics]string{q.RPS, q.P99, q.ErrorRate, q.CPU} {
		t, err := template.New(Metric(m).String()).Option("missingkey=error").Parse(text)
		if err != nil {
			return nil, fmt.Errorf("kube: prometheus query %s: %w", Metric(m), err)
		}
		p.queries[m] = t
	}
	return p, nil
}

// queryVars are what a query template sees.
type queryVars struct {
	Namespace string
	Name      string
	Selector  string
	Matchers  string // the selector as PromQL matchers: app="web",tier="api"
}

// Render returns metric m's query for target t.
func (p *Prometheus) Render(m Metric, t *Target) (string, error) {
	var b strings.Builder
	err := p.queries[m].Execute(&b, queryVars{Namespace: t.Namespace, Name: t.Name, Selector: t.Selector, Matchers: matchers(t.Selector)})
	return b.String(), err
}

// matchers turns an equality selector "k=v,k2=v2" into PromQL matchers
// k="v",k2="v2"; label keys with characters PromQL does not allow have them
// replaced by "_" (as Prometheus's Kubernetes relabelling does).
func matchers(sel string) string {
	var parts []string
	for _, term := range strings.Split(sel, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(term), "=")
		v = strings.TrimPrefix(v, "=")
		k = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
				return r
			}
			return '_'
		}, k)
		parts = append(parts, fmt.Sprintf("%s=%q", k, v))
	}
	return strings.Join(parts, ",")
}

// Query runs an instant query at the server's now and returns its single
// value. A vector with no sample is ErrNoData, NaN or an infinity is
// ErrNotFinite (wrapped with the value), and a vector with several samples is
// an error: queries must aggregate to one series.
func (p *Prometheus) Query(ctx context.Context, query string) (float64, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	u := p.base + "/api/v1/query?" + url.Values{"query": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("kube: prometheus: %w", err)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("kube: prometheus query: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return 0, fmt.Errorf("kube: prometheus query: %w", err)
	}
	var r struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("kube: prometheus query: %s: undecodable response: %w", resp.Status, err)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("kube: prometheus query %q: %s: %s", query, r.ErrorType, r.Error)
	}
	var sample [2]any // [unix seconds, "value"]
	switch r.Data.ResultType {
	case "scalar":
		if err := json.Unmarshal(r.Data.Result, &sample); err != nil {
			return 0, fmt.Errorf("kube: prometheus query: scalar: %w", err)
		}
	case "vector":
		var vec []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
			return 0, fmt.Errorf("kube: prometheus query: vector: %w", err)
		}
		switch len(vec) {
		case 0:
			return 0, ErrNoData
		case 1:
			sample = vec[0].Value
		default:
			return 0, fmt.Errorf("kube: prometheus query %q returned %d series; aggregate it to one (sum, max, ...)", query, len(vec))
		}
	default:
		return 0, fmt.Errorf("kube: prometheus query %q: result type %q, want vector or scalar", query, r.Data.ResultType)
	}
	s, _ := sample[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("kube: prometheus query: value %v: %w", sample[1], err)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w (%s)", ErrNotFinite, s)
	}
	return v, nil
}
