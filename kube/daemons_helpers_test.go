package kube_test

import (
	"testing"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/domains/config"
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
