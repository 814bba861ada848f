package rl

import "fmt"

// Rollout is a preallocated buffer of consecutive steps of one environment,
// the input of PPO.Update. Add appends a step; Reset empties it. After the
// last step set LastValue to the policy's value of the next observation
// (ignored when the last step is done).
type Rollout struct {
	ObsDim, LatentDim int

	Obs     []float64 // normalised observations, step-major (Cap x ObsDim)
	Latent  []float64 // latent actions, step-major (Cap x LatentDim)
	LogProb []float64 // log-probabilities under the acting policy
	Reward  []float64
	Done    []bool    // the episode ended at this step
	Value   []float64 // the acting policy's values
	Adv     []float64 // advantages, written by PPO.Update
	Ret     []float64 // returns-to-go (value targets), written by PPO.Update

	LastValue float64

	n int
}

// NewRollout returns an empty rollout for capacity steps.
func NewRollout(capacity, obsDim, latentDim int) *Rollout {
	return &Rollout{
		ObsDim:    obsDim,
		LatentDim: latentDim,
		Obs:       make([]float64, capacity*obsDim),
		Latent:    make([]float64, capacity*latentDim),
		LogProb:   make([]float64, capacity),
		Reward:    make([]float64, capacity),
		Done:      make([]bool, capacity),
		Value:     make([]float64, capacity),
		Adv:       make([]float64, capacity),
		Ret:       make([]float64, capacity),
	}
}

// NewRollout returns an empty rollout for capacity steps of p.
func (p *Policy) NewRollout(capacity int) *Rollout {
	return NewRollout(capacity, p.Spec.Obs.Dim(), p.Spec.Action.LatentDim())
}

// Len returns the number of steps held.
func (r *Rollout) Len() int { return r.n }

// Cap returns the capacity in steps.
func (r *Rollout) Cap() int { return len(r.Reward) }

// Full reports whether Len == Cap.
func (r *Rollout) Full() bool { return r.n == len(r.Reward) }

// Reset empties the rollout, keeping its buffers.
func (r *Rollout) Reset() { r.n, r.LastValue = 0, 0 }

// Add appends one step: the action a taken (its Input, Latent, LogProb and
// Value), the reward received and whether the episode ended. It panics when
// the rollout is full or a's sizes differ.
func (r *Rollout) Add(a *Action, reward float64, done bool) {
	if r.n == len(r.Reward) {
		panic("rl: rollout is full")
	}
	if len(a.Input) != r.ObsDim || len(a.Latent) != r.LatentDim {
		panic(fmt.Sprintf("rl: rollout of %d+%d values per step, action has %d+%d", r.ObsDim, r.LatentDim, len(a.Input), len(a.Latent)))
	}
	i := r.n
	copy(r.Obs[i*r.ObsDim:(i+1)*r.ObsDim], a.Input)
	copy(r.Latent[i*r.LatentDim:(i+1)*r.LatentDim], a.Latent)
	r.LogProb[i] = a.LogProb
	r.Value[i] = a.Value
	r.Reward[i] = reward
	r.Done[i] = done
	r.n++
}

// obs returns step i's normalised observation.
func (r *Rollout) obs(i int) []float64 { return r.Obs[i*r.ObsDim : (i+1)*r.ObsDim] }

// latent returns step i's latent action.
func (r *Rollout) latent(i int) []float64 { return r.Latent[i*r.LatentDim : (i+1)*r.LatentDim] }
