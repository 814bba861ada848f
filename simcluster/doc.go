// Package simcluster runs Regiment itself, the Commander and one Soldier per
// domain, as a sim.Policy (NewPolicy): the same cores as the daemons, with
// directives and reports handed over in memory. Evaluation and training use
// it. The adapter that puts a simulation behind live Soldiers is package
// live.
package simcluster
