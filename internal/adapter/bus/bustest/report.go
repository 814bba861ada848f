package bustest

import (
	"context"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/wire"
)

// Report publishes one report for domain of cluster on conn, as the
// domain's Soldier does every tick: a Commander publishes no directive for a
// domain it has not heard from. The report is small (100 rps, 4 cores in
// use and wanted) and active.
func Report(t testing.TB, conn *bus.Conn, cluster, domain string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := conn.PublishReport(ctx, report(cluster, domain)); err != nil {
		t.Fatal(err)
	}
}

// ReportAsSoldier publishes Report's report every 100 ms until the test
// ends.
func ReportAsSoldier(t testing.TB, conn *bus.Conn, cluster, domain string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			// A publish on a connection the test has closed fails: nothing to check.
			_ = conn.PublishReport(ctx, report(cluster, domain))
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func report(cluster, domain string) wire.DomainReport {
	return wire.DomainReport{Version: wire.Version, Cluster: cluster, Domain: domain, SentAt: time.Now(),
		RPS: 100, DemandCores: 4, CoresUsed: 4, Mode: wire.ModeActive}
}
