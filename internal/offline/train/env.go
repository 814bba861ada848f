package train

import (
	"math/rand/v2"

	"github.com/regimentd/regiment/internal/core/rl"
)

// Env is one simulated environment of one policy level (Soldier or
// Commander). Its agents share one policy: each agent gets its own
// observation and action every step (a Soldier env's agents are the app
// groups of every domain; a Commander env has one agent).
//
// An Env is used by one goroutine at a time; the trainer gives every worker
// its own. Randomness comes only from the *rand.Rand passed to Reset (or
// held from it), so an env is deterministic for a seed.
type Env interface {
	// Spec is the env's fixed shape; it must not change between calls.
	Spec() Spec
	// Reset starts an episode and writes each agent's first observation
	// into obs[agent] (len Spec().Obs.Dim()).
	Reset(r *rand.Rand, obs [][]float64)
	// Step applies act[agent] (rl.Action.Env of each agent: Gaussian values
	// as sampled, Simplex shares summing to 1), advances one decision step
	// and writes each agent's reward into rew[agent] and next observation
	// into obs[agent]. done says the episode ended on its time limit; obs
	// then still holds the final observation, from which the trainer
	// bootstraps the value (a time limit is not a terminal state), and the
	// next call is Reset. out describes the step for the reward-outcome
	// check; its Terms slice is owned by the env and valid until the next
	// Step. Step should not allocate.
	Step(act [][]float64, obs [][]float64, rew []float64) (done bool, out Outcome)
}

// Spec is an Env's shape.
type Spec struct {
	Obs    rl.Layout       // one agent's observation
	Act    rl.ActionLayout // one agent's action
	Agents int             // agents acting each step, >= 1
	// Terms names the reward terms reported in Outcome.Terms, in order
	// (e.g. reward.SoldierBreakdown's "adherence", "utilisation", ...).
	Terms []string
}

// Outcome is what one Env step did, in true outcomes and in reward terms,
// for the reward-outcome check (see Check).
type Outcome struct {
	// Terms are the step's reward terms, unweighted, averaged over agents,
	// in Spec.Terms order.
	Terms []float64
	// Compliance is the share of the step's app-ticks whose p99 and error
	// rate met their SLO, in [0, 1].
	Compliance float64
	// CostCoreHours is the CPU requested during the step, in core-hours.
	CostCoreHours float64
	// Actions is the number of replica changes written during the step.
	Actions int
}
