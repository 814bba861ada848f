package bus

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nkeys"

	"github.com/regimentd/regiment/internal/infile"
)

// SigningSeedFile is the name of the directive signing key's seed in a seeds
// directory (`regiment nats-config --seeds`), beside the users' <user>.nk.
const SigningSeedFile = "directive-signing.nk"

// OverrideSigningSeedFile is the name of the operator's override signing
// key's seed in a seeds directory (regiment nats-config).
const OverrideSigningSeedFile = "override-signing.nk"

// UserSeed is a NATS user's nkey seed file and its public key.
type UserSeed struct {
	User    string // the role's user, e.g. "soldier-payment"
	Path    string // the seed file, <dir>/<user>.nk
	Public  string // the public key, "U..."
	Created bool   // the seed was missing and has just been written
}

// UserSeeds returns the seed of each role's user in dir, in roles' order,
// creating dir (mode 0700) and the seeds that are missing (mode 0600) and
// reusing the others, so a server config made from them is stable across
// runs. On an error it also returns the seeds it got before.
func UserSeeds(dir string, roles []Role) ([]UserSeed, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var seeds []UserSeed
	for _, r := range roles {
		path := filepath.Join(dir, r.User+".nk")
		pub, created, err := EnsureUserSeed(path)
		if err != nil {
			return seeds, err
		}
		seeds = append(seeds, UserSeed{User: r.User, Path: path, Public: pub, Created: created})
	}
	return seeds, nil
}

// EnsureUserSeed returns the public key of the user seed at path, creating a
// new seed there (mode 0600) when there is none. A seed that is not a
// user's ("SU...") is an error.
func EnsureUserSeed(path string) (pub string, created bool, err error) {
	seed, err := infile.ReadFile(path, maxKeyFile)
	if errors.Is(err, os.ErrNotExist) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return "", false, fmt.Errorf("create nkey for %q: %w", path, err)
		}
		if seed, err = kp.Seed(); err != nil {
			return "", false, fmt.Errorf("create nkey for %q: %w", path, err)
		}
		// O_EXCL: never overwrite a seed another run wrote meanwhile.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", false, fmt.Errorf("write seed: %w", err)
		}
		_, werr := f.Write(append(seed, '\n'))
		if err := errors.Join(werr, f.Close()); err != nil {
			return "", false, fmt.Errorf("write seed %q: %w", path, err)
		}
		created = true
	} else if err != nil {
		return "", false, fmt.Errorf("read seed: %w", err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(seed))))
	if err != nil {
		return "", false, fmt.Errorf("seed %q: %w", path, err)
	}
	pub, err = kp.PublicKey()
	if err != nil {
		return "", false, fmt.Errorf("seed %q: %w", path, err)
	}
	if !strings.HasPrefix(pub, "U") {
		return "", false, fmt.Errorf("seed %q is not a user seed (public key %s)", path, pub)
	}
	return pub, created, nil
}
