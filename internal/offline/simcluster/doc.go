// Package simcluster runs Regiment itself, the Commander and one Soldier per
// domain, as a sim.Policy (NewPolicy): the same cores as the daemons, with
// directives and reports handed over in memory. Evaluation and training use
// it. NewIndependent builds the ablation regiment-independent: the same
// Soldiers without the Commander, each handed the whole pool with no
// headroom every Commander tick, and no node plan. View is one domain's
// Observer and Actuator over a simulation, shared with the trainer's
// Soldiers (train.SoldierEnv). The adapter that puts a simulation behind live Soldiers is package
// live.
package simcluster
