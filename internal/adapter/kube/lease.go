package kube

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// SoldierLeaseName is the name of domain's Soldier lease.
func SoldierLeaseName(domain string) string { return "regiment-soldier-" + domain }

// Lease is a Soldier's coordination.k8s.io Lease: its name, holder identity
// and duration. The Soldiers of a domain campaign for it with leader
// election (Adapter.Lead), so it is both a lock (only its holder acts) and
// the heartbeat a Reverter reads: the bounds of the HPAs that name it are
// reverted once it has not been renewed for its duration. Renew and Run
// are the bare heartbeat, without the lock: they take the lease over
// whoever holds it.
type Lease struct {
	client    kubernetes.Interface
	namespace string
	name      string
	identity  string
	duration  time.Duration
	clock     func() time.Time
}

// NewLease returns the lease namespace/name held by identity (say the pod
// name), lasting duration without renewal. It starts nothing.
func NewLease(client kubernetes.Interface, namespace, name, identity string, duration time.Duration) *Lease {
	return &Lease{client: client, namespace: namespace, name: name, identity: identity, duration: duration, clock: time.Now}
}

// Ref is "namespace/name", as annotated on HPAs.
func (l *Lease) Ref() string { return l.namespace + "/" + l.name }

// Renew creates the lease or sets its holder and renew time to now.
func (l *Lease) Renew(ctx context.Context) error {
	c := l.client.CoordinationV1().Leases(l.namespace)
	secs := int32(max(1, l.duration/time.Second))
	now := metav1.NewMicroTime(l.clock())
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		le, err := c.Get(ctx, l.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = c.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.namespace},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: &l.identity, LeaseDurationSeconds: &secs,
					AcquireTime: &now, RenewTime: &now},
			}, metav1.CreateOptions{FieldManager: fieldManager})
			return err
		}
		if err != nil {
			return err
		}
		if le.Spec.HolderIdentity == nil || *le.Spec.HolderIdentity != l.identity {
			le.Spec.HolderIdentity, le.Spec.AcquireTime = &l.identity, &now
		}
		le.Spec.LeaseDurationSeconds, le.Spec.RenewTime = &secs, &now
		_, err = c.Update(ctx, le, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if err != nil {
		return fmt.Errorf("kube: renew lease %s: %w", l.Ref(), err)
	}
	return nil
}

// Run renews the lease every quarter of its duration until ctx ends.
// onError, if not nil, sees each failed renewal. onRegained, if not nil, runs
// after a renewal that follows a lapse (no successful renewal for the lease's
// duration), when a Reverter may have reverted the Soldier's HPAs: the
// Soldier reasserts its targets there. The lease is left to expire on return,
// so a restarting Soldier (a rolling update) does not trigger a revert.
func (l *Lease) Run(ctx context.Context, onError func(error), onRegained func(context.Context)) error {
	every := max(l.duration/4, 100*time.Millisecond)
	var last time.Time
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := l.Renew(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if onError != nil {
				onError(err)
			}
		} else {
			now := l.clock()
			if !last.IsZero() && now.Sub(last) >= l.duration && onRegained != nil {
				onRegained(ctx)
			}
			last = now
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// expired reports whether a lease had lapsed at now: not renewed within its
// duration plus grace. A lease without a renew time has lapsed.
func expired(le *coordinationv1.Lease, now time.Time, grace time.Duration) bool {
	s := le.Spec
	if s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return true
	}
	d := time.Duration(*s.LeaseDurationSeconds) * time.Second
	return now.After(s.RenewTime.Add(d + grace))
}
