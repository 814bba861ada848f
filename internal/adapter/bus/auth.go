package bus

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/infile"
)

// TLS secures a connection. The zero value is off (unless the URL says
// tls://, which uses the system roots).
type TLS struct {
	// Enabled turns TLS on. Setting any file below turns it on too.
	Enabled bool
	// CAFile is a PEM file of the roots to verify the server with. Empty:
	// the system roots.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key, for a
	// server that verifies clients. Both or neither.
	CertFile, KeyFile string
	// ServerName is the name the server certificate must hold. Empty: the
	// host of the URL.
	ServerName string
}

func (t TLS) on() bool { return t.Enabled || t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

// SetAuth fills the authentication and TLS fields of o (TokenFile,
// NkeySeedFile, Credentials, TLS) from the config's nats block. A Token set
// before or after still wins over them, so a --nats-token flag overrides the
// config.
func (o *ConnectOptions) SetAuth(n domains.NATS) {
	o.TokenFile = n.TokenFile
	o.NkeySeedFile = n.NkeySeedFile
	o.Credentials = n.Credentials
	o.TLS = TLS{
		Enabled:    n.TLS.Enabled,
		CAFile:     n.TLS.CAFile,
		CertFile:   n.TLS.CertFile,
		KeyFile:    n.TLS.KeyFile,
		ServerName: n.TLS.ServerName,
	}
}

// authOptions turns the authentication and TLS fields of o into client
// options. Every file is checked here, so a missing or unreadable one fails
// Connect with an error naming it, instead of surfacing later as an
// authorization violation. At most one way to authenticate: Token, else
// exactly one of TokenFile, NkeySeedFile and Credentials.
func (o *ConnectOptions) authOptions() ([]nats.Option, error) {
	var opts []nats.Option
	switch {
	case o.Token != "":
		opts = append(opts, nats.Token(o.Token))
	case countSet(o.TokenFile, o.NkeySeedFile, o.Credentials) > 1:
		return nil, errors.New("token file, nkey seed file and credentials exclude each other: set one")
	case o.TokenFile != "":
		b, err := infile.ReadFile(o.TokenFile, maxKeyFile)
		if err != nil {
			return nil, fmt.Errorf("nats token_file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return nil, fmt.Errorf("nats token_file %q is empty", o.TokenFile)
		}
		opts = append(opts, nats.Token(tok))
	case o.NkeySeedFile != "":
		if err := readable(o.NkeySeedFile); err != nil {
			return nil, fmt.Errorf("nats nkey_seed_file: %w", err)
		}
		opt, err := nats.NkeyOptionFromSeed(o.NkeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("nats nkey_seed_file %q: %w", o.NkeySeedFile, err)
		}
		opts = append(opts, opt)
	case o.Credentials != "":
		if err := readable(o.Credentials); err != nil {
			return nil, fmt.Errorf("nats credentials: %w", err)
		}
		opts = append(opts, nats.UserCredentials(o.Credentials))
	}

	t := o.TLS
	if !t.on() {
		return opts, nil
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("nats tls: a client certificate needs both cert_file and key_file")
	}
	// Secure first: RootCAs and ClientCert keep its config and re-read their
	// files on every reconnect, so rotated certificates are picked up.
	opts = append(opts, nats.Secure(&tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}))
	if t.CAFile != "" {
		if err := readable(t.CAFile); err != nil {
			return nil, fmt.Errorf("nats tls ca_file: %w", err)
		}
		opts = append(opts, nats.RootCAs(t.CAFile))
	}
	if t.CertFile != "" {
		if err := readable(t.CertFile); err != nil {
			return nil, fmt.Errorf("nats tls cert_file: %w", err)
		}
		if err := readable(t.KeyFile); err != nil {
			return nil, fmt.Errorf("nats tls key_file: %w", err)
		}
		opts = append(opts, nats.ClientCert(t.CertFile, t.KeyFile))
	}
	return opts, nil
}

func countSet(ss ...string) int {
	n := 0
	for _, s := range ss {
		if s != "" {
			n++
		}
	}
	return n
}

// maxKeyFile is the largest token, seed or credentials file read, in bytes:
// an nkey seed is 58, a token or a .creds file a few hundred.
const maxKeyFile = 64 << 10

// readable checks that path is a regular file that can be opened for
// reading (package infile): nats.go reads it later, and would block for good
// on a FIFO.
func readable(path string) error {
	f, err := infile.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}
