package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/wire"
)

func TestNATSDenialsAreExported(t *testing.T) {
	opts := &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		Users: []*server.User{{Username: "soldier", Password: "pw", Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Allow: []string{"regiment.small.report.fraud", "_INBOX.>"}},
		}}}}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := bus.Connect(ctx, bus.ConnectOptions{URL: "nats://soldier:pw@" + srv.Addr().String(), Cluster: "small"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := prometheus.NewRegistry()
	RegisterConn(reg, "soldier", conn)

	// A report for another domain is outside the allow list: the server
	// refuses it, asynchronously.
	r := wire.DomainReport{Version: wire.Version, Cluster: "small", Domain: "payment", Seq: 1, SentAt: time.Now(), Mode: wire.ModeActive}
	if err := conn.PublishReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for conn.Denied() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := gathered(t, reg)["regiment_soldier_nats_denied_total{}"]; got != 1 {
		t.Fatalf("regiment_soldier_nats_denied_total = %v, want 1", got)
	}
}

// TestCommanderAsksForTheConfiguredReplicas: nats { replicas } reaches the
// buckets the Commander creates on an external server (a single server
// refuses 3, and the Commander does not start), while its own embedded
// server, a single one, gets buckets of one replica whatever is written.
func TestCommanderAsksForTheConfiguredReplicas(t *testing.T) {
	cfg, err := config.LoadFile("../../examples/tenth.hcl")
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATS.Replicas = 3
	srv, err := bus.StartEmbedded(bus.EmbeddedOptions{Port: bus.RandomPort, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	external := NewCommanderProcess(cfg, CommanderOptions{NATSURL: srv.ClientURL(), DataDir: t.TempDir()}, Deps{}, hclog.NewNullLogger())
	err = external.Open(ctx)
	external.Close()
	if err == nil || !strings.Contains(err.Error(), "replicas > 1 not supported") {
		t.Fatalf("Open on a single external server with replicas = 3: %v, want the server's refusal", err)
	}

	embedded := NewCommanderProcess(cfg, CommanderOptions{DataDir: t.TempDir(), EmbeddedPort: bus.RandomPort}, Deps{}, hclog.NewNullLogger())
	defer embedded.Close()
	if err := embedded.Open(ctx); err != nil {
		t.Fatalf("Open with the embedded server and replicas = 3: %v", err)
	}
}
