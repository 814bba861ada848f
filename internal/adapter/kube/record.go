package kube

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/regimentd/regiment/internal/core/domains"
)

// recordOriginal runs before the Actuator's first write to t's object (its
// HPA in hpa-bounds actuation, its workload in replicas): unless the object
// already holds them, it records the object's own spec (AnnotationOriginal,
// never overwritten), the domain (LabelManagedBy) and the lease
// (AnnotationLease), in one update that draws a write token. An object once
// marked is not read again until Reassert or ForgetMarks: a write costs no
// extra request.
func (a *Actuator) recordOriginal(ctx context.Context, t *Target) error {
	ref := a.objectOf(t)
	if a.marked[ref.String()] {
		return nil
	}
	domain := a.cfg.Domain
	if domain == "" {
		domain = "unnamed"
	}
	updated, err := editObject(ctx, a.client, ref, func(m *metav1.ObjectMeta, spec *OriginalSpec) (bool, error) {
		labels, annotations := RecordOriginal(Marks{Labels: m.Labels, Annotations: m.Annotations}, *spec, domain, a.cfg.Lease)
		if labels == nil && annotations == nil {
			return false, nil
		}
		if err := a.limiter.Wait(ctx); err != nil {
			return false, err
		}
		setKeys(&m.Labels, labels)
		setKeys(&m.Annotations, annotations)
		return true, nil
	}, nil) // conflicts (the HPA controller's status writes) are retried, not counted: Conflicts counts actuation writes
	if err != nil {
		return fmt.Errorf("kube: record the original spec of %s: %w", ref, err)
	}
	if updated {
		a.records.Add(1)
	}
	a.marked[ref.String()] = true
	return nil
}

// objectOf is the object the Actuator writes for t.
func (a *Actuator) objectOf(t *Target) objectRef {
	switch {
	case a.cfg.Actuation == domains.ActuateHPABounds:
		return objectRef{Kind: KindHPA, Namespace: t.Namespace, Name: t.HPA}
	case t.Kind == domains.KindStatefulSet:
		return objectRef{Kind: KindStatefulSet, Namespace: t.Namespace, Name: t.Name}
	}
	return objectRef{Kind: KindDeployment, Namespace: t.Namespace, Name: t.Name}
}

// ForgetMarks makes the next write to each object record its original
// again if it is gone: after a restore (mode off, `regiment kube restore`)
// gave the objects back. Safe for concurrent use with Apply.
func (a *Actuator) ForgetMarks() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.marked)
}
