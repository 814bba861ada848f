package kube

import (
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/domains"
)

// The helpers of the integration tests, for the tests of package kube_test
// (which may import daemon, as kube's own tests cannot).

func Namespace(t *testing.T, c kubernetes.Interface) string { return namespace(t, c) }

func CreateDeployment(t *testing.T, c kubernetes.Interface, ns, name string, replicas int32) {
	deployment(t, c, ns, name, replicas, false)
}

func CreateHPA(t *testing.T, c kubernetes.Interface, ns, name string, lo, hi int32) {
	hpa(t, c, ns, name, lo, hi)
}

func SoldierTestConfig(t *testing.T, ns, url string, n int, soldierBlock string) *domains.Config {
	return soldierConfig(t, ns, url, n, soldierBlock)
}

// FakePrometheus serves the metrics of apps set with SetApp.
type FakePrometheus struct{ f *fakePrometheus }

func NewFakePrometheus(t testing.TB) FakePrometheus { return FakePrometheus{newFakePrometheus(t)} }

func (p FakePrometheus) URL() string { return p.f.URL }

func (p FakePrometheus) SetApp(ns, name string, rps, p99, errorRate, cpu float64) {
	p.f.setApp(ns, name, rps, p99, errorRate, cpu)
}
