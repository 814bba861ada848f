package soldier

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Reasons an app is not written, as AppFailure.Reason and Failing.Reason.
const (
	// FailNotFound: the app's workload (or, in hpa-bounds, its HPA) is not
	// in the cluster. The observation says so (AppObservation.Missing) and
	// the app is not written until it is back.
	FailNotFound = "not_found"
	// FailDenied: the write was refused by admission (a webhook, a
	// ValidatingAdmissionPolicy) or by authorisation.
	FailDenied = "denied"
	// FailConflict: the write still conflicted after the actuator's retries.
	FailConflict = "conflict"
	// FailError: any other failure of one app's write.
	FailError = "error"
	// FailForeignOwner: the actuator found, at the write, another
	// controller setting the app's replicas (the observation had not yet
	// shown it; from the next tick the executor holds the app).
	FailForeignOwner = "foreign_owner"
)

// MaxRetryDelay caps the backoff between two attempts to write an app whose
// writes fail: 5 minutes, at least one tick.
const MaxRetryDelay = 5 * time.Minute

// AppFailure is one app's write that failed, as an Actuator reports it.
type AppFailure struct {
	App    int    // index in the domain
	Reason string // a Fail* reason
	Err    error
}

// WriteErrors is the error an Actuator returns when some apps' writes
// failed and every other change was made. An Actuator that returns any
// other error made none of the changes it was given, as far as it knows.
type WriteErrors []AppFailure

func (w WriteErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d apps not written", len(w))
	for i, f := range w {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(w)-i)
			break
		}
		fmt.Fprintf(&b, "; app %d (%s): %v", f.App, f.Reason, f.Err)
	}
	return b.String()
}

// Unwrap is every app's error.
func (w WriteErrors) Unwrap() []error {
	errs := make([]error, len(w))
	for i, f := range w {
		errs[i] = f.Err
	}
	return errs
}

// Failing is an app the Soldier could not write at a tick, and why: its
// write failed (this tick or an earlier one, and it waits out its backoff)
// or its workload is not in the cluster.
type Failing struct {
	App    int    // index in the domain
	Reason string // a Fail* reason
	Detail string // the error, one line
	Target int32  // replicas the Soldier wanted and did not write
	// Failures counts the app's consecutive failed writes; 0 for an app not
	// found, which is not tried.
	Failures int
	// RetryIn is the ticks until the next attempt: 0 tries at the next tick.
	RetryIn int
}

// RetryDelay is the ticks from a failed write to the next attempt after
// failures consecutive failures: 1, 2, 4, ... doubling, capped at limit
// (>= 1).
func RetryDelay(failures, limit int) int {
	limit = max(limit, 1)
	if failures <= 1 {
		return 1
	}
	if failures > 30 {
		return limit
	}
	return min(1<<(failures-1), limit)
}

// retryLimit is MaxRetryDelay in ticks of length tick.
func retryLimit(tick time.Duration) int {
	if tick <= 0 {
		return 1
	}
	return max(1, int(MaxRetryDelay/tick))
}

// splitFailures turns an Actuator's error for changes into the apps that
// failed: every app of a WriteErrors, else every change, with the error to
// return (nil for a WriteErrors: the others were written).
func splitFailures(err error, changes []Change) ([]AppFailure, error) {
	if err == nil {
		return nil, nil
	}
	var we WriteErrors
	if errors.As(err, &we) {
		return we, nil
	}
	out := make([]AppFailure, len(changes))
	for k, c := range changes {
		out[k] = AppFailure{App: c.App, Reason: FailError, Err: err}
	}
	return out, err
}

// oneLine is err's message on one line, for records and events.
func oneLine(err error) string {
	if err == nil {
		return ""
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
