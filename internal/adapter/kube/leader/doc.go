// Package leader is leader election on a coordination.k8s.io Lease, with
// client-go's leaderelection: the Commander publishes only while it leads
// (Elect with Config's defaults, the Lease CommanderLease), and the Soldier
// lock (kube.Adapter.Lead, kube.SoldierElection) is the same election on a
// Soldier's lease, handed over on release (Config.HandOver).
//
// Invariant: two candidates never lead at once, provided the leader's
// callback returns soon after its context ends. The leader stops leading
// RenewDeadline after its last successful renewal, before LeaseDuration lets
// a follower take over; on shutdown the lease is released only after the
// callback returned. Durations are time.Duration; the defaults are 15 s
// lease, 10 s renew deadline and 2 s retry period.
//
// Concurrency: Elect may run concurrently with itself (one call per
// candidate); each call blocks until its context ends.
//
// Package leader imports client-go only; it never imports
// internal/adapter/kube or internal/adapter/kube/pool, which may import it.
// Its tests run two and three Commanders over a real etcd and
// kube-apiserver started by internal/adapter/kube/testenv, with an embedded
// nats-server.
package leader
