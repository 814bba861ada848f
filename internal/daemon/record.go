package daemon

import (
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
)

// RecordFailuresDegraded is how many writes to the store in a row must fail
// (step batches or ledger entries: about one per tick) before /readyz
// reports the process degraded. One success makes it ready again.
const RecordFailuresDegraded = 3

// recordHealth follows the writes of a process's recorder: it counts what
// was lost in regiment_<component>_record_failures_total, logs a failure
// once when a streak starts (Warn), once when the streak makes the process
// degraded (Error) and once when a write succeeds again (Info), never per
// tick above Debug, and answers /readyz.
type recordHealth struct {
	log    hclog.Logger
	failed prometheus.Counter

	mu     sync.Mutex
	hooked bool // the Appender reports each write (follow)
	streak int  // writes failed in a row
	lost   int  // steps and entries lost in this streak
}

func newRecordHealth(reg prometheus.Registerer, component string, log hclog.Logger) *recordHealth {
	h := &recordHealth{log: log, failed: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "regiment_" + component + "_record_failures_total",
		Help: "Steps and ledger entries that could not be written to the store (lost: the disk is full, the file is damaged or closed).",
	})}
	reg.MustRegister(h.failed)
	return h
}

// lostBy is how many records err lost: a WriteError's steps (every one of
// them, also in errors.Join), else the one record that failed.
func lostBy(err error) int {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		n := 0
		for _, e := range joined.Unwrap() {
			n += lostBy(e)
		}
		return n
	}
	var we *store.WriteError
	if errors.As(err, &we) {
		return we.Steps
	}
	return 1
}

// fail counts what a failed write lost (the recorder's Err, which sees
// every error). A lost step batch makes the streak longer through wrote when
// the Appender reports its writes (hooked), else here.
func (h *recordHealth) fail(err error) {
	n := lostBy(err)
	h.failed.Add(float64(n))
	var we *store.WriteError
	h.mu.Lock()
	h.lost += n
	hooked := h.hooked
	h.mu.Unlock()
	if hooked && errors.As(err, &we) {
		return
	}
	h.failedWrite(err)
}

// failedWrite makes the streak one longer and logs its start and the
// moment it makes the process degraded.
func (h *recordHealth) failedWrite(err error) {
	h.mu.Lock()
	h.streak++
	streak := h.streak
	h.mu.Unlock()
	switch streak {
	case 1:
		h.log.Warn("record failed: steps are being lost", "error", err)
	case RecordFailuresDegraded:
		h.log.Error("record failing: readyz reports degraded", "failures", streak, "error", err)
	default:
		h.log.Debug("record failed", "error", err)
	}
}

// ok ends a streak: a write succeeded.
func (h *recordHealth) ok() {
	h.mu.Lock()
	streak, lost := h.streak, h.lost
	h.streak, h.lost = 0, 0
	h.mu.Unlock()
	if streak > 0 {
		h.log.Info("record succeeded again", "failures", streak, "lost", lost)
	}
}

// wrote is a store Appender's OnWrite: the outcome of each batch.
func (h *recordHealth) wrote(_ int, err error) {
	if err != nil {
		h.failedWrite(err)
		return
	}
	h.ok()
}

// degraded is /readyz's reason, "" while recording works.
func (h *recordHealth) degraded() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streak >= RecordFailuresDegraded {
		return fmt.Sprintf("degraded: the last %d writes to the store failed (%d records lost); see the log and regiment_*_record_failures_total", h.streak, h.lost)
	}
	return ""
}

// follow reports out's writes to h when it is a store Appender of the
// process's own (shared: a simulation's, reported to by every process of
// it, so not hooked): then every batch's outcome moves the streak.
// Otherwise only failures reach h, through the recorder's Err, and an
// Append that returns nil ends a streak.
func (h *recordHealth) follow(out recording.Appender, own bool) recording.Appender {
	if a, ok := out.(*store.Appender); ok && own && a != nil {
		h.mu.Lock()
		h.hooked = true
		h.mu.Unlock()
		a.OnWrite(h.wrote)
		return out
	}
	return healthAppender{out: out, h: h}
}

type healthAppender struct {
	out recording.Appender
	h   *recordHealth
}

func (a healthAppender) Append(st store.Step) error {
	err := a.out.Append(st)
	if err == nil {
		a.h.ok()
	}
	return err
}
