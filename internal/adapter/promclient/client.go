package promclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/infile"
)

// Errors a query returns when it has no usable value; callers branch on them
// to tell "no data" from "Prometheus failed".
var (
	ErrNoData    = errors.New("query returned no series")
	ErrNotFinite = errors.New("query returned NaN or an infinity")
)

// Client is a client of the Prometheus HTTP API's instant queries
// (client_golang's api/prometheus/v1 over an http.Client that
// prometheus/common/config builds: TLS from the config's tls block, the bearer
// token re-read from its file on every request, so a rotated token is used
// at once, and extra headers). It is safe for concurrent use.
type Client struct {
	api     promv1.API
	timeout time.Duration
}

// New returns a client for cfg (cfg.URL must be set). It reads the
// CA bundle, the client certificate and key, and the bearer token file now,
// so that a missing or unreadable file is an error at start.
func New(cfg domains.Prometheus) (*Client, error) {
	if cfg.URL == "" {
		return nil, errors.New("prometheus: no url")
	}
	if err := checkFiles(cfg); err != nil {
		return nil, err
	}
	hc := promconfig.HTTPClientConfig{
		TLSConfig: promconfig.TLSConfig{
			CAFile: cfg.TLS.CAFile, CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile,
			ServerName: cfg.TLS.ServerName, InsecureSkipVerify: cfg.TLS.InsecureSkipVerify,
			MinVersion: promconfig.TLSVersion(tls.VersionTLS12),
		},
		FollowRedirects: true,
		EnableHTTP2:     true,
	}
	if cfg.BearerTokenFile != "" {
		hc.Authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: cfg.BearerTokenFile}
	}
	if len(cfg.Headers) > 0 {
		hc.HTTPHeaders = &promconfig.Headers{Headers: map[string]promconfig.Header{}}
		for k, v := range cfg.Headers {
			hc.HTTPHeaders.Headers[k] = promconfig.Header{Values: []string{v}}
		}
	}
	if err := hc.Validate(); err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	client, err := promconfig.NewClientFromConfig(hc, "regiment")
	if err != nil {
		return nil, fmt.Errorf("prometheus tls: %w", err)
	}
	ac, err := promapi.NewClient(promapi.Config{Address: cfg.URL, Client: client})
	if err != nil {
		return nil, fmt.Errorf("prometheus url: %w", err)
	}
	return &Client{api: promv1.NewAPI(shortGets{ac}), timeout: cfg.Timeout}, nil
}

// maxCAFile is the largest CA bundle or bearer token file read, in bytes:
// a system bundle of every public root is about 220 KB.
const maxCAFile = 4 << 20

// checkFiles reads the CA bundle, the client key pair and the bearer token
// of cfg once, through infile (regular files only, bounded), so that a
// missing, empty or malformed file is an error naming it at start rather
// than a failed query later.
func checkFiles(cfg domains.Prometheus) error {
	t := cfg.TLS
	if t.CAFile != "" {
		pem, err := infile.ReadFile(t.CAFile, maxCAFile)
		if err != nil {
			return fmt.Errorf("prometheus tls ca_file: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return fmt.Errorf("prometheus tls ca_file %s: no PEM certificate in it", t.CAFile)
		}
	}
	if t.CertFile != "" || t.KeyFile != "" {
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			return fmt.Errorf("prometheus tls cert_file and key_file: %w", err)
		}
	}
	if cfg.BearerTokenFile != "" {
		b, err := infile.ReadFile(cfg.BearerTokenFile, maxCAFile)
		if err != nil {
			return fmt.Errorf("prometheus bearer_token_file: %w", err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return fmt.Errorf("prometheus bearer_token_file %s is empty", cfg.BearerTokenFile)
		}
	}
	return nil
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
func (p *Client) Query(ctx context.Context, query string) (float64, error) {
	vec, err := p.QueryVector(ctx, query)
	if err != nil {
		return 0, err
	}
	switch len(vec) {
	case 0:
		return 0, ErrNoData
	case 1:
		return Finite(vec[0].Value)
	default:
		return 0, fmt.Errorf("prometheus query %q returned %d series; aggregate it to one (sum, max, ...)", query, len(vec))
	}
}

// Finite returns v, or ErrNotFinite (wrapped with v) for NaN and
// infinities.
func Finite(v float64) (float64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w (%g)", ErrNotFinite, v)
	}
	return v, nil
}

// QueryVector runs an instant query and returns every series of its result;
// a scalar result is one series without labels.
func (p *Client) QueryVector(ctx context.Context, query string) ([]Series, error) {
	if p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	val, _, _, err := p.api.Query(ctx, query, time.Time{})
	if err != nil {
		var perr *promv1.Error
		if !errors.As(err, &perr) {
			return nil, fmt.Errorf("prometheus query: %w", err)
		}
		msg := perr.Msg
		if (perr.Type == promv1.ErrServer || perr.Type == promv1.ErrClient) && perr.Detail != "" {
			// Only the status code is in Msg: the body says what failed
			// (Prometheus's error, or a proxy's refusal).
			msg += ": " + strings.TrimSpace(perr.Detail[:min(len(perr.Detail), maxErrorBody)])
		}
		return nil, fmt.Errorf("prometheus query %q: %s: %s", query, perr.Type, msg)
	}
	switch v := val.(type) {
	case *model.Scalar:
		return []Series{{Value: float64(v.Value)}}, nil
	case model.Vector:
		out := make([]Series, len(v))
		for i, s := range v {
			labels := make(map[string]string, len(s.Metric))
			for k, l := range s.Metric {
				labels[string(k)] = string(l)
			}
			out[i] = Series{Labels: labels, Value: float64(s.Value)}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("prometheus query %q: result type %q, want vector or scalar", query, val.Type())
	}
}

// maxGetURL is the longest query URL sent with GET, in bytes; longer ones
// are POSTed, form-encoded. A batched query names every app of the domain
// (23 KB for 500 apps), more than proxies in front of Thanos or Mimir accept
// in a URL (nginx: 8 KiB); short ones stay GETs, which read-only proxies
// (kube-rbac-proxy: verb get) allow without a refused POST first.
const maxGetURL = 4096

// maxErrorBody is how much of a failed response's body an error quotes, in bytes.
const maxErrorBody = 512

// shortGets sends the form-encoded POSTs of client_golang's API as GETs when
// the URL stays within maxGetURL.
type shortGets struct{ promapi.Client }

func (c shortGets) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	if req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			form, err := io.ReadAll(io.LimitReader(body, maxGetURL+1))
			body.Close()
			if err == nil && len(req.URL.String())+1+len(form) <= maxGetURL {
				u := *req.URL
				u.RawQuery = string(form)
				get, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
				if err == nil {
					return c.Client.Do(ctx, get)
				}
			}
		}
	}
	return c.Client.Do(ctx, req)
}
