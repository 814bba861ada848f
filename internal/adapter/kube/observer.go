package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/regimentd/regiment/internal/adapter/promclient"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
)

// ObserverConfig configures an Observer.
type ObserverConfig struct {
	// Actuation decides what AppObservation.Replicas reports: the
	// workload's spec.replicas (replicas), or its HPA's minReplicas, the
	// target the Soldier set (hpa-bounds; spec.replicas when the HPA is
	// absent).
	Actuation domains.Actuation
	Targets   []Target
	// Prometheus reads the metrics; nil: every metric is missing.
	Prometheus *promclient.Client
	// MaxAge is how long a metric's last good value is held, marked stale.
	MaxAge time.Duration
	// TargetUtilisation sizes the stand-in for a missing request rate.
	TargetUtilisation float64
	// Parallelism bounds concurrent Prometheus queries. Default 8.
	Parallelism int
	// Recommend is set for a Soldier that started in recommend (or shadow)
	// mode, which writes nothing: Replicas is the workload's spec.replicas
	// whatever the actuation (the cluster's own autoscaling sets it), and
	// HPAMin and HPAMax are the bounds of the app's HPA when it has one.
	Recommend bool
	// Namespaces and Kinds are watched besides those of Targets, for the
	// apps discovery may add later (SetTargets).
	Namespaces []string
	Kinds      []domains.WorkloadKind
	// Dynamic, when set, watches KEDA ScaledObjects in the namespaces if
	// the cluster serves them (see ForeignOwner).
	Dynamic dynamic.Interface
	// Claims are the objects the Actuator wrote; nil: none.
	Claims *Claims
	// Callers are the apps that call the Targets (CallerTargetsOf); nil: none.
	// Their request rates are read at each Observe with the Targets'
	// metrics; a caller whose rate cannot be read adds no calls.
	Callers *CallerTargets
}

// Freshness says where a metric's value comes from.
type Freshness int

const (
	// Fresh: read at this Observe.
	Fresh Freshness = iota
	// Stale: this Observe's query failed or returned nothing; the last good
	// value, younger than MaxAge, is held.
	Stale
	// Missing: no good value within MaxAge; a stand-in that holds the app's
	// size is reported (see Observer).
	Missing
)

func (f Freshness) String() string { return [...]string{"fresh", "stale", "missing"}[f] }

// MetricStatus is one metric's freshness at the last Observe.
type MetricStatus struct {
	Freshness Freshness
	Age       time.Duration // since the value held was read; 0 when fresh or missing
	Err       error         // why it is not fresh
}

// AppStatus is what an Observe saw of one app besides its AppObservation.
type AppStatus struct {
	// Found says the workload exists (and, in hpa-bounds, its HPA).
	Found    bool
	Restarts int32 // container restarts summed over the app's live pods
	// Owner is another controller that sets the app's replicas, which the
	// Soldier leaves alone (ForeignOwner); not looked for in recommend mode.
	Owner   Owner
	Metrics [numMetrics]MetricStatus
}

// Stale reports whether any metric the Soldier sizes the app from (request
// rate, p99, error rate, CPU) is not fresh; memory and restarts are in
// Metrics.
func (s AppStatus) Stale() bool {
	for m, st := range s.Metrics {
		if Metric(m).sizing() && st.Freshness != Fresh {
			return true
		}
	}
	return false
}

