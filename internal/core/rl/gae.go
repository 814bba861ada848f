package rl

// GAE computes generalised advantage estimates and returns-to-go for one
// trajectory segment (Schulman et al. 2016, "High-dimensional continuous
// control using generalized advantage estimation", eqs. 11-16), writing
// adv[t] and ret[t] for t < len(rewards). dones[t] means the episode ended
// at step t (terminal: no bootstrap from the next state); lastValue is the
// value of the state after the last step, ignored when the last step is
// done. A time limit that is not a true terminal should not be marked done;
// cut the segment there and pass the next state's value instead. adv and
// ret must have len(rewards) elements; values and dones too.
//
//	delta_t = r_t + gamma (1 - d_t) V(s_{t+1}) - V(s_t)
//	A_t     = delta_t + gamma lambda (1 - d_t) A_{t+1}
//	R_t     = A_t + V(s_t)
func GAE(rewards, values []float64, dones []bool, lastValue, gamma, lambda float64, adv, ret []float64) {
	n := len(rewards)
	if len(values) != n || len(dones) != n || len(adv) != n || len(ret) != n {
		panic("rl: GAE slices differ in length")
	}
	next, a := lastValue, 0.0 // V(s_{t+1}), A_{t+1}
	for t := n - 1; t >= 0; t-- {
		notDone := 1.0
		if dones[t] {
			notDone = 0
		}
		delta := rewards[t] + // r_t
			gamma*notDone*next - // + gamma (1 - d_t) V(s_{t+1})
			values[t] // - V(s_t)
		a = delta + gamma*lambda*notDone*a
		adv[t] = a
		ret[t] = a + values[t]
		next = values[t]
	}
}
