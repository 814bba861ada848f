package commander

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/regimentd/regiment/wire"
)

// TestFirstTickIsPrompt pins when Run's first tick comes: as soon as every
// domain has reported; else two Soldier ticks after start; never later than
// a Commander tick; then a tick apart.
func TestFirstTickIsPrompt(t *testing.T) {
	tests := []struct {
		rule     string
		tick     time.Duration // Commander tick; the Soldier tick is 10s
		reportAt time.Duration // every domain reports then; 0: never
		want     []time.Duration
	}{
		{"every domain reported: the first tick follows", time.Minute, 3050 * time.Millisecond, []time.Duration{3100 * time.Millisecond, 63100 * time.Millisecond}},
		{"no reports: two soldier ticks after start", time.Minute, 0, []time.Duration{20 * time.Second, 80 * time.Second}},
		{"a commander tick shorter than that comes first", 5 * time.Second, 0, []time.Duration{5 * time.Second, 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := reloadConfig()
				cfg.Commander.Tick, cfg.Commander.DirectiveTTL = tt.tick, 3*tt.tick
				c := New(cfg, &Forecast{ReserveMin: cfg.Commander.ReserveMin}, "forecast", &reloadPublisher{}, nil, 1, 0)
				ctx, cancel := context.WithCancel(context.Background())
				start := time.Now()
				var ticks []time.Duration
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = c.Run(ctx, time.Now, func(Decision, error) { ticks = append(ticks, time.Since(start)) })
				}()
				if tt.reportAt > 0 {
					time.Sleep(tt.reportAt)
					for _, d := range cfg.Domains {
						c.OnReport(wire.DomainReport{Version: wire.Version, Cluster: "c", Domain: d.Name, Seq: 1, SentAt: time.Now(), Mode: wire.ModeActive})
					}
				}
				time.Sleep(tt.want[len(tt.want)-1] + time.Millisecond - time.Since(start))
				synctest.Wait()
				cancel()
				<-done
				if len(ticks) != len(tt.want) {
					t.Fatalf("ticks at %v, want %v", ticks, tt.want)
				}
				for i := range ticks {
					if ticks[i] != tt.want[i] {
						t.Fatalf("ticks at %v, want %v", ticks, tt.want)
					}
				}
			})
		})
	}
}
