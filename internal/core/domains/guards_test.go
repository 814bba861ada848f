package domains

import (
	"testing"
	"time"
)

func TestSoldierLadderFillsZeroFieldsFromTheTierDefault(t *testing.T) {
	var s Soldier
	s.Ladders[1] = Ladder{Revert: 3, CoolOff: time.Minute}
	s.Ladders[MaxLadderTier] = Ladder{Alert: 1.1, Freeze: 1.2, Revert: 1.3, Sustain: time.Second, CoolOff: time.Second}
	cases := []struct {
		name string
		tier int
		want Ladder
	}{
		{"an unset tier is its default", 0, DefaultLadder(0)},
		{"set fields win, zero fields are the tier's default", 1,
			Ladder{Alert: 1.3, Freeze: 1.3 * 1.25, Revert: 3, Sustain: 30 * time.Second, CoolOff: time.Minute}},
		{"a complete ladder is taken as is", MaxLadderTier, s.Ladders[MaxLadderTier]},
		{"tiers above MaxLadderTier have the last tier's ladder", MaxLadderTier + 3, s.Ladders[MaxLadderTier]},
		{"a negative tier has its default", -1, DefaultLadder(-1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Ladder(tc.tier); got != tc.want {
				t.Errorf("Ladder(%d) = %+v, want %+v", tc.tier, got, tc.want)
			}
		})
	}
}

func TestDefaultLaddersAscend(t *testing.T) {
	for tier := 0; tier <= MaxLadderTier; tier++ {
		l := DefaultLadder(tier)
		if !(1 < l.Alert && l.Alert < l.Freeze && l.Freeze < l.Revert) || l.Sustain <= 0 || l.CoolOff <= 0 {
			t.Errorf("tier %d: %+v does not satisfy 1 < alert < freeze < revert with positive lengths", tier, l)
		}
	}
}

func TestFallbackOrDefaultKeepsOffAndSetFields(t *testing.T) {
	f := Fallback{Off: true, CostMargin: 0.5}.OrDefault()
	want := DefaultFallback()
	want.Off, want.CostMargin = true, 0.5
	if f != want {
		t.Errorf("got %+v, want %+v", f, want)
	}
	var c Config
	c.Defaults()
	first := c.Soldier
	c.Defaults()
	if c.Soldier != first || c.Soldier.Fallback != DefaultFallback() || c.Soldier.Ladders[2] != DefaultLadder(2) {
		t.Errorf("Defaults: soldier %+v, then %+v", first, c.Soldier)
	}
}
