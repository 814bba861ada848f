package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/nats-io/nkeys"

	"github.com/regimentd/regiment/internal/core/domains"
)

// natsHCL is the nats block:
//
//	nats {
//	  url            = "tls://nats.regiment:4222"
//	  nkey_seed_file = "/etc/regiment/nats/seed"   # or token_file, or credentials
//	  tls {
//	    ca_file = "/etc/regiment/nats/ca.crt"
//	  }
//	  directive_signing_key_file = "/etc/regiment/directive/seed"   # the Commander's
//	  directive_keys             = ["UD5K..."]                      # what Soldiers trust
//	  override_signing_key_file  = "/etc/regiment/override/seed"    # the operator's CLI
//	  override_keys              = ["UAB3..."]                      # what the daemons trust
//	  replicas                   = 3   # of the key-value buckets, in a NATS cluster of 3
//	}
//
// Secrets are named by file, never written inline: a token attribute is
// decoded only to be refused with a hint.
type natsHCL struct {
	Def          hcl.Range
	URL          stringAttr `hcl:"url"`
	Token        stringAttr `hcl:"token"` // refused: secrets do not belong in the config
	TokenFile    stringAttr `hcl:"token_file"`
	NkeySeedFile stringAttr `hcl:"nkey_seed_file"`
	Credentials  stringAttr `hcl:"credentials"`
	TLS          natsTLSHCL
	SigningKey   stringAttr `hcl:"directive_signing_key_file"` // directive_signing_key_file
	Keys         listAttr   `hcl:"directive_keys"`             // directive_keys
	OverrideKey  stringAttr `hcl:"override_signing_key_file"`  // override_signing_key_file
	OverrideKeys listAttr   `hcl:"override_keys"`              // override_keys
	Replicas     intAttr    `hcl:"replicas"`
}

func (n *natsHCL) children() []child {
	return []child{{typ: "tls", once: true, example: `tls { ca_file = "ca.crt" }`,
		open: func(def hcl.Range, _ label) node { n.TLS.Def = def; return &n.TLS }}}
}

type natsTLSHCL struct {
	Def        hcl.Range
	CAFile     stringAttr `hcl:"ca_file"`
	CertFile   stringAttr `hcl:"cert_file"`
	KeyFile    stringAttr `hcl:"key_file"`
	ServerName stringAttr `hcl:"server_name"`
}

func (t *natsTLSHCL) children() []child { return nil }

// translate builds the plain nats config. Relative paths resolve against the
// directory of the file the block is in.
func (n *natsHCL) translate() domains.NATS {
	dir := ""
	if n.Def != (hcl.Range{}) {
		dir = filepath.Dir(n.Def.Filename)
	}
	path := func(a stringAttr) string {
		if a.V == "" || filepath.IsAbs(a.V) || dir == "" {
			return a.V
		}
		return filepath.Join(dir, a.V)
	}
	t := &n.TLS
	return domains.NATS{
		URL:                n.URL.V,
		TokenFile:          path(n.TokenFile),
		NkeySeedFile:       path(n.NkeySeedFile),
		Credentials:        path(n.Credentials),
		SigningKey:         path(n.SigningKey),
		DirectiveKeys:      n.Keys.V,
		OverrideSigningKey: path(n.OverrideKey),
		OverrideKeys:       n.OverrideKeys.V,
		Replicas:           n.Replicas.V,
		TLS: domains.NATSTLS{
			Enabled:    t.Def != (hcl.Range{}),
			CAFile:     path(t.CAFile),
			CertFile:   path(t.CertFile),
			KeyFile:    path(t.KeyFile),
			ServerName: t.ServerName.V,
		},
	}
}

// natsReplicas bounds nats.replicas: JetStream keeps a stream on 1 to 5
// servers.
var natsReplicas = interval{lo: 1, hi: domains.MaxNATSReplicas}

// validateNATS checks the nats block (cfg its translation, with defaults): a
// server URL, no inline secret, one authentication method at most, a client
// certificate with its key, and replicas in 1..5. Whether the files exist is checked when a daemon connects
// (bus.Connect), not here: the same config is validated, simulated and
// rendered (regiment nats-config) on machines that do not hold the secrets.
func validateNATS(n *natsHCL, cfg domains.NATS, c checker) {
	ds := c.ds
	c.integer(&n.Replicas, cfg.Replicas, natsReplicas)
	if u := &n.URL; u.ok() && u.V != "" {
		if p, err := url.Parse(u.V); err != nil || p.Scheme == "" || p.Host == "" {
			ds.add(u.Range, "Invalid url", "%s is not a server URL (example: \"nats://localhost:4222\"; leave it empty for an embedded server)", clip(u.V))
		}
	}
	if n.Token.Set {
		ds.add(n.Token.Range, "Inline token not allowed", `secrets do not belong in the config; write the token to a file and set token_file = "/etc/regiment/nats/token", or pass --nats-token or REGIMENT_NATS_TOKEN`)
	}
	// An empty path is the same as none. The first method in the file wins;
	// every later one is a conflict.
	var auths []*stringAttr
	for _, a := range []*stringAttr{&n.TokenFile, &n.NkeySeedFile, &n.Credentials} {
		if a.ok() && a.V != "" {
			auths = append(auths, a)
		}
	}
	slices.SortFunc(auths, func(a, b *stringAttr) int { return a.Range.Start.Byte - b.Range.Start.Byte })
	for _, a := range auths[min(1, len(auths)):] {
		ds.add(a.Range, "Conflicting NATS authentication", "%s and %s exclude each other: a connection authenticates one way (the first is at line %d)", auths[0].Name, a.Name, auths[0].Range.Start.Line)
	}
	for _, keys := range []struct {
		a    *listAttr
		what string
	}{{&n.Keys, "directive"}, {&n.OverrideKeys, "override"}} {
		if !keys.a.ok() {
			continue
		}
		if len(keys.a.V) > domains.MaxDirectiveKeys {
			ds.add(keys.a.Range, fmt.Sprintf("Too many %s keys", keys.what), "%d keys; at most %d are trusted at once (the old and the new during a rollover)", len(keys.a.V), domains.MaxDirectiveKeys)
		}
		for i, k := range keys.a.V {
			if !nkeys.IsValidPublicKey(k) || strings.HasPrefix(k, "X") {
				ds.add(keys.a.Ranges[i], fmt.Sprintf("Invalid %s key", keys.what), "%s is not a public nkey (example: \"UD5K...\", as `regiment nats-config` prints for the %s signing key)", clip(k), keys.what)
			}
		}
	}
	t := &n.TLS
	hasCert, hasKey := t.CertFile.ok() && t.CertFile.V != "", t.KeyFile.ok() && t.KeyFile.V != ""
	if hasCert != hasKey && !t.CertFile.Bad && !t.KeyFile.Bad {
		set, missing := &t.CertFile, "key_file"
		if hasKey {
			set, missing = &t.KeyFile, "cert_file"
		}
		ds.add(set.Range, fmt.Sprintf("Missing %s", missing), "a client certificate needs both cert_file and key_file")
	}
}
