package soldier

import (
	"slices"
	"testing"
	"time"
)

// TestReminderTellsAtTheStartAndEveryRepeat: a key is told when it comes
// on and again once Every has passed while it stays on; a flicker within
// Every is not told again, a return after a whole Every clear is.
func TestReminderTellsAtTheStartAndEveryRepeat(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := Reminder{Every: 10 * time.Minute}
	steps := []struct {
		at   time.Duration
		on   []string
		want []string
	}{
		{0, []string{"a"}, []string{"a"}},
		{10 * time.Second, []string{"a", "b"}, []string{"b"}},
		{5 * time.Minute, nil, nil},                                // both clear
		{6 * time.Minute, []string{"a"}, nil},                      // a flickers back within 10 minutes
		{10 * time.Minute, []string{"a"}, []string{"a"}},           // 10 minutes on: told again
		{16 * time.Minute, []string{"b"}, []string{"b"}},           // b last told at 10 s: told again
		{16*time.Minute + 10*time.Second, []string{"b", "a"}, nil}, // a told at 10 min, within Every
	}
	for _, s := range steps {
		if got := tell(&r, t0.Add(s.at), s.on); !slices.Equal(got, s.want) {
			t.Errorf("at %v with %v on: told %v, want %v", s.at, s.on, got, s.want)
		}
	}
	var zero Reminder
	for i := range 3 {
		if got := tell(&zero, t0, []string{"a", ""}); !slices.Equal(got, []string{"a"}) {
			t.Errorf("zero Reminder, call %d: told %v, want [a]", i, got)
		}
	}
}

// tell is r.Tell over keys, with the keys it returns.
func tell(r *Reminder, now time.Time, keys []string) (due []string) {
	for _, i := range r.Tell(now, len(keys), func(i int) string { return keys[i] }) {
		due = append(due, keys[i])
	}
	return due
}
