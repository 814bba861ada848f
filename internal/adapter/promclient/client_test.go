package promclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/core/domains"
)

func TestPrometheusQuery(t *testing.T) {
	s := promtest.New(t, promtest.Script(promtest.Series(`up_value 42.5+0x40`), promtest.Series(`two{a="1"} 1+0x40`), promtest.Series(`two{a="2"} 2+0x40`)))
	p, err := New(domains.Prometheus{URL: s.URL, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v, err := p.Query(ctx, "up_value"); err != nil || v != 42.5 {
		t.Errorf("one sample: %v, %v", v, err)
	}
	if _, methods := s.LongestQuery(); methods[http.MethodGet] != 1 {
		t.Errorf("requests per method %v, want a short query sent with GET", methods)
	}
	if v, err := p.Query(ctx, "scalar(up_value)"); err != nil || v != 42.5 {
		t.Errorf("scalar: %v, %v", v, err)
	}
	if _, err := p.Query(ctx, "absent_metric"); !errors.Is(err, ErrNoData) {
		t.Errorf("no series: %v, want ErrNoData", err)
	}
	if _, err := p.Query(ctx, "vector(0) / 0"); !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN: %v, want ErrNotFinite", err)
	}
	if _, err := p.Query(ctx, "two"); err == nil || !strings.Contains(err.Error(), "aggregate") {
		t.Errorf("two series: %v, want an error asking to aggregate", err)
	}
	if vec, err := p.QueryVector(ctx, "two"); err != nil || len(vec) != 2 || vec[0].Labels["a"] == vec[1].Labels["a"] {
		t.Errorf("vector: %+v, %v", vec, err)
	}
	if _, err := p.Query(ctx, "sum(("); err == nil || !strings.Contains(err.Error(), "bad_data") {
		t.Errorf("bad query: %v, want Prometheus's bad_data", err)
	}
	s.Fail(true)
	if _, err := p.Query(ctx, "up_value"); err == nil || errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "test outage") {
		t.Errorf("outage: %v, want Prometheus's error", err)
	}
}

func TestPrometheusSendsHeadersAndRereadsRotatedToken(t *testing.T) {
	s := promtest.New(t, promtest.Script(promtest.Series(`up_value 1+0x40`)))
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("first-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := New(domains.Prometheus{URL: s.URL, BearerTokenFile: tokenFile,
		Headers: map[string]string{"X-Scope-OrgID": "payments"}})
	if err != nil {
		t.Fatal(err)
	}
	query := func() http.Header {
		t.Helper()
		if _, err := p.Query(context.Background(), "up_value"); err != nil {
			t.Fatal(err)
		}
		_, h := s.Stats()
		return h
	}
	h := query()
	if h.Get("Authorization") != "Bearer first-token" || h.Get("X-Scope-OrgID") != "payments" {
		t.Errorf("headers %v, want the token and the tenant", h)
	}
	// The kubelet rotates a projected token by replacing the file.
	if err := os.WriteFile(tokenFile, []byte("rotated"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(tokenFile, later, later); err != nil {
		t.Fatal(err)
	}
	if h := query(); h.Get("Authorization") != "Bearer rotated" {
		t.Errorf("after rotation: Authorization %q, want the new token", h.Get("Authorization"))
	}
}

func TestNewRefusesUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	empty, garbage := filepath.Join(dir, "empty"), filepath.Join(dir, "garbage")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	os.WriteFile(garbage, []byte("not a certificate"), 0o600)
	missing := filepath.Join(dir, "missing")
	cases := []struct {
		name string
		cfg  domains.Prometheus
		want string
	}{
		{"a missing token file", domains.Prometheus{BearerTokenFile: missing}, "bearer_token_file"},
		{"an empty token file", domains.Prometheus{BearerTokenFile: empty}, "is empty"},
		{"a missing CA bundle", domains.Prometheus{TLS: domains.PrometheusTLS{CAFile: missing}}, "ca_file"},
		{"a CA bundle without a certificate", domains.Prometheus{TLS: domains.PrometheusTLS{CAFile: garbage}}, "no PEM certificate"},
		{"a client certificate that does not load", domains.Prometheus{TLS: domains.PrometheusTLS{CertFile: garbage, KeyFile: garbage}}, "cert_file and key_file"},
	}
	for _, c := range cases {
		c.cfg.URL = "https://prometheus.invalid"
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestPrometheusTLS(t *testing.T) {
	clientCA, clientCert, clientKey := clientCertificate(t)
	s := promtest.NewUnstarted(t, promtest.Script(promtest.Series(`up_value 3+0x40`)))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	s.TLS = &tls.Config{ClientCAs: clientCA, ClientAuth: tls.VerifyClientCertIfGiven}
	s.StartTLS()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600)

	query := func(tc domains.PrometheusTLS) error {
		p, err := New(domains.Prometheus{URL: s.URL, TLS: tc})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Query(context.Background(), "up_value")
		return err
	}
	if err := query(domains.PrometheusTLS{}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("system roots: %v, want an unknown authority", err)
	}
	if err := query(domains.PrometheusTLS{CAFile: caFile}); err != nil {
		t.Errorf("with the CA bundle: %v", err)
	}
	if err := query(domains.PrometheusTLS{InsecureSkipVerify: true}); err != nil {
		t.Errorf("insecure_skip_verify: %v", err)
	}
	if err := query(domains.PrometheusTLS{CAFile: caFile, CertFile: clientCert, KeyFile: clientKey}); err != nil {
		t.Errorf("mTLS: %v", err)
	}
	if _, h := s.Stats(); h == nil {
		t.Fatal("no request reached the server")
	}
	// A server that requires a client certificate refuses a client without one.
	s.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	s.CloseClientConnections()
	if err := query(domains.PrometheusTLS{CAFile: caFile}); err == nil {
		t.Error("no client certificate: the server accepted the query")
	}
	if err := query(domains.PrometheusTLS{CAFile: caFile, CertFile: clientCert, KeyFile: clientKey}); err != nil {
		t.Errorf("mTLS required: %v", err)
	}
}

// clientCertificate makes a CA and a client certificate it signed, and
// writes the certificate and key as PEM files.
func clientCertificate(t *testing.T) (*x509.CertPool, string, string) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test client CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "regiment-soldier"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, certFile, keyFile
}
