package commander

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/regimentd/regiment/bus/wire"
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
