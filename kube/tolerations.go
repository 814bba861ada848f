package kube

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// tolerationEffects are the effects a toleration may name, as a taint does.
var tolerationEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// ParseToleration reads a toleration written in kubectl's taint syntax,
// KEY[=VALUE][:EFFECT] (kubernetes { balloon_tolerations }):
//
//	"dedicated=apps:NoSchedule"  key dedicated, operator Equal, value apps, effect NoSchedule
//	"gpu:NoSchedule"             key gpu, operator Exists (any value), effect NoSchedule
//	"spot"                       key spot, operator Exists, every effect
//
// KEY is a qualified name (a label key), VALUE a label value, not empty
// (write KEY alone to tolerate any value), EFFECT one of
// tolerationEffects. A NoExecute toleration has no tolerationSeconds: it
// tolerates the taint for good. Pure.
func ParseToleration(s string) (corev1.Toleration, error) {
	keyValue, effect, hasEffect := strings.Cut(s, ":")
	key, value, hasValue := strings.Cut(keyValue, "=")
	t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(effect)}
	if msgs := content.IsLabelKey(key); len(msgs) > 0 { // "" too
		return corev1.Toleration{}, fmt.Errorf("kube: toleration %q: key %q is not a qualified name: %s (syntax KEY[=VALUE][:EFFECT], example: \"dedicated=apps:NoSchedule\")",
			s, key, msgs[0])
	}
	if hasValue {
		if value == "" {
			return corev1.Toleration{}, fmt.Errorf("kube: toleration %q: empty value; write %q to tolerate any value of %s", s, key+strings.TrimPrefix(s, keyValue), key)
		}
		if msgs := content.IsLabelValue(value); len(msgs) > 0 {
			return corev1.Toleration{}, fmt.Errorf("kube: toleration %q: value %q is not a label value: %s", s, value, msgs[0])
		}
		t.Operator, t.Value = corev1.TolerationOpEqual, value
	}
	if hasEffect && !slices.Contains(tolerationEffects, t.Effect) {
		return corev1.Toleration{}, fmt.Errorf("kube: toleration %q: unknown effect %q, want one of %v (or none: every effect)", s, effect, tolerationEffects)
	}
	return t, nil
}

// ParseTolerations parses each of specs (ParseToleration), in order; the
// error lists every bad one. None is none. Pure.
func ParseTolerations(specs []string) ([]corev1.Toleration, error) {
	var tols []corev1.Toleration
	var errs []error
	for _, s := range specs {
		t, err := ParseToleration(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		tols = append(tols, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return tols, nil
}
