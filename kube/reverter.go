package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Reverter puts the HPAs of Soldiers that stopped renewing their lease back
// to their safe bounds (AnnotationSafeBounds), so a dead Soldier never leaves
// an app pinned to its last target. The Commander runs one while it leads;
// any peer may: reverting is idempotent.
//
// An HPA is reverted when it carries LabelManaged and its AnnotationLease
// names a lease that does not exist or was last renewed more than its
// duration plus Grace ago. HPAs already at their safe bounds are not
// written. The annotations stay, so the Soldier's next write (it reasserts
// its targets when it renews its lease again) takes the HPA back.
type Reverter struct {
	client kubernetes.Interface
	// Namespaces are searched for managed HPAs; empty: all namespaces.
	Namespaces []string
	// Grace is added to a lease's duration before it counts as lapsed, for
	// clock skew between the Soldier and the Reverter. Default 5s.
	Grace time.Duration
	clock func() time.Time
}

// NewReverter returns a Reverter over namespaces (none: all). It starts nothing.
func NewReverter(client kubernetes.Interface, namespaces []string) *Reverter {
	return &Reverter{client: client, Namespaces: namespaces, Grace: 5 * time.Second, clock: time.Now}
}

// Revert is one HPA put back to its safe bounds.
type Revert struct {
	HPA      string // namespace/name
	Lease    string // the lapsed lease
	Min, Max int32  // the safe bounds written
}

// RevertOnce reverts every managed HPA whose lease has lapsed and returns
// what it wrote. It goes on past errors and returns them joined.
func (r *Reverter) RevertOnce(ctx context.Context) ([]Revert, error) {
	nss := r.Namespaces
	if len(nss) == 0 {
		nss = []string{metav1.NamespaceAll}
	}
	now := r.clock()
	leases := map[string]bool{} // ref -> lapsed
	var done []Revert
	var errs []error
	for _, ns := range nss {
		hpas, err := r.client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelManaged + "=true"})
		if err != nil {
			errs = append(errs, fmt.Errorf("kube: list managed hpas in %q: %w", ns, err))
			continue
		}
		for _, h := range hpas.Items {
			ref := h.Annotations[AnnotationLease]
			lapsed, seen := leases[ref]
			if !seen {
				if lapsed, err = r.lapsed(ctx, ref, now); err != nil {
					errs = append(errs, err)
					continue
				}
				leases[ref] = lapsed
			}
			if !lapsed {
				continue
			}
			lo, hi, err := parseSafeBounds(h.Annotations[AnnotationSafeBounds])
			if err != nil {
				errs = append(errs, fmt.Errorf("kube: hpa %s/%s: %w", h.Namespace, h.Name, err))
				continue
			}
			wrote, err := r.revert(ctx, h.Namespace, h.Name, lo, hi)
			if err != nil {
				errs = append(errs, err)
			} else if wrote {
				done = append(done, Revert{HPA: h.Namespace + "/" + h.Name, Lease: ref, Min: lo, Max: hi})
			}
		}
	}
	return done, errors.Join(errs...)
}

// lapsed reports whether the lease ref ("namespace/name") has lapsed at now.
func (r *Reverter) lapsed(ctx context.Context, ref string, now time.Time) (bool, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" {
		return true, nil // no valid lease: nobody holds the HPA
	}
	le, err := r.client.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("kube: get lease %s: %w", ref, err)
	}
	return expired(le, now, r.Grace), nil
}

func (r *Reverter) revert(ctx context.Context, ns, name string, lo, hi int32) (bool, error) {
	c := r.client.AutoscalingV2().HorizontalPodAutoscalers(ns)
	wrote := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if minOf(h.Spec.MinReplicas) == lo && h.Spec.MaxReplicas == hi {
			return nil
		}
		h.Spec.MinReplicas, h.Spec.MaxReplicas = &lo, hi
		if _, err := c.Update(ctx, h, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			return err
		}
		wrote = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("kube: revert hpa %s/%s to [%d, %d]: %w", ns, name, lo, hi, err)
	}
	return wrote, nil
}

// Run reverts every interval until ctx ends. onRevert, if not nil, sees
// each pass's reverts (when there are any) and errors.
func (r *Reverter) Run(ctx context.Context, interval time.Duration, onRevert func([]Revert, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		done, err := r.RevertOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if onRevert != nil && (len(done) > 0 || err != nil) {
			onRevert(done, err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
