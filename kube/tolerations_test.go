package kube

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/regimentd/regiment/domains/config"
)

// goodTolerations are tolerations in kubectl's taint syntax and what they read as.
var goodTolerations = []struct {
	rule, spec string
	want       corev1.Toleration
}{
	{"key, value and effect tolerate that taint", "dedicated=apps:NoSchedule",
		corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps", Effect: corev1.TaintEffectNoSchedule}},
	{"no value tolerates any value", "gpu:NoSchedule",
		corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	{"no effect tolerates every effect", "dedicated=apps",
		corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps"}},
	{"a key alone tolerates any value and effect", "spot",
		corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists}},
	{"a prefixed key", "example.com/pool=batch-1:PreferNoSchedule",
		corev1.Toleration{Key: "example.com/pool", Operator: corev1.TolerationOpEqual, Value: "batch-1", Effect: corev1.TaintEffectPreferNoSchedule}},
	{"NoExecute", "node.kubernetes.io/unreachable:NoExecute",
		corev1.Toleration{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
}

// badTolerations are refused, with an error containing want.
var badTolerations = []struct{ rule, spec, want string }{
	{"an empty entry", "", `key "" is not a qualified name`},
	{"no key", ":NoSchedule", `key "" is not a qualified name`},
	{"no key before the value", "=apps:NoSchedule", `key "" is not a qualified name`},
	{"a key with a space", "dedi cated=apps", `key "dedi cated" is not a qualified name`},
	{"a key ending in a dash", "gpu-:NoSchedule", `key "gpu-" is not a qualified name`},
	{"a key of two slashes", "a/b/c", `key "a/b/c" is not a qualified name`},
	{"a key name over 63 characters", strings.Repeat("k", 64), "is not a qualified name"},
	{"an empty value", "gpu=:NoSchedule", `empty value; write "gpu:NoSchedule"`},
	{"an empty value without effect", "gpu=", `empty value; write "gpu"`},
	{"a value with a slash", "dedicated=apps/web", `value "apps/web" is not a label value`},
	{"a second equals sign", "dedicated=apps=web", `value "apps=web" is not a label value`},
	{"a value over 63 characters", "k=" + strings.Repeat("v", 64), "is not a label value"},
	{"an unknown effect", "gpu:NoScheduling", `unknown effect "NoScheduling"`},
	{"effects are case-sensitive", "gpu:noschedule", `unknown effect "noschedule"`},
	{"an empty effect", "gpu:", `unknown effect ""`},
	{"a second colon", "gpu:NoSchedule:NoExecute", `unknown effect "NoSchedule:NoExecute"`},
}

func TestParseToleration(t *testing.T) {
	for _, tt := range goodTolerations {
		got, err := ParseToleration(tt.spec)
		if err != nil || got != tt.want {
			t.Errorf("%s: ParseToleration(%q) = %+v, %v; want %+v", tt.rule, tt.spec, got, err, tt.want)
		}
	}
}

func TestParseTolerationRefuses(t *testing.T) {
	for _, tt := range badTolerations {
		_, err := ParseToleration(tt.spec)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `toleration "`+tt.spec+`"`) {
			t.Errorf("%s: ParseToleration(%q) error %v, want one naming the entry and %q", tt.rule, tt.spec, err, tt.want)
		}
	}
}

func TestParseTolerations(t *testing.T) {
	got, err := ParseTolerations([]string{"dedicated=apps:NoSchedule", "spot"})
	want := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps", Effect: corev1.TaintEffectNoSchedule},
		{Key: "spot", Operator: corev1.TolerationOpExists}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseTolerations = %+v, %v; want %+v in order", got, err, want)
	}
	if got, err := ParseTolerations(nil); err != nil || got != nil {
		t.Errorf("ParseTolerations(nil) = %+v, %v; want none", got, err)
	}
	_, err = ParseTolerations([]string{"gpu:Never", "spot", "a b"})
	if err == nil || !strings.Contains(err.Error(), `"gpu:Never"`) || !strings.Contains(err.Error(), `"a b"`) {
		t.Errorf("ParseTolerations error %v, want both bad entries named", err)
	}
}

// The config refuses exactly the balloon_tolerations entries
// ParseToleration refuses, so the Commander never meets one it cannot read.
func TestConfigAndParseTolerationAgree(t *testing.T) {
	var specs []string
	for _, tt := range goodTolerations {
		specs = append(specs, tt.spec)
	}
	for _, tt := range badTolerations {
		specs = append(specs, tt.spec)
	}
	for _, spec := range specs {
		src := fmt.Sprintf("cluster \"k\" {\n  capacity_cores = 10\n}\nkubernetes {\n  balloon_tolerations = [%q]\n}\n"+
			"domain \"d\" {\n  slo { latency_p99 = \"100ms\" }\n  apps \"a\" {\n    cpu_per_replica = 1\n    service_time = \"10ms\"\n  }\n}\n", spec)
		_, cfgErr := config.Parse([]byte(src), "k.hcl")
		_, err := ParseToleration(spec)
		if (cfgErr == nil) != (err == nil) {
			t.Errorf("balloon_tolerations = [%q]: config says %v, ParseToleration says %v", spec, cfgErr, err)
		}
	}
}
