package bus

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate, PEM
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, file: filepath.Join(dir, name+".crt")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue writes a certificate for cn signed by ca, valid for the loopback IP
// as a server and as a client, and its key; it returns both paths.
func (ca *testCA) issue(t *testing.T, dir, cn string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, cn+".crt"), filepath.Join(dir, cn+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// refusedByServer is how a client learns that the server refused its
// certificate: under TLS 1.3 the server decides after the client's handshake
// is done, so the client sees the alert or, if it wrote first, a closed
// connection.
const refusedByServer = `remote error: tls: (certificate required|unknown certificate authority|bad certificate)|closed by remote after TLS handshake`

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "regiment-ca")
	serverCert, serverKey := ca.issue(t, dir, "nats")
	clientCert, clientKey := ca.issue(t, dir, "commander")
	rogue := newTestCA(t, dir, "rogue-ca")
	rogueCert, rogueKey := rogue.issue(t, dir, "rogue")
	s := startSecured(t, ServerTLS{CertFile: serverCert, KeyFile: serverKey, CAFile: ca.file, Verify: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seed := s.seeds[CommanderUser]
	tests := []struct {
		rule    string
		tls     TLS
		wantErr string // a regexp the error must match; empty: connects
	}{
		{"tls with the CA and a client certificate connects", TLS{CAFile: ca.file, CertFile: clientCert, KeyFile: clientKey}, ""},
		{"without the CA the server is not trusted", TLS{}, "unknown authority"},
		{"tls without a client certificate is refused", TLS{CAFile: ca.file}, refusedByServer},
		{"a client certificate of another CA is refused", TLS{CAFile: ca.file, CertFile: rogueCert, KeyFile: rogueKey}, refusedByServer},
		{"a server not signed by the CA is refused", TLS{CAFile: rogue.file, CertFile: clientCert, KeyFile: clientKey}, "unknown authority"},
		{"a server name the certificate lacks is refused", TLS{CAFile: ca.file, CertFile: clientCert, KeyFile: clientKey, ServerName: "nats.example"}, "not valid for any names"},
		{"a missing CA file is named", TLS{CAFile: filepath.Join(dir, "none.crt")}, "ca_file"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			c, err := Connect(ctx, ConnectOptions{URL: s.url, Cluster: testCluster, NkeySeedFile: seed, TLS: tt.tls,
				InboxPrefix: InboxPrefix(testCluster, CommanderUser)})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				// A directive goes through, bucket and all.
				if err := c.PublishDirective(ctx, directive("payment", 1, 1)); err != nil {
					t.Fatal(err)
				}
				if d, ok, err := c.LastDirective(ctx, "payment"); err != nil || !ok || d.Seq != 1 {
					t.Fatalf("LastDirective over tls: %+v, %v, %v", d, ok, err)
				}
				return
			}
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if !regexp.MustCompile(tt.wantErr).MatchString(err.Error()) {
				t.Fatalf("error %q does not match %q", err, tt.wantErr)
			}
		})
	}

	t.Run("a plain connection is refused", func(t *testing.T) {
		// Raw protocol: a client that speaks no TLS sends CONNECT and PING in
		// clear and must not get a PONG.
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "tls://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		r := bufio.NewReader(conn)
		info, err := r.ReadString('\n')
		if err != nil || !strings.Contains(info, `"tls_required":true`) {
			t.Fatalf("INFO %q, %v; want tls_required", info, err)
		}
		if _, err := io.WriteString(conn, "CONNECT {\"verbose\":false}\r\nPING\r\n"); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(r) // until the server closes the connection
		if strings.Contains(string(rest), "PONG") {
			t.Fatalf("a plain client got %q", rest)
		}
	})
}