// Observer is a soldier.Observer over shared informers (Deployments or
// StatefulSets, HPAs, Pods, and KEDA ScaledObjects when served; one factory
// per namespace of the domain's apps) and the Prometheus HTTP API. Each
// Observe also finds each app's other owner, if any (Ownership,
// ForeignOwner).
//
// Per app: Replicas from the workload or its HPA (see ObserverConfig);
// Ready counts pods whose Ready condition is true, Starting pods scheduled
// but not ready, Pending pods not scheduled (terminating and finished pods
// are not counted); StartupSeconds is the median, over the ready pods, of
// the time from a pod's creation to its Ready condition's last transition; RPS, P99, ErrorRate, CPUUtil, MemUtil and RestartRate
// from Prometheus, one request per query of the plan (planQueries). The
// domain's P99 is the largest app P99 (an upper bound of the merged p99) and
// its ErrorRate the request-weighted mean.
//
// Metrics are never silently zero. A value that cannot be read this time is
// the last good one while younger than MaxAge (Stale), else a stand-in
// (Missing): RPS = Replicas x capacity x TargetUtilisation (the demand the
// current replicas serve at the target), CPUUtil = TargetUtilisation, P99 = 0
// and ErrorRate = 0, and the app is marked Blind, so the Soldier's executor
// holds its target instead of sizing it from stand-ins; a missing MemUtil or
// RestartRate stands in as 0 and blinds nothing (the Soldier does not size
// from them). Status says which metric is which. One case is exact, not a stand-in: when the request rate
// is fresh and zero, a NaN or empty p99 or error rate means no requests, and
// is a fresh 0.
//
// Run starts the informers; Observe waits for their first sync. Observe must
// not be called concurrently with itself; Status may be.
type Observer struct {
	client  kubernetes.Interface
	cfg     ObserverConfig
	factory []informers.SharedInformerFactory
	deploys map[string]appslisters.DeploymentLister
	sets    map[string]appslisters.StatefulSetLister
	hpas    map[string]autoscalinglisters.HorizontalPodAutoscalerLister
	pods    map[string]corelisters.PodLister
	keda    kedaWatch // ScaledObjects, once Run found the CRD
	synced  []cache.InformerSynced
	ready   chan struct{} // closed once the caches synced
	clock   func() time.Time

	plan   []request            // the queries of a tick (planQueries)
	calls  []request            // the callers' request rate queries of a tick
	last   [][numMetrics]sample // last good value per app and metric
	starts []float64            // scratch: one app's pods' startup seconds
	mu     sync.Mutex
	status []AppStatus
}

type sample struct {
	v  float64
	at time.Time // zero: never read
}

// NewObserver returns an Observer reading through client. It starts nothing.
func NewObserver(client kubernetes.Interface, cfg ObserverConfig) *Observer {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 8
	}
	o := &Observer{
		client: client, cfg: cfg, deploys: map[string]appslisters.DeploymentLister{}, sets: map[string]appslisters.StatefulSetLister{},
		hpas: map[string]autoscalinglisters.HorizontalPodAutoscalerLister{}, pods: map[string]corelisters.PodLister{},
		ready: make(chan struct{}), clock: time.Now,
		last: make([][numMetrics]sample, len(cfg.Targets)), status: make([]AppStatus, len(cfg.Targets)),
		plan: planQueries(cfg.Targets), calls: callerQueries(cfg.Callers),
	}
	kinds := map[domains.WorkloadKind]bool{}
	for _, t := range cfg.Targets {
		kinds[t.Kind] = true
	}
	for _, k := range cfg.Kinds {
		kinds[k] = true
	}
	nss := namespaces(cfg.Targets)
	for _, ns := range cfg.Namespaces {
		if !slices.Contains(nss, ns) {
			nss = append(nss, ns)
		}
	}
	for _, ns := range nss {
		f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
			informers.WithTransform(trimToOwnership))
		o.factory = append(o.factory, f)
		if kinds[domains.KindDeployment] {
			inf := f.Apps().V1().Deployments()
			o.deploys[ns], o.synced = inf.Lister(), append(o.synced, inf.Informer().HasSynced)
		}
		if kinds[domains.KindStatefulSet] {
			inf := f.Apps().V1().StatefulSets()
			o.sets[ns], o.synced = inf.Lister(), append(o.synced, inf.Informer().HasSynced)
		}
		// Every mode: replicas looks for HPAs that would fight it.
		hinf := f.Autoscaling().V2().HorizontalPodAutoscalers()
		o.hpas[ns], o.synced = hinf.Lister(), append(o.synced, hinf.Informer().HasSynced)
		inf := f.Core().V1().Pods()
		o.pods[ns], o.synced = inf.Lister(), append(o.synced, inf.Informer().HasSynced)
	}
	return o
}

// DropManagedFields is an informer transform that clears an object's
// managedFields: it keeps informer caches small.
func DropManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// Run runs the informers until ctx ends.
func (o *Observer) Run(ctx context.Context) error {
	for _, f := range o.factory {
		f.Start(ctx.Done())
	}
	o.synced = append(o.synced, o.keda.start(ctx, o.client, o.cfg.Dynamic, o.namespaces())...)
	defer o.keda.shutdown()
	defer func() {
		for _, f := range o.factory {
			f.Shutdown()
		}
	}()
	if !cache.WaitForCacheSync(ctx.Done(), o.synced...) {
		return nil // ctx ended first
	}
	close(o.ready)
	<-ctx.Done()
	return nil
}

