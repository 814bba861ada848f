// Package promtest serves the Prometheus HTTP API's instant queries from the
// real PromQL engine (Server), for the tests of promclient and of the
// Soldier's Observer (internal/adapter/kube): there is no Prometheus binary
// in the test environment, and its query path is what they read. Series are
// loaded in promqltest's format (Script, Series) and every query is
// evaluated 10 minutes after they start, at the Unix epoch. A Server is
// safe for concurrent use; Fail turns it into an outage.
//
// Only tests import it. Package promtest imports prometheus (promql,
// promqltest, storage) and the standard library.
package promtest
