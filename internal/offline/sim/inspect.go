package sim

import "math"

// This file gives evaluation read access to the newest state of a run. None
// of it is on Step's path: a caller that never calls these pays nothing.

// Current is the telemetry of the tick just stepped, without the lag policies
// see (Telemetry is TelemetryLag old). Evaluation samples it; a policy must
// not. It is owned by the simulator and valid until the next Step.
func (s *Sim) Current() *Telemetry { return &s.tel[s.step%len(s.tel)] }

// DomainTicks is the tally behind domain di's SLOCompliance in Metrics so far:
// app-ticks with traffic and, of those, app-ticks over the SLO latency or
// error budget. Summing it over domains gives compliance over any group of
// them (a priority tier): 1 - breached / withTraffic.
func (s *Sim) DomainTicks(di int) (withTraffic, breached float64) {
	return s.metric.appTicks[di], s.metric.breaches[di]
}

// AddCascades adds, for each domain di, the number of its apps cascading at
// the tick just stepped to perDomain[di] (len(perDomain) >= number of
// domains). An app cascades when it has traffic and is in breach of its
// domain's SLO (p99 over the latency objective or error rate over the error
// budget), its own queue alone meets the SLO, and at least one of its callees
// is in breach of the callee's domain's SLO: a callee's breach pushed it over.
//
// The app's own figures are its response time and errors without its
// callees': the p99 is the app's p99 minus the sum of its callees' p99s
// (queue adds them up), and the error rate is P(response > timeout - wait) of
// its own queue, 1 when it has no ready replica. It does not allocate.
func (s *Sim) AddCascades(perDomain []int) {
	for i := range s.apps {
		a := &s.apps[i]
		if len(a.deps) == 0 || a.lambda <= 0 {
			continue
		}
		d := &s.doms[a.domain]
		if a.p99 <= d.slo && a.errs <= d.budget {
			continue
		}
		calleeP99, calleeBreach := 0.0, false
		for _, id := range a.deps {
			c := &s.apps[id]
			calleeP99 += c.p99
			cd := &s.doms[c.domain]
			if c.lambda > 0 && (c.p99 > cd.slo || c.errs > cd.budget) {
				calleeBreach = true
			}
		}
		if !calleeBreach {
			continue
		}
		if s.ownBreach(a, &s.mixNow().apps[i], d, calleeP99) {
			continue
		}
		perDomain[a.domain]++
	}
}

// ownBreach reports whether app a's own queue (m, its sojourn and shift),
// without the calleeP99 its callees add, is over domain d's SLO.
func (s *Sim) ownBreach(a *app, m *mixApp, d *dom, calleeP99 float64) bool {
	if a.ready*a.conc == 0 {
		return true // nobody serves: every request times out
	}
	if a.p99-calleeP99 > d.slo {
		return true
	}
	wait := math.Max(0, m.shift-calleeP99)
	late, _ := m.soj.survival(a.timeout - wait)
	return math.Min(1, late) > d.budget
}