// Synced reports whether the informers have synced once.
func (o *Observer) Synced() bool {
	select {
	case <-o.ready:
		return true
	default:
		return false
	}
}

// SetTargets replaces the apps observed from the next Observe on; an app
// kept (by name) keeps its last metric values. Its namespace and kind must
// be among those watched (ObserverConfig). Not concurrently with Observe.
func (o *Observer) SetTargets(ts []Target) error {
	for _, t := range ts {
		if t.Kind == domains.KindStatefulSet && o.sets[t.Namespace] == nil || t.Kind != domains.KindStatefulSet && o.deploys[t.Namespace] == nil {
			return fmt.Errorf("kube: observe %s %s/%s: its namespace and kind are not watched", t.Kind, t.Namespace, t.Name)
		}
	}
	old := make(map[string]int, len(o.cfg.Targets))
	for i, t := range o.cfg.Targets {
		old[t.App.Name] = i
	}
	last := make([][numMetrics]sample, len(ts))
	for i, t := range ts {
		if j, ok := old[t.App.Name]; ok {
			last[i] = o.last[j]
		}
	}
	o.cfg.Targets, o.last, o.plan = ts, last, planQueries(ts)
	o.mu.Lock()
	o.status = make([]AppStatus, len(ts))
	o.mu.Unlock()
	return nil
}

// SetCallers replaces the apps that call the Targets (CallerTargetsOf) from the
// next Observe on. Not concurrently with Observe.
func (o *Observer) SetCallers(c *CallerTargets) { o.cfg.Callers, o.calls = c, callerQueries(c) }

// Status returns each app's status at the last Observe.
func (o *Observer) Status() []AppStatus {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]AppStatus(nil), o.status...)
}

// Observe fills obs (one entry per target) from the informer caches and
// Prometheus. It waits for the caches' first sync.
func (o *Observer) Observe(ctx context.Context, obs *soldier.Observation) error {
	if len(obs.Apps) != len(o.cfg.Targets) {
		return fmt.Errorf("kube: observe: %d apps in the observation, %d targets", len(obs.Apps), len(o.cfg.Targets))
	}
	select {
	case <-o.ready:
	case <-ctx.Done():
		return fmt.Errorf("kube: observe: informer caches not synced: %w", ctx.Err())
	}
	status := make([]AppStatus, len(o.cfg.Targets))
	for i := range o.cfg.Targets {
		if err := o.observeObjects(&o.cfg.Targets[i], &obs.Apps[i], &status[i]); err != nil {
			return err
		}
		if err := o.observeOwner(&o.cfg.Targets[i], &obs.Apps[i], &status[i]); err != nil {
			return err
		}
	}
	o.observeMetrics(ctx, obs, status)
	o.observeCalls(ctx, obs)

	obs.P99, obs.ErrorRate = 0, 0
	rps := 0.0
	for i := range obs.Apps {
		a := &obs.Apps[i]
		obs.P99 = max(obs.P99, a.P99)
		obs.ErrorRate += a.ErrorRate * a.RPS
		rps += a.RPS
	}
	if rps > 0 {
		obs.ErrorRate /= rps
	}
	o.mu.Lock()
	o.status = status
	o.mu.Unlock()
	return nil
}

