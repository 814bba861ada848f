package kube

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/regimentd/regiment/domains"
	"github.com/regimentd/regiment/soldier"
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
	// Lease is the Soldier's lease, "namespace/name", annotated on every HPA
	// it bounds so a Reverter can tell when the Soldier is gone.
	Lease string
	// WritesPerSecond and Burst are the token bucket every write draws
	// from; a write waits for a token. Defaults
	// domains.DefaultWritesPerSecond and DefaultWriteBurst (50 and 100; see
	// there for the arithmetic).
	WritesPerSecond float64
	Burst           int
}

// ActuatorStats counts what an Actuator did.
type ActuatorStats struct {
	Writes    int64 // objects updated
	NoOps     int64 // changes the cluster already held: nothing written
	Conflicts int64 // updates refused on a stale resourceVersion, then retried
	Failures  int64 // changes that failed after retries (the Soldier retries them with backoff)
}

// Actuator writes a Soldier's replica targets to the cluster: the scale
// subresource of each app's Deployment or StatefulSet (replicas), or the
// min/max of each app's HorizontalPodAutoscaler (hpa-bounds, see Bounds). It
// implements soldier.Actuator.
//
// Each change reads the object, writes nothing when it already holds the
// value, waits for a token of the write rate limit, and updates with the
// read resourceVersion, retrying on conflict (retry.RetryOnConflict). A change
// that still fails is returned to the Soldier, which retries it with backoff,
// and kept for Reassert unless a newer change for the app supersedes it.
// Apply and Reassert are safe for concurrent use; they run one at a time.
type Actuator struct {
	client  kubernetes.Interface
	cfg     ActuatorConfig
	limiter *rate.Limiter

	mu      sync.Mutex
	last    map[int]int32 // last target applied per app
	pending map[int]int32 // failed, to retry

	writes, noops, conflicts, failures atomic.Int64
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
	return &Actuator{
		client: client, cfg: cfg, limiter: rate.NewLimiter(rate.Limit(cfg.WritesPerSecond), cfg.Burst),
		last: map[int]int32{}, pending: map[int]int32{},
	}, nil
}

// Stats returns the counts so far.
func (a *Actuator) Stats() ActuatorStats {
	return ActuatorStats{Writes: a.writes.Load(), NoOps: a.noops.Load(), Conflicts: a.conflicts.Load(), Failures: a.failures.Load()}
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
// had lapsed). Targets the cluster still holds cost a read, not a write.
func (a *Actuator) Reassert(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
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

// scale sets the replicas of t's workload through its scale subresource.
func (a *Actuator) scale(ctx context.Context, t *Target, replicas int32) error {
	get, update := a.scaleClient(t)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := get(ctx, t.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.Spec.Replicas == replicas {
			a.noops.Add(1)
			return nil
		}
		if err := a.limiter.Wait(ctx); err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = update(ctx, t.Name, s, metav1.UpdateOptions{FieldManager: fieldManager})
		return a.counted(err)
	})
	if err != nil {
		return fmt.Errorf("kube: scale %s %s/%s to %d: %w", t.Kind, t.Namespace, t.Name, replicas, err)
	}
	return nil
}

type (
	getScale    func(context.Context, string, metav1.GetOptions) (*autoscalingv1.Scale, error)
	updateScale func(context.Context, string, *autoscalingv1.Scale, metav1.UpdateOptions) (*autoscalingv1.Scale, error)
)

func (a *Actuator) scaleClient(t *Target) (getScale, updateScale) {
	if t.Kind == domains.KindStatefulSet {
		c := a.client.AppsV1().StatefulSets(t.Namespace)
		return c.GetScale, c.UpdateScale
	}
	c := a.client.AppsV1().Deployments(t.Namespace)
	return c.GetScale, c.UpdateScale
}

// bound sets the min/max of t's HPA for a target of replicas.
func (a *Actuator) bound(ctx context.Context, t *Target, replicas int32) error {
	lo, hi := Bounds(replicas, t.App.Min, t.App.Max, a.cfg.HPAHeadroom)
	safe := formatSafeBounds(max(t.App.Min, 1), max(t.App.Max, t.App.Min, 1))
	c := a.client.AutoscalingV2().HorizontalPodAutoscalers(t.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		h, err := c.Get(ctx, t.HPA, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if minOf(h.Spec.MinReplicas) == lo && h.Spec.MaxReplicas == hi && h.Labels[LabelManaged] == "true" &&
			h.Annotations[AnnotationLease] == a.cfg.Lease && h.Annotations[AnnotationSafeBounds] == safe {
			a.noops.Add(1)
			return nil
		}
		if err := a.limiter.Wait(ctx); err != nil {
			return err
		}
		h.Spec.MinReplicas, h.Spec.MaxReplicas = &lo, hi
		if h.Labels == nil {
			h.Labels = map[string]string{}
		}
		if h.Annotations == nil {
			h.Annotations = map[string]string{}
		}
		h.Labels[LabelManaged] = "true"
		h.Annotations[AnnotationLease] = a.cfg.Lease
		h.Annotations[AnnotationSafeBounds] = safe
		_, err = c.Update(ctx, h, metav1.UpdateOptions{FieldManager: fieldManager})
		return a.counted(err)
	})
	if err != nil {
		return fmt.Errorf("kube: bound hpa %s/%s to [%d, %d]: %w", t.Namespace, t.HPA, lo, hi, err)
	}
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
