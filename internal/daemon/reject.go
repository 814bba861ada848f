package daemon

import (
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/wire"
)

// rejectLog logs rejected directives: replayed and stale ones, which a real
// Commander's traffic produces (a directive delivered twice or late), at
// Debug; every other reason at Warn, at most once per interval per reason
// with the number left unlogged since, so a flood of forged messages cannot
// flood the log.
type rejectLog struct {
	logger hclog.Logger
	every  time.Duration

	mu      sync.Mutex
	last    map[string]time.Time
	dropped map[string]int
}

func newRejectLog(log hclog.Logger, every time.Duration) *rejectLog {
	return &rejectLog{logger: log, every: every, last: map[string]time.Time{}, dropped: map[string]int{}}
}

func (r *rejectLog) log(reason string, kv ...any) {
	if reason == wire.RejectReplayed || reason == wire.RejectStale {
		r.logger.Debug("directive rejected", append([]any{"reason", reason}, kv...)...)
		return
	}
	now := time.Now()
	r.mu.Lock()
	if t, ok := r.last[reason]; ok && now.Sub(t) < r.every {
		r.dropped[reason]++
		r.mu.Unlock()
		return
	}
	r.last[reason] = now
	n := r.dropped[reason]
	r.dropped[reason] = 0
	r.mu.Unlock()
	r.logger.Warn("directive rejected", append([]any{"reason", reason, "unlogged_since", n}, kv...)...)
}