// observeObjects fills a's replica and pod counts from the caches.
func (o *Observer) observeObjects(t *Target, a *soldier.AppObservation, st *AppStatus) error {
	replicas, found, err := o.workloadReplicas(t)
	if err != nil {
		return err
	}
	st.Found = found
	a.HPAMin, a.HPAMax = 0, 0
	if o.cfg.Recommend {
		if err := o.observeHPA(t, a); err != nil {
			return err
		}
	} else if o.cfg.Actuation == domains.ActuateHPABounds {
		h, err := o.hpas[t.Namespace].HorizontalPodAutoscalers(t.Namespace).Get(t.HPA)
		switch {
		case apierrors.IsNotFound(err):
			st.Found = false
		case err != nil:
			return fmt.Errorf("kube: observe hpa %s/%s: %w", t.Namespace, t.HPA, err)
		default:
			replicas = minOf(h.Spec.MinReplicas)
		}
	}
	a.Replicas, a.Missing = replicas, !st.Found // a missing app is held, not written (soldier.Executor)
	pods, err := o.pods[t.Namespace].Pods(t.Namespace).List(t.Pods)
	if err != nil {
		return fmt.Errorf("kube: observe pods of %s/%s: %w", t.Namespace, t.Name, err)
	}
	a.Ready, a.Starting, a.Pending = 0, 0, 0
	o.starts = o.starts[:0]
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			st.Restarts += c.RestartCount
		}
		switch {
		case podReady(p):
			a.Ready++
			if d, ok := podStartup(p); ok {
				o.starts = append(o.starts, d)
			}
		case p.Spec.NodeName != "":
			a.Starting++
		default:
			a.Pending++
		}
	}
	a.StartupSeconds = median(o.starts)
	return nil
}

// observeHPA fills a's HPAMin and HPAMax from the app's HPA, if it has one.
func (o *Observer) observeHPA(t *Target, a *soldier.AppObservation) error {
	h, err := o.hpas[t.Namespace].HorizontalPodAutoscalers(t.Namespace).Get(t.HPA)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("kube: observe hpa %s/%s: %w", t.Namespace, t.HPA, err)
	}
	a.HPAMin, a.HPAMax = minOf(h.Spec.MinReplicas), h.Spec.MaxReplicas
	return nil
}

func (o *Observer) workloadReplicas(t *Target) (int32, bool, error) {
	var spec *int32
	var err error
	if t.Kind == domains.KindStatefulSet {
		s, e := o.sets[t.Namespace].StatefulSets(t.Namespace).Get(t.Name)
		if err = e; e == nil {
			spec = s.Spec.Replicas
		}
	} else {
		d, e := o.deploys[t.Namespace].Deployments(t.Namespace).Get(t.Name)
		if err = e; e == nil {
			spec = d.Spec.Replicas
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("kube: observe %s %s/%s: %w", t.Kind, t.Namespace, t.Name, err)
	}
	return minOf(spec), true, nil
}

// podStartup is the seconds ready pod p took from its creation to its
// Ready condition's last transition, false when either is unset.
func podStartup(p *corev1.Pod) (float64, bool) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && !c.LastTransitionTime.IsZero() && !p.CreationTimestamp.IsZero() {
			d := c.LastTransitionTime.Sub(p.CreationTimestamp.Time).Seconds()
			return d, d >= 0
		}
	}
	return 0, false
}

// median is the median of xs, which it sorts; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// observeMetrics runs the tick's queries, Parallelism at a time, and fills
// obs with fresh, held or stand-in values.
func (o *Observer) observeMetrics(ctx context.Context, obs *soldier.Observation, status []AppStatus) {
	n := len(o.cfg.Targets)
	vals := make([][numMetrics]float64, n)
	errs := make([][numMetrics]error, n)
	if o.cfg.Prometheus == nil {
		for i := range errs {
			for m := range errs[i] {
				errs[i][m] = errNoPrometheus
			}
		}
	} else {
		o.query(ctx, o.plan, vals, errs)
	}
	now := o.clock()
	for i := range n {
		a, t := &obs.Apps[i], &o.cfg.Targets[i]
		// No requests: an empty or NaN latency and error rate are exact zeros.
		if errs[i][MetricRPS] == nil && vals[i][MetricRPS] == 0 {
			for _, m := range []Metric{MetricP99, MetricErrorRate} {
				if errors.Is(errs[i][m], promclient.ErrNoData) || errors.Is(errs[i][m], promclient.ErrNotFinite) {
					vals[i][m], errs[i][m] = 0, nil
				}
			}
		}
		// Memory and restarts stand in as 0, as before they were read.
		standIn := [numMetrics]float64{
			MetricRPS: float64(a.Replicas) * t.App.Capacity * o.cfg.TargetUtilisation,
			MetricCPU: o.cfg.TargetUtilisation,
		}
		var out [numMetrics]float64
		a.Blind = false
		for m := range numMetrics {
			st, last := &status[i].Metrics[m], &o.last[i][m]
			switch {
			case errs[i][m] == nil:
				*last = sample{v: vals[i][m], at: now}
				out[m], *st = last.v, MetricStatus{Freshness: Fresh}
			case !last.at.IsZero() && now.Sub(last.at) <= o.cfg.MaxAge:
				out[m], *st = last.v, MetricStatus{Freshness: Stale, Age: now.Sub(last.at), Err: errs[i][m]}
			default:
				out[m], *st = standIn[m], MetricStatus{Freshness: Missing, Err: errs[i][m]}
				a.Blind = a.Blind || m.sizing()
			}
		}
		a.RPS, a.P99, a.ErrorRate = max(out[MetricRPS], 0), max(out[MetricP99], 0), min(max(out[MetricErrorRate], 0), 1)
		a.CPUUtil = min(max(out[MetricCPU], 0), 1)
		a.MemUtil, a.RestartRate = max(out[MetricMemory], 0), max(out[MetricRestarts], 0)
	}
}

