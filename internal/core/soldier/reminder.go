package soldier

import "time"

// Reminder says when to tell of a condition that goes on, per key (an
// app's name): when it starts, and again every Every while it lasts, not
// every tick. A key clear for a whole Every starts afresh, so a condition
// that flickers on and off within Every is told once per Every. The zero
// value tells every time; it is not safe for concurrent use.
type Reminder struct {
	Every time.Duration
	last  map[string]time.Time // by key, when it was last told
}

// Tell takes n things on at now, thing i under key(i) ("" for none to
// tell of), and returns the indices of those to tell of now, in order.
func (r *Reminder) Tell(now time.Time, n int, key func(i int) string) (due []int) {
	if r.last == nil {
		r.last = map[string]time.Time{}
	}
	seen := make(map[string]bool, n)
	for i := range n {
		k := key(i)
		if k == "" {
			continue
		}
		seen[k] = true
		if last, ok := r.last[k]; ok && now.Sub(last) < r.Every {
			continue
		}
		r.last[k] = now
		due = append(due, i)
	}
	for k, last := range r.last {
		if !seen[k] && now.Sub(last) >= r.Every {
			delete(r.last, k)
		}
	}
	return due
}
