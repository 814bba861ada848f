package bus

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/regimentd/regiment/wire"
)

// BenchmarkDirectiveFanout is one Commander tick's fan-out: one publisher,
// five Soldiers (five Conns, one domain each) on an embedded server over
// loopback. An iteration publishes one directive per domain and waits until
// all five are received; p50-ms and p99-ms are of that whole tick. The kv
// case also stores each directive in the directive bucket, as
// PublishDirective does; publish-only is the core NATS path alone.
func BenchmarkDirectiveFanout(b *testing.B) {
	b.Run("publish-only", func(b *testing.B) { benchFanout(b, false) })
	b.Run("kv", func(b *testing.B) { benchFanout(b, true) })
}

func benchFanout(b *testing.B, store bool) {
	domains := []string{"payment", "fraud", "merchant", "pipelines", "platform"}
	e := startServer(b, b.TempDir(), RandomPort)
	ctx := context.Background()
	commander := connect(b, e.ClientURL(), "commander")
	got := make(chan struct{}, len(domains))
	for _, domain := range domains {
		s := connect(b, e.ClientURL(), "soldier-"+domain)
		_, err := s.SubscribeDirectives(domain, func(d wire.Directive, err error) {
			if err != nil {
				b.Error(err)
			}
			got <- struct{}{}
		})
		if err != nil {
			b.Fatal(err)
		}
		flush(b, s)
	}
	dirs := make([]wire.Directive, len(domains))
	for i, domain := range domains {
		dirs[i] = directive(domain, 1, 0)
	}
	// Create the bucket outside the measurement.
	if store {
		if _, err := commander.directives(ctx, true); err != nil {
			b.Fatal(err)
		}
	}

	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		for i := range dirs {
			dirs[i].Seq++
			if err := commander.publishDirective(ctx, dirs[i], store); err != nil {
				b.Fatal(err)
			}
		}
		for range domains {
			<-got
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	ms := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
