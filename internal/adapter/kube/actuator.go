package kube

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	acautoscalingv1 "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	acautoscalingv2 "k8s.io/client-go/applyconfigurations/autoscaling/v2"
	"k8s.io/client-go/kubernetes"

	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// Labels and annotations the Actuator puts on the HPAs it bounds.
const (
	// LabelManaged ("true") marks an HPA whose bounds a Soldier sets; the
	// Reverter lists HPAs by it.
	LabelManaged = "regiment.io/managed"
	// AnnotationLease names the Soldier's lease, "namespace/name".
	AnnotationLease = "regiment.io/lease"
	// AnnotationSafeBounds holds the bounds to revert to, "min-max": the
	// app's configured min_replicas and max_replicas.
	AnnotationSafeBounds = "regiment.io/safe-bounds"
)

// ActuatorConfig configures an Actuator.
type ActuatorConfig struct {
	// Actuation is replicas (the scale subresource) or hpa-bounds.
	Actuation domains.Actuation
	// Targets are the domain's apps, indexed like soldier.Change.App.
	Targets []Target
	// HPAHeadroom maps a target to HPA bounds; see Bounds.
	HPAHeadroom float64
	// Lease is the Soldier's lease, "namespace/name", annotated on every
	// object it writes so a Reverter can tell when the Soldier is gone.
	Lease string
	// Domain is the Soldier's domain, the value of LabelManagedBy on every
	// object it writes. Empty: "unnamed".
	Domain string
	// WritesPerSecond and Burst are the token bucket every write draws
	// from; a write waits for a token. Defaults
	// domains.DefaultWritesPerSecond and DefaultWriteBurst (50 and 100; see
	// there for the arithmetic).
	WritesPerSecond float64
	Burst           int
	// Owners, when set, says who else sets an app's replicas (the
	// Observer's caches); an app with a ForeignOwner is not written. Nil:
	// the workload is read before each write (its managedFields only).
	Owners interface {
		Ownership(t *Target) (Ownership, error)
	}
	// Claims records the objects written, shared with the Observer; nil:
	// the Actuator's own.
	Claims *Claims
}

// ActuatorStats counts what an Actuator did.
type ActuatorStats struct {
	Writes    int64 // objects updated
	NoOps     int64 // changes the cluster already held: nothing written
	Conflicts int64 // writes refused with 409 Conflict (a forced apply carries no resourceVersion: none expected)
	Failures  int64 // changes that failed after retries (the Soldier retries them with backoff)
	Foreign   int64 // changes not written: another controller sets the app's replicas
	Records   int64 // objects whose original spec was recorded before a first write (see recordOriginal)
}

// Actuator writes a Soldier's replica targets to the cluster: the scale
// subresource of each app's Deployment or StatefulSet (replicas), or the
// min/max of each app's HorizontalPodAutoscaler (hpa-bounds, see Bounds). It
// implements soldier.Actuator.
//
// Before its first write to an object (past the no-op and ForeignOwner
// checks) it records the object's original spec on it (recordOriginal), for
// the Reverter and Restorer to give back. Each change reads the object, writes nothing when it already holds the
// value, leaves the app alone when another controller sets its replicas
// (ForeignOwner; the change fails with a *ForeignOwnerError and is not
// retried), waits for a token of the write rate limit, and writes by
// server-side apply with field manager "regiment", owning only the fields it
// sets (see applyOptions). A change that otherwise fails is returned to the
// Soldier, which retries it with backoff, and kept for Reassert unless a
// newer change for the app supersedes it. Apply and Reassert are safe for
// concurrent use; they run one at a time.
type Actuator struct {
	client  kubernetes.Interface
	cfg     ActuatorConfig
	limiter *rate.Limiter

	mu      sync.Mutex
	last    map[int]int32 // last target applied per app
	pending map[int]int32 // failed, to retry
	// marked holds the objects ("Kind namespace/name") known to carry this
	// Soldier's marks and an original spec; see recordOriginal.
	marked map[string]bool

	claims *Claims

	writes, noops, conflicts, failures, foreign, records atomic.Int64
}

// NewActuator returns an Actuator writing through client. It starts nothing.
func NewActuator(client kubernetes.Interface, cfg ActuatorConfig) (*Actuator, error) {
	if cfg.Actuation != domains.ActuateReplicas && cfg.Actuation != domains.ActuateHPABounds {
		return nil, fmt.Errorf("kube: unknown actuation %q", cfg.Actuation)
	}
	if cfg.WritesPerSecond <= 0 {
		cfg.WritesPerSecond = domains.DefaultWritesPerSecond
	}
	if cfg.Burst <= 0 {
		cfg.Burst = domains.DefaultWriteBurst
	}
	if cfg.Claims == nil {
		cfg.Claims = &Claims{}
	}
	return &Actuator{
		client: client, cfg: cfg, limiter: rate.NewLimiter(rate.Limit(cfg.WritesPerSecond), cfg.Burst), claims: cfg.Claims,
		last: map[int]int32{}, pending: map[int]int32{}, marked: map[string]bool{},
	}, nil
}

