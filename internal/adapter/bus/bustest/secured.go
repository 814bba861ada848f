// Package bustest starts a real nats-server secured as in production, for
// the tests of packages above bus: one nkey user per role with the
// permissions bus.Permissions gives it, rendered by bus.WriteServerConfig and
// parsed as nats-server parses its config file. It listens on a random
// loopback port with JetStream in a test temp dir, and stops at the end of
// the test. Only tests import it.
package bustest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/domains"
)

// Secured is a running nats-server with per-role nkey users.
type Secured struct {
	URL     string
	Dir     string // holds <user>.nk, the seed file of each role's user
	Cluster string
}

// StartSecured starts a server with the roles of cfg.
func StartSecured(t testing.TB, cfg *domains.Config) *Secured {
	t.Helper()
	roles, err := bus.Permissions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &Secured{Dir: t.TempDir(), Cluster: cfg.Cluster.Name}
	keys := map[string]string{}
	for _, r := range roles {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := kp.Seed()
		keys[r.User], _ = kp.PublicKey()
		if err := os.WriteFile(s.Seed(r.User), seed, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var conf bytes.Buffer
	if err := bus.WriteServerConfig(&conf, roles, bus.ServerConfig{StoreDir: filepath.Join(s.Dir, "js"), Nkeys: keys}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir, "nats-server.conf")
	if err := os.WriteFile(path, conf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refuses the rendered config: %v\n%s", err, conf.Bytes())
	}
	opts.Host, opts.Port, opts.NoSigs, opts.NoLog = "127.0.0.1", server.RANDOM_PORT, true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	s.URL = srv.ClientURL()
	return s
}

// SigningKey writes a new directive signing seed into the server's
// directory as name and returns its public key.
func (s *Secured) SigningKey(t testing.TB, name string) string {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	if err := os.WriteFile(filepath.Join(s.Dir, name), seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return pub
}

// Seed is the path of user's nkey seed file.
func (s *Secured) Seed(user string) string { return filepath.Join(s.Dir, user+".nk") }

// Connect connects as user, with its seed and inbox prefix, then whatever
// mod sets (a Signer, DirectiveKeys); the connection closes at the end of
// the test.
func (s *Secured) Connect(t testing.TB, user string, mod ...func(*bus.ConnectOptions)) *bus.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := bus.ConnectOptions{URL: s.URL, Cluster: s.Cluster, Name: user,
		NkeySeedFile: s.Seed(user), InboxPrefix: bus.InboxPrefix(s.Cluster, user)}
	for _, m := range mod {
		m(&o)
	}
	c, err := bus.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
