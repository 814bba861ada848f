package pool

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/regimentd/regiment/internal/core/domains"
)

func TestTolerations(t *testing.T) {
	got := Tolerations([]domains.Toleration{
		{Key: "dedicated", Value: "apps", Effect: "NoSchedule"},
		{Key: "gpu", Effect: "NoSchedule"},
		{Key: "dedicated", Value: "apps"},
		{Key: "spot"},
		{Key: "node.kubernetes.io/unreachable", Effect: "NoExecute"},
	})
	want := []corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps", Effect: corev1.TaintEffectNoSchedule}, // that taint
		{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},                     // any value
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "apps"},                                       // every effect
		{Key: "spot", Operator: corev1.TolerationOpExists},                                                          // any value and effect
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tolerations = %+v\nwant %+v", got, want)
	}
	if got := Tolerations(nil); got != nil {
		t.Errorf("Tolerations(nil) = %+v, want none", got)
	}
}
