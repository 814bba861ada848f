package kube

import (
	"fmt"
	"testing"

	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
)

// SetAppRates serves, for each app name (its Deployment; one pod) in ns,
// its own request rate rps[i] per second, all answered within (50 ms,
// 100 ms], and cpu cores used of 1 requested.
func (p PromServer) SetAppRates(t testing.TB, ns string, names []string, rps []float64, cpu float64) {
	series := make([]fmt.Stringer, len(names))
	for i, n := range names {
		series[i] = appSeries{ns: ns, pod: n + "-6d4cf-x2k4p", ok: rps[i], cpu: cpu, mem: 100}
	}
	p.s.Load(t, promtest.Script(series...))
}
