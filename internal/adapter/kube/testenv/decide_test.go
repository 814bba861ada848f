package testenv

import (
	"strings"
	"testing"
)

// TestDecide pins Main's rule: under make test (required) absent binaries
// fail the run naming them and the fix; only -short or an unrequired run
// skips, and its message names RequiredEnv and `make k8s-env`.
func TestDecide(t *testing.T) {
	full := []string{"kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml", "kubectl"}
	all := append([]string{"etcd", "kube-apiserver"}, full...)
	const dir = "/cache/v1.37.2"
	tests := []struct {
		name                      string
		short, required, wantFull bool
		missingFull, missingBasic []string
		want                      plan
		msgHas                    []string // in fail, skip or fullSkip
	}{
		{name: "required and all present starts the full control plane", required: true, wantFull: true,
			want: plan{start: true, full: true}},
		{name: "unrequired and all present starts it too", wantFull: true,
			want: plan{start: true, full: true}},
		{name: "required and nothing built fails naming the binaries and make k8s-env", required: true, wantFull: true,
			missingFull: all, missingBasic: all[:2], want: plan{fail: "x"},
			msgHas: []string{"etcd, kube-apiserver", dir, "make k8s-env", RequiredEnv}},
		{name: "required with only the controllers absent fails, never runs half", required: true, wantFull: true,
			missingFull: full, want: plan{fail: "x"}, msgHas: []string{"kwok", "make k8s-env"}},
		{name: "required basic control plane with the apiserver absent fails", required: true,
			missingFull: all[1:2], missingBasic: all[1:2], want: plan{fail: "x"}, msgHas: []string{"kube-apiserver"}},
		{name: "unrequired and nothing built skips naming the variable and make k8s-env", wantFull: true,
			missingFull: all, missingBasic: all[:2], want: plan{skip: "x"},
			msgHas: []string{"SKIPPED", RequiredEnv, "make k8s-env", dir}},
		{name: "unrequired with only the controllers absent starts the basic plane and skips RequireFull", wantFull: true,
			missingFull: full, want: plan{start: true, fullSkip: "x"}, msgHas: []string{"SKIPPED", RequiredEnv, "make k8s-env"}},
		{name: "-short skips even when required", short: true, required: true, wantFull: true,
			want: plan{skip: "x"}, msgHas: []string{"-short"}},
		{name: "-short skips with binaries absent", short: true, missingFull: all, missingBasic: all[:2],
			want: plan{skip: "x"}, msgHas: []string{"-short"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(tt.short, tt.required, tt.wantFull, tt.missingFull, tt.missingBasic, dir)
			if got.start != tt.want.start || got.full != tt.want.full ||
				(got.fail != "") != (tt.want.fail != "") || (got.skip != "") != (tt.want.skip != "") ||
				(got.fullSkip != "") != (tt.want.fullSkip != "") {
				t.Fatalf("decide = %+v, want the shape of %+v", got, tt.want)
			}
			msg := got.fail + got.skip + got.fullSkip
			for _, s := range tt.msgHas {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not name %q", msg, s)
				}
			}
		})
	}
}

// TestRequired pins which environments make the Kubernetes tests
// required: RequiredEnv=1 (exported by make test) or CI=true.
func TestRequired(t *testing.T) {
	tests := []struct {
		required, ci string
		want         bool
	}{
		{"", "", false},
		{"1", "", true},
		{"true", "", true},
		{"0", "", false},
		{"", "true", true},
		{"", "1", true},
	}
	for _, tt := range tests {
		t.Setenv(RequiredEnv, tt.required)
		t.Setenv("CI", tt.ci)
		if got := Required(); got != tt.want {
			t.Errorf("Required() with %s=%q CI=%q = %v, want %v", RequiredEnv, tt.required, tt.ci, got, tt.want)
		}
	}
}
