package commander

import "math"

// Urgency: how fast a domain's Soldier should move toward its budget, in
// [0, 1]: the largest of three pressures, each 0 when the domain is at ease
// and 1 when it is at the limit the Forecast policy treats as an emergency:
//
//	latency  = (p99 / SLO - urgencyLatencyFrom) / urgencyLatencySpan
//	errors   = error rate / error budget - 1
//	forecast = urgencyForecastGain x (p80 forecast at the first horizon, +5 min - rps) / max(rps, 1)
//	urgency  = clamp(max(latency, errors, forecast), 0, 1)
//
// Source: the values are the Forecast heuristic's own choice, set with it in
// the first Commander (commit e0d6ffc, "commander, simcluster, recording,
// daemon wiring and regiment run"), not fitted to data. The latency term
// starts at 80% of the SLO and reaches 1 at 1.2x the SLO, the P0 rollback
// ladder's alert threshold (domains.DefaultLadder); the error term reaches 1
// at twice the error budget; the forecast term reaches 1 when the +5 min
// p80 forecast is 50% above the current rate. No shipped Soldier policy
// reads urgency (it is published and recorded, and the learned Commander's
// residual shifts its logit), so these constants change no replica count.
const (
	urgencyLatencyFrom  = 0.8 // p99 / SLO at which latency pressure starts
	urgencyLatencySpan  = 0.4 // p99 / SLO above urgencyLatencyFrom at which it is 1
	urgencyForecastGain = 2   // 1 / the relative forecast growth at which forecast pressure is 1
)

// urgency is d's urgency (see the constants above).
func urgency(d *DomainObs) float64 {
	return clamp(math.Max(math.Max((d.P99/d.SLO-urgencyLatencyFrom)/urgencyLatencySpan, d.ErrorRate/d.ErrorBudget-1),
		urgencyForecastGain*(d.ForecastP80[0]-d.RPS)/math.Max(d.RPS, 1)), 0, 1)
}
