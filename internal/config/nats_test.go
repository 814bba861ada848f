package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/regimentd/regiment/internal/core/domains"
)

// testDirectiveKey is a public user nkey.
const testDirectiveKey = "UDA7KXTDEW5QEGSBGUYOZD6QL3RLPUWEKWU6QP2LWAMHP6TNS37O2PI6"

func TestNATSBlockRules(t *testing.T) {
	cases := []ruleCase{
		{name: "an inline token is refused with a hint to use a file",
			add:  "nats {\n  url   = \"nats://x:4222\"\n  token = \"s3cret\"\n}\n",
			line: 14, col: 11, summary: "Inline token not allowed", hint: "token_file"},
		{name: "token_file and nkey_seed_file exclude each other",
			add:  "nats {\n  token_file     = \"token\"\n  nkey_seed_file = \"seed\"\n}\n",
			line: 14, col: 20, summary: "Conflicting NATS authentication", hint: "token_file and nkey_seed_file exclude each other"},
		{name: "credentials and token_file exclude each other",
			add:  "nats {\n  credentials = \"user.creds\"\n  token_file  = \"token\"\n}\n",
			line: 14, col: 17, summary: "Conflicting NATS authentication", hint: "credentials and token_file exclude each other"},
		{name: "a client certificate needs its key",
			add:  "nats {\n  tls {\n    cert_file = \"client.crt\"\n  }\n}\n",
			line: 14, col: 17, summary: "Missing key_file", hint: "both cert_file and key_file"},
		{name: "a client key needs its certificate",
			add:  "nats {\n  tls {\n    key_file = \"client.key\"\n  }\n}\n",
			line: 14, col: 16, summary: "Missing cert_file"},
		{name: "tls takes no unknown keys",
			add:  "nats {\n  tls {\n    ca = \"ca.crt\"\n  }\n}\n",
			line: 14, col: 5, summary: `Unknown key "ca"`},
		{name: "a directive key must be a public nkey",
			add:  "nats {\n  directive_keys = [\"" + testDirectiveKey + "\", \"SUAJUNK\"]\n}\n",
			line: 13, col: 81, summary: "Invalid directive key", hint: "not a public nkey"},
		{name: "directive keys are a list",
			add:  "nats {\n  directive_keys = \"" + testDirectiveKey + "\"\n}\n",
			line: 13, col: 20, summary: "directive_keys", hint: "a list of strings"},
		{name: "at most four directive keys",
			add:  "nats {\n  directive_keys = [\"" + strings.Repeat(testDirectiveKey+"\", \"", 4) + testDirectiveKey + "\"]\n}\n",
			line: 13, col: 20, summary: "Too many directive keys", hint: "at most 4"},
		{name: "an override key must be a public nkey",
			add:  "nats {\n  override_keys = [\"" + testDirectiveKey + "\", \"SUAJUNK\"]\n}\n",
			line: 13, col: 80, summary: "Invalid override key", hint: "for the override signing key"},
		{name: "at most four override keys",
			add:  "nats {\n  override_keys = [\"" + strings.Repeat(testDirectiveKey+"\", \"", 4) + testDirectiveKey + "\"]\n}\n",
			line: 13, col: 19, summary: "Too many override keys", hint: "at most 4"},
		{name: "replicas above JetStream's five are refused",
			add:  "nats {\n  replicas = 7\n}\n",
			line: 13, col: 14, summary: "Invalid replicas", hint: "replicas must be in [1, 5], got 7"},
		{name: "replicas of 0 is refused, not replaced by the default",
			add:  "nats {\n  replicas = 0\n}\n",
			line: 13, col: 14, summary: "Invalid replicas", hint: "replicas must be in [1, 5], got 0"},
		{name: "replicas is a whole number",
			add:  "nats {\n  replicas = 2.5\n}\n",
			line: 13, col: 14, summary: "replicas", hint: "want a whole number, got 2.5"},
		{name: "one tls block",
			add:  "nats {\n  tls {}\n  tls {}\n}\n",
			line: 14, col: 3, summary: "tls"},
	}
	runRules(t, cases)
}

func TestNATSBlockTranslatesPathsRelativeToTheConfigFile(t *testing.T) {
	src := base + `nats {
  url            = "tls://nats.regiment:4222"
  nkey_seed_file = "secrets/soldier.nk"
  directive_signing_key_file = "secrets/directive.nk"
  directive_keys = ["` + testDirectiveKey + `"]
  override_signing_key_file = "secrets/override.nk"
  override_keys  = ["` + testDirectiveKey + `"]
  replicas       = 3
  tls {
    ca_file     = "/etc/regiment/ca.crt"
    cert_file   = "client.crt"
    key_file    = "client.key"
    server_name = "nats.regiment"
  }
}
`
	file := filepath.Join("deploy", "conf", "cluster.hcl")
	cfg, err := Parse([]byte(src), file)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("deploy", "conf")
	want := domains.NATS{
		URL:                "tls://nats.regiment:4222",
		NkeySeedFile:       filepath.Join(dir, "secrets", "soldier.nk"),
		SigningKey:         filepath.Join(dir, "secrets", "directive.nk"),
		DirectiveKeys:      []string{testDirectiveKey},
		OverrideSigningKey: filepath.Join(dir, "secrets", "override.nk"),
		OverrideKeys:       []string{testDirectiveKey},
		Replicas:           3,
		TLS: domains.NATSTLS{
			Enabled:    true,
			CAFile:     "/etc/regiment/ca.crt",
			CertFile:   filepath.Join(dir, "client.crt"),
			KeyFile:    filepath.Join(dir, "client.key"),
			ServerName: "nats.regiment",
		},
	}
	if !cfg.NATS.Equal(want) {
		t.Errorf("got  %+v\nwant %+v", cfg.NATS, want)
	}
}

func TestNATSBlockAbsentMeansNoAuthAndNoTLSAndOneReplica(t *testing.T) {
	cfg, err := Parse([]byte(base), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.NATS.Equal(domains.NATS{Replicas: 1}) {
		t.Errorf("got %+v, want the zero NATS with one replica", cfg.NATS)
	}
	cfg, err = Parse([]byte(base+"nats {\n  tls {}\n}\n"), "cluster.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.NATS.TLS.Enabled || cfg.NATS.TLS.CAFile != "" {
		t.Errorf("an empty tls block: got %+v, want TLS on with system roots", cfg.NATS.TLS)
	}
}
