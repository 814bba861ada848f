// Package commander allocates the contested pool between domains every
// Commander tick (default 60 s).
//
// The core is pure: the Builder turns the Soldiers' latest DomainReports into a
// normalised Observation (layout ObsVersion, names in Layout), a Policy maps it
// to an Action (shares of the pool per domain plus a reserve, urgency and
// headroom per domain), and ApplyGuards applies the operator's rules after any
// policy: floors and ceilings, a maximum change per tick, a relative dead-zone
// whose remainder goes to the reserve, and the reserve minimum. The Commander
// is the shell that ticks, publishes one Directive per domain and records.
//
// Invariants of a Decision: every share is in [floor, ceiling] of its domain
// (floors win when they conflict with the reserve), shares plus Reserve sum
// to 1, and Reserve >= reserve_min whenever floors allow.
//
// Operator overrides (OnOverride, override.go) rank above all of that: after
// ApplyGuards, ApplyPins sets each pinned domain's share exactly, beyond its floor,
// ceiling and max_share_change, and makes room from the unpinned domains,
// lowest priority first, down to their floors for reserve_min, below them only
// if the shares would otherwise pass 1. Pins together never exceed 1 (a pin
// that would is refused), so shares plus Reserve still sum to 1; Reserve may
// fall under reserve_min while pins hold. A pin lapses at its Until.
//
// Concurrency: OnReport may be called from any goroutine; Tick and Run must
// not run concurrently. Package commander never imports NATS, bbolt,
// client-go or HCL.
package commander
