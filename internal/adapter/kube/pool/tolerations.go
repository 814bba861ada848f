package pool

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Tolerations are ts as Kubernetes writes them: a toleration with a value is
// operator Equal, one without is Exists (any value); one without an effect
// tolerates every effect. A NoExecute toleration has no tolerationSeconds: it
// tolerates the taint for good. None is none. Pure: the config has checked
// the grammar (kubernetes { balloon_tolerations }).
func Tolerations(ts []domains.Toleration) []corev1.Toleration {
	if len(ts) == 0 {
		return nil
	}
	out := make([]corev1.Toleration, len(ts))
	for i, t := range ts {
		out[i] = corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(t.Effect)}
		if t.Value != "" {
			out[i].Operator, out[i].Value = corev1.TolerationOpEqual, t.Value
		}
	}
	return out
}
