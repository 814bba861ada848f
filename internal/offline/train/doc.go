// Package train trains Regiment's learned policies offline on the simulator
// with PPO (package rl): the Soldier stage (Soldiers against fixed budgets),
// the Commander stage (Soldiers frozen) and joint fine-tuning.
//
// A stage is a curriculum of phases; each phase has its own environments
// (Env) and a number of environment steps. Run collects rollouts from one
// environment per worker, in parallel (one goroutine per worker, each with
// its own Policy clone and *rand.Rand derived from the seed), merges them
// in worker order and makes one PPO update, then prints a progress line.
// Training is deterministic for a seed and a worker count.
//
// Trajectories are cut at every episode end and at the end of each
// rollout; both are time limits, not terminal states, so the value of the
// state after the cut is folded into the last reward (r + gamma V(s')) and
// the step is marked done: GAE over the merged rollout is then exactly GAE
// over each agent's segment with a bootstrap.
//
// After each stage, Evaluate runs the policy's mean action on held-in
// episodes; Gate checks them against the stage's documented gate, and
// Check correlates each reward term and the total with the true outcomes
// (SLO compliance, cost) over those episodes and flags terms that move with
// the reward but not with any outcome (reward gaming).
//
// RunStage is one `regiment train` run from a plain Options: it trains the
// stage, writes the checkpoints, gate.json, check.json and train.csv into
// the output directory and prints the verdicts; the command only parses
// flags, loads the config and scenarios (internal/offline/sim/scenario) and maps errors to
// exit codes.
//
// One pipeline: the environments run the daemons' cores, never a copy of
// them. The Commander stage runs Regiment as the evaluation does
// (simcluster.Policy: commander.Commander and soldier.Soldier); the Soldier
// stage runs one soldier.Soldier per domain over a simcluster.View, whose
// every Tick goes through soldier.Decide, with the trainer's action given
// to the learned policy (soldier.Learned.DecideWith) on the features of the
// input the Soldier's Decide sees (soldier.Soldier.PolicyInput), and its
// learned Commander is a commander.Commander fed the Soldiers' own reports.
// TestSoldierEnvDecidesAsADeployedSoldier pins a training step to a
// deployed Soldier's on the same observation.
//
// Units: durations are simulated time; costs are core-hours; compliance is
// a share of app-ticks in [0, 1].
//
// train imports rl, sim, soldier, commander, simcluster, stats, reward and
// domains; it never imports NATS, bbolt, client-go or HCL (scenarios come
// in decoded, loaded by internal/offline/sim/scenario).
package train
