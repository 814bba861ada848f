// Package live puts a simulation behind the Soldier's Observer and Actuator
// roles, so that live Soldiers (in `regiment run` or the soldier daemon)
// drive a simulated cluster exactly as they would drive Kubernetes: it is
// the simulated counterpart of package kube, the cluster adapter a Soldier
// process is given. Like a real cluster it has its own HPAs
// (baseline.ClusterHPA): they scale the apps of domains in recommend mode,
// whose Soldiers write nothing, at the start of each Step.
//
// A Cluster is safe for concurrent use: every Soldier's Observe and Apply and
// the driver's Step take one lock. It imports domains, sim, soldier, baseline
// and the standard library.
package live
