package commander

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regimentd/regiment/wire"
)

// failingPublisher refuses the directives of one domain, as a JetStream
// outage refuses to store them, and keeps the others.
type failingPublisher struct {
	nopPublisher
	refuse string
}

var errStore = errors.New("directive store unavailable")

func (p *failingPublisher) PublishDirective(ctx context.Context, d wire.Directive) error {
	if d.Domain == p.refuse {
		return errStore
	}
	return p.nopPublisher.PublishDirective(ctx, d)
}

func TestOneFailedDirectiveDoesNotStopTheOthers(t *testing.T) {
	cfg := testConfig()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pub := &failingPublisher{refuse: "p0"}
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, nil, 1, 0)
	for _, d := range cfg.Domains {
		c.OnReport(report(cfg, d.Name, 100, 0.1, now))
	}
	dec, err := c.Tick(context.Background(), now)
	if !errors.Is(err, errStore) {
		t.Fatalf("err = %v, want the store's error", err)
	}
	if len(pub.directives) != 2 || pub.directives[0].Domain != "p1" || pub.directives[1].Domain != "p3" {
		t.Fatalf("published %+v, want p1 and p3", pub.directives)
	}
	if dec.Seq != 1 || len(dec.Shares) != 3 {
		t.Fatalf("decision %+v, want seq 1 with 3 shares", dec)
	}
}

// TestNoDirectiveForADomainNotHeardFrom: a domain that has not reported since
// the Commander started gets no directive (sized blind, its budget would be
// its floor, and a Soldier that obeyed would cut its running apps to it),
// unless an operator pinned its share; from the tick after its first report
// it gets one every tick.
func TestNoDirectiveForADomainNotHeardFrom(t *testing.T) {
	cfg := testConfig()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pub := &nopPublisher{}
	c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", pub, nil, 1, 0)
	c.OnReport(report(cfg, "p0", 300, 0.1, now))
	dec, err := c.Tick(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.directives) != 1 || pub.directives[0].Domain != "p0" || len(dec.Shares) != 3 {
		t.Fatalf("published %+v with %d shares decided; want p0's directive only, 3 shares", pub.directives, len(dec.Shares))
	}
	if got, want := dec.Shares[2], cfg.Domains[2].Floor; got != want {
		t.Fatalf("p3's share %g, want its floor %g: the withheld directive would have cut it there", got, want)
	}

	share := 0.3
	if ok, why := c.OnOverride(wire.Override{Version: wire.Version, Cluster: cfg.Cluster.Name, Domain: "p3", Share: &share,
		IssuedAt: now, Until: now.Add(time.Hour), By: "alice", Reason: "test"}, now); !ok {
		t.Fatalf("pin refused: %s", why)
	}
	pub.directives = nil
	if _, err := c.Tick(context.Background(), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if len(pub.directives) != 2 || pub.directives[1].Domain != "p3" || pub.directives[1].Share != share {
		t.Fatalf("published %+v; want p0's and p3's pinned at %g", pub.directives, share)
	}

	c.OnReport(report(cfg, "p1", 100, 0.1, now.Add(time.Minute)))
	pub.directives = nil
	if _, err := c.Tick(context.Background(), now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if len(pub.directives) != 3 {
		t.Fatalf("published %+v; want all three once p1 reported", pub.directives)
	}
}
