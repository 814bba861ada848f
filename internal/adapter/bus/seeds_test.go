package bus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
)

func TestUserSeeds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seeds")
	roles := []Role{{User: CommanderUser}, {User: SoldierUser("payment")}}
	first, err := UserSeeds(dir, roles)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("missing seeds are created, user seeds, mode 0600", func(t *testing.T) {
		for i, s := range first {
			if s.User != roles[i].User || s.Path != filepath.Join(dir, roles[i].User+".nk") || !s.Created || !strings.HasPrefix(s.Public, "U") {
				t.Errorf("seed %d = %+v", i, s)
			}
			if fi, err := os.Stat(s.Path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %v, %v", s.Path, fi, err)
			}
		}
	})
	t.Run("existing seeds are reused", func(t *testing.T) {
		again, err := UserSeeds(dir, roles)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range again {
			if s.Created || s.Public != first[i].Public {
				t.Errorf("seed %d = %+v, first %+v", i, s, first[i])
			}
		}
	})
	t.Run("a seed that is not a user's is refused", func(t *testing.T) {
		kp, _ := nkeys.CreateAccount()
		seed, _ := kp.Seed()
		path := filepath.Join(dir, "account.nk")
		if err := os.WriteFile(path, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := EnsureUserSeed(path); err == nil || !strings.Contains(err.Error(), "not a user seed") {
			t.Fatalf("err = %v", err)
		}
	})
}
