package kube

import (
	"fmt"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/regimentd/regiment/internal/adapter/promclient/promtest"
	"github.com/regimentd/regiment/internal/core/domains"
)

// The helpers of the integration tests, for the tests of package kube_test
// (which may import daemon, as kube's own tests cannot).

func CreateDeployment(t *testing.T, c kubernetes.Interface, ns, name string, replicas int32) {
	deployment(t, c, ns, name, replicas, false)
}

func CreateHPA(t *testing.T, c kubernetes.Interface, ns, name string, lo, hi int32) {
	hpa(t, c, ns, name, lo, hi)
}

func SoldierTestConfig(t *testing.T, ns, url string, n int, soldierBlock string) *domains.Config {
	return soldierConfig(t, ns, url, n, soldierBlock)
}

// PromServer answers Prometheus queries from the real PromQL engine over
// the series of the apps set with SetApps (see promtest.Server).
type PromServer struct{ s *promtest.Server }

func NewPromServer(t testing.TB) PromServer { return PromServer{promtest.New(t, "load 15s\n")} }

func (p PromServer) URL() string { return p.s.URL }

// SetApps serves, for each app name (its Deployment; one pod) in ns, rps
// requests per second, all answered within (50 ms, 100 ms], and cpu cores
// used of 1 requested.
func (p PromServer) SetApps(t testing.TB, ns string, names []string, rps, cpu float64) {
	var series []fmt.Stringer
	for _, n := range names {
		series = append(series, appSeries{ns: ns, pod: n + "-6d4cf-x2k4p", ok: rps, cpu: cpu, mem: 100})
	}
	p.s.Load(t, promtest.Script(series...))
}

// WriteAttempts counts every request other than GET made through the
// clients it makes, whatever the answer (writeCounter with attempts).
type WriteAttempts struct{ w *writeCounter }

func NewWriteAttempts() WriteAttempts { return WriteAttempts{&writeCounter{attempts: true}} }

func (a WriteAttempts) Client(t *testing.T, base *rest.Config) kubernetes.Interface {
	return a.w.client(t, base)
}

// Of is the attempts on resources whose name contains any of kinds
// ("deployments" counts "deployments/scale").
func (a WriteAttempts) Of(kinds ...string) int { return a.w.total(kinds...) }

func (a WriteAttempts) String() string { return a.w.String() }
