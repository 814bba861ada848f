package kube

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// objectRef names one object Regiment writes.
type objectRef struct {
	Kind            ObjectKind
	Namespace, Name string
}

func (r objectRef) String() string { return string(r.Kind) + " " + r.Namespace + "/" + r.Name }

// editFunc changes an object's metadata and the spec Regiment writes in
// place and reports whether anything changed (then the object is updated).
type editFunc func(meta *metav1.ObjectMeta, spec *OriginalSpec) (changed bool, err error)

// editObject reads ref, lets edit change it and updates it when edit says
// so, retrying on resourceVersion conflicts (each counted by onConflict, if
// not nil). It reports whether it updated the object.
func editObject(ctx context.Context, client kubernetes.Interface, ref objectRef, edit editFunc, onConflict func()) (bool, error) {
	switch ref.Kind {
	case KindHPA:
		c := client.AutoscalingV2().HorizontalPodAutoscalers(ref.Namespace)
		return editTyped(ctx, ref.Name, c.Get, c.Update, hpaAccess, edit, onConflict)
	case KindStatefulSet:
		c := client.AppsV1().StatefulSets(ref.Namespace)
		return editTyped(ctx, ref.Name, c.Get, c.Update, statefulSetAccess, edit, onConflict)
	default:
		c := client.AppsV1().Deployments(ref.Namespace)
		return editTyped(ctx, ref.Name, c.Get, c.Update, deploymentAccess, edit, onConflict)
	}
}

// access reads and writes the metadata and Regiment's part of the spec of
// objects of type T.
type access[T any] struct {
	meta  func(T) *metav1.ObjectMeta
	read  func(T) OriginalSpec // copies
	write func(T, OriginalSpec)
}

var (
	hpaAccess = access[*autoscalingv2.HorizontalPodAutoscaler]{
		meta: func(h *autoscalingv2.HorizontalPodAutoscaler) *metav1.ObjectMeta { return &h.ObjectMeta },
		read: func(h *autoscalingv2.HorizontalPodAutoscaler) OriginalSpec {
			return OriginalSpec{MinReplicas: copyInt32(h.Spec.MinReplicas), MaxReplicas: copyInt32(&h.Spec.MaxReplicas)}
		},
		write: func(h *autoscalingv2.HorizontalPodAutoscaler, s OriginalSpec) {
			h.Spec.MinReplicas = copyInt32(s.MinReplicas)
			if s.MaxReplicas != nil {
				h.Spec.MaxReplicas = *s.MaxReplicas
			}
		},
	}
	deploymentAccess = access[*appsv1.Deployment]{
		meta:  func(d *appsv1.Deployment) *metav1.ObjectMeta { return &d.ObjectMeta },
		read:  func(d *appsv1.Deployment) OriginalSpec { return OriginalSpec{Replicas: copyInt32(d.Spec.Replicas)} },
		write: func(d *appsv1.Deployment, s OriginalSpec) { d.Spec.Replicas = copyInt32(s.Replicas) },
	}
	statefulSetAccess = access[*appsv1.StatefulSet]{
		meta:  func(d *appsv1.StatefulSet) *metav1.ObjectMeta { return &d.ObjectMeta },
		read:  func(d *appsv1.StatefulSet) OriginalSpec { return OriginalSpec{Replicas: copyInt32(d.Spec.Replicas)} },
		write: func(d *appsv1.StatefulSet, s OriginalSpec) { d.Spec.Replicas = copyInt32(s.Replicas) },
	}
)

func editTyped[T any](ctx context.Context, name string,
	get func(context.Context, string, metav1.GetOptions) (T, error),
	update func(context.Context, T, metav1.UpdateOptions) (T, error),
	acc access[T], edit editFunc, onConflict func(),
) (bool, error) {
	updated := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec := acc.read(obj)
		changed, err := edit(acc.meta(obj), &spec)
		if err != nil || !changed {
			return err
		}
		acc.write(obj, spec)
		_, err = update(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager})
		if apierrors.IsConflict(err) && onConflict != nil {
			onConflict()
		}
		updated = err == nil
		return err
	})
	return updated, err
}

func copyInt32(p *int32) *int32 {
	if p == nil {
		return nil
	}
	n := *p
	return &n
}

// setKeys sets add's keys in *m, making the map if needed.
func setKeys(m *map[string]string, add map[string]string) {
	if len(add) == 0 {
		return
	}
	if *m == nil {
		*m = map[string]string{}
	}
	for k, v := range add {
		(*m)[k] = v
	}
}
