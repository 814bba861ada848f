package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/bus"
	"github.com/regimentd/regiment/bus/wire"
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
