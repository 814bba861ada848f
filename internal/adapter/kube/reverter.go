package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/core/domains"
)

// Reverter gives back the objects of Soldiers that stopped renewing their
// lease, so a dead Soldier never leaves an app pinned to its last target.
// The Commander runs one while it leads; any peer may: reverting is
// idempotent.
//
// An object (an HPA in hpa-bounds actuation, a Deployment or StatefulSet in
// replicas) is reverted when it carries Regiment's marks (LabelManagedBy, or
// LabelManaged on an HPA an older Regiment bounded) and its AnnotationLease
// names a lease that does not exist or was last renewed more than its
// duration plus Grace ago. An object with an original spec
// (AnnotationOriginal) gets it back and loses Regiment's labels and
// annotations; the Soldier records its original again before its next
// write (it reasserts its targets when it renews its lease again). An HPA
// without one, bounded by an older Regiment, goes to its safe bounds
// (AnnotationSafeBounds) and keeps its marks. See PlanRestore.
type Reverter struct {
	client kubernetes.Interface
	// Namespaces are searched for marked objects; empty: all namespaces.
	Namespaces []string
	// Kinds are the kinds of objects searched; empty: all three. See
	// RevertKinds.
	Kinds []ObjectKind
	// Grace is added to a lease's duration before it counts as lapsed, for
	// clock skew between the Soldier and the Reverter. Default 5s.
	Grace time.Duration
	clock func() time.Time
}

// NewReverter returns a Reverter over namespaces (none: all). It starts nothing.
func NewReverter(client kubernetes.Interface, namespaces []string) *Reverter {
	return &Reverter{client: client, Namespaces: namespaces, Grace: 5 * time.Second, clock: time.Now}
}

// RevertKinds are the kinds of objects Soldiers of actuation write: HPAs
// (hpa-bounds), or Deployments and StatefulSets (replicas). A Reverter
// limited to them needs no permission on the others.
func RevertKinds(actuation domains.Actuation) []ObjectKind {
	if actuation == domains.ActuateReplicas {
		return []ObjectKind{KindDeployment, KindStatefulSet}
	}
	return []ObjectKind{KindHPA}
}

// RevertOnce reverts every marked object whose lease has lapsed and returns
// what it changed. It goes on past errors and returns them joined.
func (r *Reverter) RevertOnce(ctx context.Context) ([]Restored, error) {
	objs, err := listMarked(ctx, r.client, r.Namespaces, r.Kinds, "")
	now := r.clock()
	leases := map[string]bool{} // ref -> lapsed, each lease read once
	return restoreEach(ctx, r.client, objs, true, err, func(o markedObject) (bool, error) {
		lapsed, seen := leases[o.Lease]
		if !seen {
			var err error
			if lapsed, err = r.lapsed(ctx, o.Lease, now); err != nil {
				return false, err
			}
			leases[o.Lease] = lapsed
		}
		return lapsed, nil
	})
}

// lapsed reports whether the lease ref ("namespace/name") has lapsed at now.
func (r *Reverter) lapsed(ctx context.Context, ref string, now time.Time) (bool, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" {
		return true, nil // no valid lease: nobody holds the object
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

// Run reverts every interval until ctx ends. onRevert, if not nil, sees
// each pass's reverts (when there are any) and errors.
func (r *Reverter) Run(ctx context.Context, interval time.Duration, onRevert func([]Restored, error)) error {
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
