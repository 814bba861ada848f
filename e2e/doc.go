// Package e2e holds the process-level tests of Regiment: they build the
// commander, soldier and regiment binaries, run them as separate processes
// against a real nats-server on a loopback port, signal them, and read back
// the bbolt files they leave. The package has no code outside its tests.
//
// The fault tests (faults_test.go, kill9_test.go) kill, restart and cut off
// those processes. One test, TestNATSOutageFiveMinutes, runs the daemons'
// parts in one process instead, in lockstep on a simulated cluster's clock,
// so that an outage of 5 minutes with the shipped timing takes seconds.
//
// The tests take tens of seconds and are skipped with -short. They use
// loopback only and read nothing outside the repository.
package e2e
