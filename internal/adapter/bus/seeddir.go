package bus

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/regimentd/regiment/internal/core/domains"
)

// EnsureSeeds readies a seeds directory for `regiment nats-config`: the seed
// of each role's user (UserSeeds), the directive signing key
// (SigningSeedFile) and the override signing key (OverrideSigningSeedFile),
// each created when missing. It names on w every seed it created and both
// signing keys' public keys with where they go, and returns each user's
// public key by user name. On an error the keys got before it are returned
// too.
func EnsureSeeds(dir string, roles []Role, w io.Writer) (map[string]string, error) {
	seeds, err := UserSeeds(dir, roles)
	keys := map[string]string{}
	for _, s := range seeds {
		if s.Created {
			fmt.Fprintf(w, "created %s (%s)\n", s.Path, s.Public)
		}
		keys[s.User] = s.Public
	}
	if err != nil {
		return keys, err
	}
	if err := signingKey(dir, SigningSeedFile, w, "directive signing key %s (%s): the Commander's nats { directive_signing_key_file }; Soldiers trust it with nats { directive_keys = [%q] }\n"); err != nil {
		return keys, err
	}
	return keys, signingKey(dir, OverrideSigningSeedFile, w, "override signing key %s (%s): the operator's nats { override_signing_key_file }; the Commander and Soldiers trust it with nats { override_keys = [%q] }\n")
}

// signingKey creates the signing key dir/name if missing and writes to w
// whether it was created or is used, then format with its path and public
// key (twice).
func signingKey(dir, name string, w io.Writer, format string) error {
	path := filepath.Join(dir, name)
	pub, created, err := EnsureUserSeed(path)
	if err != nil {
		return err
	}
	verb := "using"
	if created {
		verb = "created"
	}
	fmt.Fprintf(w, verb+" "+format, path, pub, pub)
	return nil
}

// ServerConfigFor is the nats-server configuration of `regiment
// nats-config` for cfg: one nkey user per role (Permissions), whose public
// keys come from the seeds directory dir (EnsureSeeds, naming on w what it
// created) unless sc.NkeyEnv reads them from the environment.
func ServerConfigFor(cfg *domains.Config, dir string, sc ServerConfig, w io.Writer) ([]byte, error) {
	roles, err := Permissions(cfg)
	if err != nil {
		return nil, err
	}
	if !sc.NkeyEnv {
		if sc.Nkeys, err = EnsureSeeds(dir, roles, w); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := WriteServerConfig(&b, roles, sc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