// Stats returns the counts so far.
func (a *Actuator) Stats() ActuatorStats {
	return ActuatorStats{Writes: a.writes.Load(), NoOps: a.noops.Load(), Conflicts: a.conflicts.Load(), Failures: a.failures.Load(), Foreign: a.foreign.Load(),
		Records: a.records.Load()}
}

// Apply writes changes. Apps whose write fails are returned as a
// soldier.WriteErrors (WriteFailure says why) and the others are written:
// the Soldier retries a failed app with backoff, so Apply does not retry
// earlier failures itself (Reassert does).
func (a *Actuator) Apply(ctx context.Context, changes []soldier.Change) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	work := make(map[int]int32, len(changes))
	for _, c := range changes {
		if c.App < 0 || c.App >= len(a.cfg.Targets) {
			return fmt.Errorf("kube: change for app %d of %d", c.App, len(a.cfg.Targets))
		}
		work[c.App] = c.Replicas
	}
	return a.apply(ctx, work)
}

// SetTargets replaces the apps written from the next Apply on. An app kept
// (by name) keeps its last target and a failed change to retry; the
// changes of apps no longer there are dropped.
func (a *Actuator) SetTargets(ts []Target) {
	a.mu.Lock()
	defer a.mu.Unlock()
	index := make(map[string]int, len(ts))
	for i, t := range ts {
		index[t.App.Name] = i
	}
	remap := func(m map[int]int32) map[int]int32 {
		out := make(map[int]int32, len(m))
		for i, n := range m {
			if j, ok := index[a.cfg.Targets[i].App.Name]; ok {
				out[j] = n
			}
		}
		return out
	}
	a.last, a.pending = remap(a.last), remap(a.pending)
	a.cfg.Targets = ts
}

// Reassert writes again every target applied so far, for when the cluster
// may have moved away from them (a Reverter acted while the Soldier's lease
// had lapsed, restoring the originals and removing the marks: they are
// recorded again first). Targets the cluster still holds cost a read, not a
// write.
func (a *Actuator) Reassert(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.marked)
	work := maps.Clone(a.last)
	maps.Copy(work, a.pending)
	return a.apply(ctx, work)
}