// callerQueries are the request rate queries of c's Targets; none for nil.
func callerQueries(c *CallerTargets) []request {
	if c == nil {
		return nil
	}
	var out []request
	for _, r := range planQueries(c.Targets) {
		if r.metric == MetricRPS {
			out = append(out, r)
		}
	}
	return out
}

// observeCalls reads the callers' request rates and sets each app's
// CallerRPS: 0 with no callers or no Prometheus.
func (o *Observer) observeCalls(ctx context.Context, obs *soldier.Observation) {
	for i := range obs.Apps {
		obs.Apps[i].CallerRPS = 0
	}
	c := o.cfg.Callers
	if c == nil || o.cfg.Prometheus == nil {
		return
	}
	vals := make([][numMetrics]float64, len(c.Targets))
	errs := make([][numMetrics]error, len(c.Targets))
	o.query(ctx, o.calls, vals, errs)
	rps := func(k int) float64 {
		if errs[k][MetricRPS] != nil {
			return 0
		}
		return max(vals[k][MetricRPS], 0)
	}
	for i := range obs.Apps {
		if i < len(c.Of) {
			obs.Apps[i].CallerRPS = soldier.CallerRPS(c.Of[i], rps)
		}
	}
}

// query runs plan's requests, Parallelism at a time, into vals and errs.
// Each (app, metric) cell belongs to exactly one request.
func (o *Observer) query(ctx context.Context, plan []request, vals [][numMetrics]float64, errs [][numMetrics]error) {
	prom := o.cfg.Prometheus
	sem := make(chan struct{}, o.cfg.Parallelism)
	var wg sync.WaitGroup
	for ri := range plan {
		r := &plan[ri]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			switch {
			case r.err != nil:
				for _, i := range r.apps {
					errs[i][r.metric] = r.err
				}
			case len(r.batchBy) == 0:
				i := r.apps[0]
				vals[i][r.metric], errs[i][r.metric] = prom.Query(ctx, r.query)
			default:
				vec, err := prom.QueryVector(ctx, r.query)
				assignBatch(r, vec, err, vals, errs)
			}
		})
	}
	wg.Wait()
}

// assignBatch gives each app of batched request r the value of its series
// in vec: no series is promclient.ErrNoData for that app alone, several an error.
func assignBatch(r *request, vec []promclient.Series, err error, vals [][numMetrics]float64, errs [][numMetrics]error) {
	byKey := map[string][]float64{}
	for _, s := range vec {
		k := seriesKey(s.Labels, r.batchBy)
		byKey[k] = append(byKey[k], s.Value)
	}
	m := r.metric
	for j, i := range r.apps {
		switch vs := byKey[r.keys[j]]; {
		case err != nil:
			errs[i][m] = err
		case r.appErr[j] != nil:
			errs[i][m] = r.appErr[j]
		case len(vs) == 0:
			errs[i][m] = promclient.ErrNoData
		case len(vs) > 1:
			errs[i][m] = fmt.Errorf("kube: prometheus query returned %d series for one app's %s labels; aggregate by them", len(vs), strings.Join(r.batchBy, ","))
		default:
			vals[i][m], errs[i][m] = promclient.Finite(vs[0])
		}
	}
}

var errNoPrometheus = errors.New("no prometheus url configured")
