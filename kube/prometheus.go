package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/infile"
)

// Errors a query returns when it has no usable value; callers branch on them
// to tell "no data" from "Prometheus failed".
var (
	ErrNoData    = errors.New("query returned no series")
	ErrNotFinite = errors.New("query returned NaN or an infinity")
)

// Prometheus is a client of the Prometheus HTTP API (instant queries,
// /api/v1/query): TLS from the config's tls block, a bearer token re-read
// from its file when the file changes, and extra headers on every request.
// It is safe for concurrent use.
type Prometheus struct {
	base    string
	hc      *http.Client
	timeout time.Duration
	headers http.Header
	token   *tokenFile // nil: no Authorization header
}

// Metric names the signals an app has, in domains.Signals order.
type Metric int

const (
	MetricRPS Metric = iota
	MetricP99
	MetricErrorRate
	MetricCPU
	MetricMemory
	MetricRestarts
	numMetrics
)

func (m Metric) String() string { return domains.Signals[m] }

// sizing reports whether the Soldier sizes apps from m: a missing sizing
// metric blinds the app; memory and restarts only inform the Commander.
func (m Metric) sizing() bool { return m <= MetricCPU }

// NewPrometheus returns a client for cfg (cfg.URL must be set). It reads the
// CA bundle, the client certificate and key, and the bearer token file now,
// so that a missing or unreadable file is an error at start.
func NewPrometheus(cfg domains.Prometheus) (*Prometheus, error) {
	if cfg.URL == "" {
		return nil, errors.New("kube: prometheus: no url")
	}
	tc, err := tlsConfig(cfg.TLS)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	p := &Prometheus{base: strings.TrimSuffix(cfg.URL, "/"), hc: &http.Client{Transport: tr}, timeout: cfg.Timeout,
		headers: http.Header{}}
	for k, v := range cfg.Headers {
		p.headers.Set(k, v)
	}
	if cfg.BearerTokenFile != "" {
		p.token = &tokenFile{path: cfg.BearerTokenFile}
		if _, err := p.token.get(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// maxCAFile is the largest CA bundle or bearer token file read, in bytes:
// a system bundle of every public root is about 220 KB.
const maxCAFile = 4 << 20

// tlsConfig builds the client TLS config of t, reading its files.
func tlsConfig(t domains.PrometheusTLS) (*tls.Config, error) {
	tc := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pem, err := infile.ReadFile(t.CAFile, maxCAFile)
		if err != nil {
			return nil, fmt.Errorf("kube: prometheus tls ca_file: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kube: prometheus tls ca_file %s: no PEM certificate in it", t.CAFile)
		}
	}
	if t.CertFile != "" || t.KeyFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("kube: prometheus tls cert_file and key_file: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// tokenFile is a bearer token kept in a file that may be replaced (a
// projected ServiceAccount token is rotated by the kubelet): it is read
// again whenever the file's modification time or size changes.
type tokenFile struct {
	path    string
	mu      sync.Mutex
	modTime time.Time
	size    int64
	token   string
}

// get returns the token, reading the file if it changed since the last read.
func (f *tokenFile) get() (string, error) {
	st, err := os.Stat(f.path)
	if err != nil {
		return "", fmt.Errorf("kube: prometheus bearer_token_file: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.token != "" && st.ModTime().Equal(f.modTime) && st.Size() == f.size {
		return f.token, nil
	}
	b, err := infile.ReadFile(f.path, maxCAFile)
	if err != nil {
		return "", fmt.Errorf("kube: prometheus bearer_token_file: %w", err)
	}
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return "", fmt.Errorf("kube: prometheus bearer_token_file %s is empty", f.path)
	}
	f.token, f.modTime, f.size = tok, st.ModTime(), st.Size()
	return tok, nil
}

// Series is one series of an instant vector: its labels and value (NaN and
// infinities as Prometheus returned them).
type Series struct {
	Labels map[string]string
	Value  float64
}

// Query runs an instant query at the server's now and returns its single
// value. A vector with no sample is ErrNoData, NaN or an infinity is
// ErrNotFinite (wrapped with the value), and a vector with several samples is
// an error: queries must aggregate to one series.
func (p *Prometheus) Query(ctx context.Context, query string) (float64, error) {
	vec, err := p.QueryVector(ctx, query)
	if err != nil {
		return 0, err
	}
	switch len(vec) {
	case 0:
		return 0, ErrNoData
	case 1:
		return finite(vec[0].Value)
	default:
		return 0, fmt.Errorf("kube: prometheus query %q returned %d series; aggregate it to one (sum, max, ...)", query, len(vec))
	}
}

// finite returns v, or ErrNotFinite for NaN and infinities.
func finite(v float64) (float64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w (%g)", ErrNotFinite, v)
	}
	return v, nil
}

// QueryVector runs an instant query and returns every series of its result;
// a scalar result is one series without labels.
func (p *Prometheus) QueryVector(ctx context.Context, query string) ([]Series, error) {
	body, status, err := p.get(ctx, query)
	if err != nil {
		return nil, err
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
		return nil, fmt.Errorf("kube: prometheus query: %s: undecodable response: %w", status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("kube: prometheus query %q: %s: %s", query, r.ErrorType, r.Error)
	}
	switch r.Data.ResultType {
	case "scalar":
		var sample [2]any // [unix seconds, "value"]
		if err := json.Unmarshal(r.Data.Result, &sample); err != nil {
			return nil, fmt.Errorf("kube: prometheus query: scalar: %w", err)
		}
		v, err := parseValue(sample[1])
		return []Series{{Value: v}}, err
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
			return nil, fmt.Errorf("kube: prometheus query: vector: %w", err)
		}
		out := make([]Series, len(vec))
		for i, s := range vec {
			v, err := parseValue(s.Value[1])
			if err != nil {
				return nil, err
			}
			out[i] = Series{Labels: s.Metric, Value: v}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("kube: prometheus query %q: result type %q, want vector or scalar", query, r.Data.ResultType)
	}
}

func parseValue(raw any) (float64, error) {
	s, _ := raw.(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("kube: prometheus query: value %v: %w", raw, err)
	}
	return v, nil
}

// get sends one instant query with the configured headers and token and
// returns the response body (at most 16 MiB) and status.
func (p *Prometheus) get(ctx context.Context, query string) ([]byte, string, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	req, err := p.request(ctx, query)
	if err != nil {
		return nil, "", fmt.Errorf("kube: prometheus: %w", err)
	}
	for k, v := range p.headers {
		req.Header[k] = v
	}
	if p.token != nil {
		tok, err := p.token.get()
		if err != nil {
			return nil, "", err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("kube: prometheus query: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, "", fmt.Errorf("kube: prometheus query: %w", err)
	}
	return body, resp.Status, nil
}

// maxGetURL is the longest query URL sent with GET, in bytes; longer ones
// are POSTed, form-encoded. A batched query names every app of the domain
// (23 KB for 500 apps), more than proxies in front of Thanos or Mimir accept
// in a URL (nginx: 8 KiB); short ones stay GETs, which read-only proxies
// (kube-rbac-proxy: verb get) allow.
const maxGetURL = 4096

func (p *Prometheus) request(ctx context.Context, query string) (*http.Request, error) {
	form := url.Values{"query": {query}}.Encode()
	u := p.base + "/api/v1/query"
	if len(u)+1+len(form) <= maxGetURL {
		return http.NewRequestWithContext(ctx, http.MethodGet, u+"?"+form, nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form))
	if err == nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return req, err
}