func (a *Actuator) apply(ctx context.Context, work map[int]int32) error {
	var errs soldier.WriteErrors
	for _, i := range slices.Sorted(maps.Keys(work)) {
		n := work[i]
		var err error
		if a.cfg.Actuation == domains.ActuateReplicas {
			err = a.scale(ctx, &a.cfg.Targets[i], n)
		} else {
			err = a.bound(ctx, &a.cfg.Targets[i], n)
		}
		if _, ok := err.(*ForeignOwnerError); ok {
			delete(a.pending, i) // not retried: the Observer reports the owner each tick
			errs = append(errs, soldier.AppFailure{App: i, Reason: soldier.FailForeignOwner, Err: err})
			continue
		}
		if err != nil {
			a.failures.Add(1)
			a.pending[i] = n
			errs = append(errs, soldier.AppFailure{App: i, Reason: WriteFailure(err), Err: err})
			continue
		}
		delete(a.pending, i)
		a.last[i] = n
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// WriteFailure classifies a failed write as a soldier.Fail* reason: the
// object not found, denied by admission (a webhook or a
// ValidatingAdmissionPolicy: Forbidden or Invalid) or authorisation, a
// conflict left after the retries, or another error.
func WriteFailure(err error) string {
	switch {
	case apierrors.IsNotFound(err):
		return soldier.FailNotFound
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err):
		return soldier.FailDenied
	case apierrors.IsConflict(err):
		return soldier.FailConflict
	}
	return soldier.FailError
}

// scale sets the replicas of t's workload by a server-side apply of its
// scale subresource (field manager "regiment", owning spec.replicas alone).
func (a *Actuator) scale(ctx context.Context, t *Target, replicas int32) error {
	get, apply := a.scaleClient(t)
	err := func() error {
		s, err := get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Spec.Replicas == replicas {
			a.noops.Add(1)
			return nil
		}
		if err := a.leftAlone(ctx, t, nil); err != nil {
			return err
		}
		if err := a.recordOriginal(ctx, t); err != nil {
			return err
		}
		if err := a.limiter.Wait(ctx); err != nil {
			return err
		}
		ac := acautoscalingv1.Scale().WithSpec(acautoscalingv1.ScaleSpec().WithReplicas(replicas))
		_, err = apply(ctx, t.Name, ac, applyOptions)
		return a.counted(err)
	}()
	if err != nil {
		return fmt.Errorf("kube: scale %s %s/%s to %d: %w", t.Kind, t.Namespace, t.Name, replicas, err)
	}
	a.claims.add(claimKey(domains.ActuateReplicas, t))
	return nil
}

// applyOptions are Regiment's server-side applies. Force takes the written
// fields from their other owners; leftAlone has checked there is none that
// ForeignOwner counts: Regiment owns the field (co-owners agreed on its
// value), or it adopts a field an imperative writer (the object's creator,
// an old hand edit) last set and Regiment never claimed. An applier
// (Argo CD, Flux) is never forced over: its app is left alone.
var applyOptions = metav1.ApplyOptions{FieldManager: fieldManager, Force: true}

// ApplyOptions are the options of Regiment's server-side applies: the field
// manager "regiment", forced.
func ApplyOptions() metav1.ApplyOptions { return applyOptions }

type (
	getScale   func(context.Context, string, metav1.GetOptions) (*autoscalingv1.Scale, error)
	applyScale func(context.Context, string, *acautoscalingv1.ScaleApplyConfiguration, metav1.ApplyOptions) (*autoscalingv1.Scale, error)
)

func (a *Actuator) scaleClient(t *Target) (getScale, applyScale) {
	if t.Kind == domains.KindStatefulSet {
		c := a.client.AppsV1().StatefulSets(t.Namespace)
		return c.GetScale, c.ApplyScale
	}
	c := a.client.AppsV1().Deployments(t.Namespace)
	return c.GetScale, c.ApplyScale
}

// leftAlone returns a *ForeignOwnerError when another controller sets t's
// replicas (ForeignOwner): from ActuatorConfig.Owners, else from a read of
// the workload (its HPAs and ScaledObjects unknown). fields, when not nil,
// are the written object's managedFields as just read.
func (a *Actuator) leftAlone(ctx context.Context, t *Target, fields []metav1.ManagedFieldsEntry) error {
	in := Ownership{Actuation: a.cfg.Actuation, Workload: t.WorkloadRef}
	var err error
	switch {
	case a.cfg.Owners != nil:
		in, err = a.cfg.Owners.Ownership(t)
	case fields == nil && t.Kind == domains.KindStatefulSet:
		var s *appsv1.StatefulSet
		if s, err = a.client.AppsV1().StatefulSets(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{}); err == nil {
			in.Fields = s.ManagedFields
		}
	case fields == nil:
		var d *appsv1.Deployment
		if d, err = a.client.AppsV1().Deployments(t.Namespace).Get(ctx, t.Name, metav1.GetOptions{}); err == nil {
			in.Fields = d.ManagedFields
		}
	}
	if err != nil {
		return err
	}
	if fields != nil {
		in.Fields = fields
	}
	in.Claimed = in.Claimed || a.claims.has(claimKey(a.cfg.Actuation, t))
	if o := ForeignOwner(in); o.Found() {
		a.foreign.Add(1)
		return &ForeignOwnerError{App: t.App.Name, Owner: o}
	}
	return nil
}

// bound sets the min/max of t's HPA for a target of replicas, by a
// server-side apply owning spec.minReplicas, spec.maxReplicas and
// Regiment's label and annotations.
func (a *Actuator) bound(ctx context.Context, t *Target, replicas int32) error {
	lo, hi := Bounds(replicas, t.App.Min, t.App.Max, a.cfg.HPAHeadroom)
	safe := formatSafeBounds(max(t.App.Min, 1), max(t.App.Max, t.App.Min, 1))
	c := a.client.AutoscalingV2().HorizontalPodAutoscalers(t.Namespace)
	err := func() error {
		h, err := c.Get(ctx, t.HPA, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if minOf(h.Spec.MinReplicas) == lo && h.Spec.MaxReplicas == hi && h.Labels[LabelManaged] == "true" &&
			h.Annotations[AnnotationLease] == a.cfg.Lease && h.Annotations[AnnotationSafeBounds] == safe {
			a.noops.Add(1)
			return nil
		}
		if err := a.leftAlone(ctx, t, h.ManagedFields); err != nil {
			return err
		}
		if err := a.recordOriginal(ctx, t); err != nil {
			return err
		}
		if err := a.limiter.Wait(ctx); err != nil {
			return err
		}
		ac := acautoscalingv2.HorizontalPodAutoscaler(t.HPA, t.Namespace).
			WithLabels(map[string]string{LabelManaged: "true"}).
			WithAnnotations(map[string]string{AnnotationLease: a.cfg.Lease, AnnotationSafeBounds: safe}).
			WithSpec(acautoscalingv2.HorizontalPodAutoscalerSpec().WithMinReplicas(lo).WithMaxReplicas(hi))
		_, err = c.Apply(ctx, ac, applyOptions)
		return a.counted(err)
	}()
	if err != nil {
		return fmt.Errorf("kube: bound hpa %s/%s to [%d, %d]: %w", t.Namespace, t.HPA, lo, hi, err)
	}
	a.claims.add(claimKey(domains.ActuateHPABounds, t))
	return nil
}

// counted counts the outcome of one update.
func (a *Actuator) counted(err error) error {
	switch {
	case err == nil:
		a.writes.Add(1)
	case apierrors.IsConflict(err):
		a.conflicts.Add(1)
	}
	return err
}

// fieldManager names Regiment in managedFields.
const fieldManager = "regiment"

// minOf is an HPA's minReplicas, which defaults to 1.
func minOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
