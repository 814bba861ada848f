package kube_test

import (
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/wire"
)

// The helpers of the daemon-level tests in package kube_test.

// parseConfig parses an HCL config written in the test.
func parseConfig(t *testing.T, src string) *domains.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(src), "k.hcl")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startBus starts an embedded NATS server for the test, shut down at its end.
func startBus(t *testing.T) *bus.Embedded {
	t.Helper()
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// acceptDirective hands s a directive of seq for domain "shop" of cfg, half
// of a 500-core pool, issued at now, and fails the test if s rejects it.
func acceptDirective(t *testing.T, s *soldier.Soldier, cfg *domains.Config, seq uint64, now time.Time) {
	t.Helper()
	d := wire.Directive{Version: wire.Version, Cluster: cfg.Cluster.Name, Domain: "shop", Term: 1, Seq: seq,
		IssuedAt: now, TTL: wire.Duration(3 * time.Minute), Share: 0.5, Cores: 500, Policy: "test"}
	if ok, why := s.OnDirective(d, now); !ok {
		t.Fatalf("directive rejected: %s", why)
	}
}
