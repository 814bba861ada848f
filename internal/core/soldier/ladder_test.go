package soldier

import (
	"testing"
	"time"
)

func TestLadderRungs(t *testing.T) {
	p0 := DefaultLadder(0)
	type obs struct {
		at time.Duration
		r  float64
	}
	tests := []struct {
		name string
		cfg  LadderConfig
		seq  []obs
		want Rung
	}{
		{"healthy stays at none", p0, []obs{{0, 0.5}, {10 * time.Second, 0.9}, {20 * time.Second, 1.1}}, RungNone},
		{"a blip shorter than the sustain window does not alert", p0, []obs{{0, 1.3}, {10 * time.Second, 0.9}, {20 * time.Second, 1.3}}, RungNone},
		{"1.2x sustained 15s alerts P0", p0, []obs{{0, 1.25}, {10 * time.Second, 1.25}, {20 * time.Second, 1.25}}, RungAlert},
		{"1.5x sustained freezes P0", p0, []obs{{0, 1.6}, {10 * time.Second, 1.6}, {20 * time.Second, 1.6}}, RungFreeze},
		{"2x sustained reverts P0", p0, []obs{{0, 2.5}, {10 * time.Second, 2.5}, {20 * time.Second, 2.5}}, RungRevert},
		{"P1 needs 1.3x for 30s", DefaultLadder(1), []obs{{0, 1.25}, {20 * time.Second, 1.25}, {40 * time.Second, 1.25}}, RungNone},
		{"P1 alerts at 1.3x after 30s", DefaultLadder(1), []obs{{0, 1.35}, {20 * time.Second, 1.35}, {30 * time.Second, 1.35}}, RungAlert},
		{"P3 alerts at 1.5x after 45s", DefaultLadder(3), []obs{{0, 1.55}, {30 * time.Second, 1.55}, {45 * time.Second, 1.55}}, RungAlert},
		{"cool-off steps down one rung", p0, []obs{{0, 2.5}, {20 * time.Second, 2.5}, {30 * time.Second, 0.5}, {5*time.Minute + 31*time.Second, 0.5}}, RungFreeze},
		{"no step down before the cool-off ends", p0, []obs{{0, 2.5}, {20 * time.Second, 2.5}, {30 * time.Second, 0.5}, {4 * time.Minute, 0.5}}, RungRevert},
		{"a relapse restarts the cool-off", p0, []obs{{0, 1.3}, {20 * time.Second, 1.3}, {30 * time.Second, 0.5}, {4 * time.Minute, 1.25}, {6 * time.Minute, 0.5}, {10 * time.Minute, 0.5}}, RungAlert},
		{"full recovery after one cool-off per rung", p0, []obs{{0, 1.3}, {20 * time.Second, 1.3}, {30 * time.Second, 0.5}, {5*time.Minute + 31*time.Second, 0.5}}, RungNone},
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLadder(tt.cfg)
			var got Rung
			for _, o := range tt.seq {
				got, _ = l.Observe(t0.Add(o.at), o.r)
			}
			if got != tt.want {
				t.Fatalf("rung %s, want %s", got, tt.want)
			}
		})
	}
}
