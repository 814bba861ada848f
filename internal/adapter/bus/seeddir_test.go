package bus

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsureSeedsCreatesOnceAndSaysWhereKeysGo: the first call creates every
// user's seed and both signing keys and names each; the second reuses them,
// returns the same public keys and names only the signing keys, each with
// the config attribute its public key goes in.
func TestEnsureSeedsCreatesOnceAndSaysWhereKeysGo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seeds")
	roles := []Role{{User: CommanderUser}, {User: SoldierUser("payment")}}
	var first, second bytes.Buffer
	keys, err := EnsureSeeds(dir, roles, &first)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range roles {
		if !strings.HasPrefix(keys[r.User], "U") || !strings.Contains(first.String(), "created "+filepath.Join(dir, r.User+".nk")+" ("+keys[r.User]+")") {
			t.Errorf("user %s: key %q, output:\n%s", r.User, keys[r.User], first.String())
		}
	}
	for _, name := range []string{SigningSeedFile, OverrideSigningSeedFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no %s: %v", name, err)
		}
	}
	again, err := EnsureSeeds(dir, roles, &second)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range roles {
		if again[r.User] != keys[r.User] {
			t.Errorf("user %s: key %q on the second call, %q on the first", r.User, again[r.User], keys[r.User])
		}
	}
	lines := strings.Split(strings.TrimSpace(second.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "using directive signing key") || !strings.Contains(lines[0], "directive_keys = [\"U") ||
		!strings.HasPrefix(lines[1], "using override signing key") || !strings.Contains(lines[1], "override_keys = [\"U") {
		t.Errorf("second call says:\n%s", second.String())
	}
}

// TestEnsureSeedsStopsAtABadUserSeed: a seed that is not a user's fails the
// call before any signing key is made, returning the keys got before it.
func TestEnsureSeedsStopsAtABadUserSeed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, SoldierUser("payment")+".nk"), []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := EnsureSeeds(dir, []Role{{User: CommanderUser}, {User: SoldierUser("payment")}}, &bytes.Buffer{})
	if err == nil || keys[CommanderUser] == "" {
		t.Fatalf("keys %v, err %v", keys, err)
	}
	if _, err := os.Stat(filepath.Join(dir, SigningSeedFile)); !os.IsNotExist(err) {
		t.Errorf("a signing key was made after the failure: %v", err)
	}
}
