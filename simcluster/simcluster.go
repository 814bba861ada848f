// Package simcluster runs Regiment itself, the Commander and one Soldier per
// domain, as a sim.Policy (NewPolicy): the same cores as the daemons, with
// directives and reports handed over in memory. Evaluation and training use
// it. The adapter that puts a simulation behind live Soldiers is package
// sim/live.
package simcluster

import (
	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/sim"
	"github.com/regimentd/regiment/sim/live"
)

// Cluster is live.Cluster, kept for callers of this package.
type Cluster = live.Cluster

// Domain is live.Domain, kept for callers of this package.
type Domain = live.Domain

// New is live.New.
//
// Deprecated: use live.New.
func New(s *sim.Sim, cfg *domains.Config) *Cluster { return live.New(s, cfg) }
