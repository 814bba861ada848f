// Package baseline holds the reference policies Regiment is measured against:
// today the static policy, which provisions every app once for its peak.
//
// Policies implement sim.Policy: they are pure functions of the telemetry and
// their own state, take no locks and do no I/O. Package baseline imports only
// domains, sim and the standard library.
package baseline
