package bus

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKeyFilesMustBeRegularFiles: a token, seed, credentials or TLS file
// naming a FIFO or a device is refused at once with its path, where reading
// it (here or later in nats.go) would block for good or never end.
func TestKeyFilesMustBeRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "key")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		for _, tc := range []struct {
			name string
			load func() error
		}{
			{"token_file", func() error { _, err := (&ConnectOptions{TokenFile: path}).authOptions(); return err }},
			{"nkey_seed_file", func() error { _, err := (&ConnectOptions{NkeySeedFile: path}).authOptions(); return err }},
			{"credentials", func() error { _, err := (&ConnectOptions{Credentials: path}).authOptions(); return err }},
			{"directive signing key", func() error { _, err := LoadSigner(path); return err }},
			{"user seed", func() error { _, _, err := EnsureUserSeed(path); return err }},
		} {
			start := time.Now()
			err := tc.load()
			if err == nil || !strings.Contains(err.Error(), path+": is a") || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s %s: got %v, want it refused as not a regular file", tc.name, path, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s %s took %v", tc.name, path, d)
			}
		}
	}
}
