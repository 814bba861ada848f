// Package domains is Regiment's domain model: the contested cluster pool, the
// service domains that share it (priority tier, reward weight, floor and
// ceiling shares, SLO), their app sets, and the scenarios that drive
// simulation.
//
// Invariants of a validated Config (see internal/config): shares are fractions
// of the contested pool in [0, 1] with Floor <= Ceiling and floors summing to
// at most 1; durations are positive; replica bounds satisfy
// 1 <= MinReplicas <= MaxReplicas; dependencies name existing app sets and form
// no cycle. Defaults documents every optional field's default.
//
// Discovered apps (Discover, Config.WithDiscovered): an app's name is a
// function of its workload and the discover block alone, never of the other
// workloads found, so its history keeps one name; a set with Learn has its
// service time learned by its Soldier, ServiceTime being the prior.
//
// The types are plain Go values: nothing here knows about HCL, files or the
// network. Package domains imports only the standard library.
package domains
