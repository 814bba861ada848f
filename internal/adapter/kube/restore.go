package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Restored is one object given back to its team (or, for an HPA an older
// Regiment bounded, put back to its safe bounds).
type Restored struct {
	Kind   ObjectKind
	Object string        // namespace/name
	Lease  string        // the Soldier lease it named; "" if none
	From   RestoreSource // where the spec came from
	Spec   OriginalSpec  // the spec written, when Wrote
	Wrote  bool          // the spec was written; else only Regiment's marks were removed
}

// Restorer gives back what Regiment took: the objects a domain's Soldier
// marked (LabelManagedBy; and HPAs an older Regiment bounded, LabelManaged
// with the domain's lease) get their original spec (AnnotationOriginal)
// and lose Regiment's labels and annotations; see PlanRestore. It is what
// `regiment kube restore` and a Soldier whose mode turns off run. Restoring
// is idempotent. A Soldier still running in a writing mode takes its apps
// back on its next write: stop it first.
type Restorer struct {
	client kubernetes.Interface
	// Namespaces are searched for marked objects; empty: all namespaces.
	Namespaces []string
	// Kinds are the kinds of objects searched; empty: all three.
	Kinds []ObjectKind
}

// NewRestorer returns a Restorer over namespaces (none: all). It starts nothing.
func NewRestorer(client kubernetes.Interface, namespaces []string) *Restorer {
	return &Restorer{client: client, Namespaces: namespaces}
}

// Restore restores every object marked for domain ("": for any domain) and
// returns what it changed. It goes on past errors and returns them joined.
func (r *Restorer) Restore(ctx context.Context, domain string) ([]Restored, error) {
	objs, err := listMarked(ctx, r.client, r.Namespaces, r.Kinds, domain)
	return restoreEach(ctx, r.client, objs, false, err, nil)
}

// restoreEach restores each of objs that due says is due (nil: every one),
// as restoreObject with keepLegacyMarks, and returns what it changed with
// listErr and every error of due or of a restore, joined.
func restoreEach(ctx context.Context, client kubernetes.Interface, objs []markedObject, keepLegacyMarks bool, listErr error,
	due func(markedObject) (bool, error)) ([]Restored, error) {
	errs := []error{listErr}
	var done []Restored
	for _, o := range objs {
		if due != nil {
			ok, err := due(o)
			if err != nil {
				errs = append(errs, err)
			}
			if !ok {
				continue
			}
		}
		res, changed, err := restoreObject(ctx, client, o, keepLegacyMarks)
		switch {
		case err != nil:
			errs = append(errs, err)
		case changed:
			done = append(done, res)
		}
	}
	return done, errors.Join(errs...)
}

// markedObject is an object Regiment marked, with the lease it names.
type markedObject struct {
	objectRef
	Lease string
}

// Label selectors of marked objects: by domain, by any domain, and HPAs an
// older Regiment bounded (LabelManaged only).
func managedBySelector(domain string) string {
	if domain == "" {
		return LabelManagedBy
	}
	return LabelManagedBy + "=" + domain
}

const legacySelector = LabelManaged + "=true,!" + LabelManagedBy

// listMarked lists the objects of kinds (empty: all) marked for domain
// ("": any) in namespaces nss (empty: all): HPAs, Deployments and
// StatefulSets with LabelManagedBy, and legacy HPAs whose AnnotationLease is
// the domain's Soldier lease (any lease for ""). It lists on past errors and
// returns them joined.
func listMarked(ctx context.Context, client kubernetes.Interface, nss []string, kinds []ObjectKind, domain string) ([]markedObject, error) {
	if len(nss) == 0 {
		nss = []string{metav1.NamespaceAll}
	}
	hpas := func(ns, sel string) ([]metav1.ObjectMeta, error) {
		l, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return nil, err
		}
		return metasOf(l.Items, func(o *autoscalingv2.HorizontalPodAutoscaler) metav1.ObjectMeta { return o.ObjectMeta }), nil
	}
	deployments := func(ns, sel string) ([]metav1.ObjectMeta, error) {
		l, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return nil, err
		}
		return metasOf(l.Items, func(o *appsv1.Deployment) metav1.ObjectMeta { return o.ObjectMeta }), nil
	}
	statefulSets := func(ns, sel string) ([]metav1.ObjectMeta, error) {
		l, err := client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return nil, err
		}
		return metasOf(l.Items, func(o *appsv1.StatefulSet) metav1.ObjectMeta { return o.ObjectMeta }), nil
	}
	listers := []struct {
		kind   ObjectKind
		sel    string
		legacy bool
		list   func(ns, sel string) ([]metav1.ObjectMeta, error)
	}{
		{KindHPA, managedBySelector(domain), false, hpas},
		{KindHPA, legacySelector, true, hpas},
		{KindDeployment, managedBySelector(domain), false, deployments},
		{KindStatefulSet, managedBySelector(domain), false, statefulSets},
	}
	var out []markedObject
	var errs []error
	for _, ns := range nss {
		for _, l := range listers {
			if len(kinds) > 0 && !slices.Contains(kinds, l.kind) {
				continue
			}
			metas, err := l.list(ns, l.sel)
			if err != nil {
				errs = append(errs, fmt.Errorf("kube: list %ss marked by regiment in %q: %w", l.kind, ns, err))
				continue
			}
			for _, m := range metas {
				lease := m.Annotations[AnnotationLease]
				if l.legacy && domain != "" && !strings.HasSuffix(lease, "/"+SoldierLeaseName(domain)) {
					continue
				}
				out = append(out, markedObject{objectRef{l.kind, m.Namespace, m.Name}, lease})
			}
		}
	}
	return out, errors.Join(errs...)
}

func metasOf[T any](items []T, meta func(*T) metav1.ObjectMeta) []metav1.ObjectMeta {
	out := make([]metav1.ObjectMeta, len(items))
	for i := range items {
		out[i] = meta(&items[i])
	}
	return out
}

// restoreObject restores o as PlanRestore decides (legacy HPAs keep their
// marks when keepLegacyMarks is set) and reports whether it changed it. An
// object deleted meanwhile is not an error.
func restoreObject(ctx context.Context, client kubernetes.Interface, o markedObject, keepLegacyMarks bool) (Restored, bool, error) {
	res := Restored{Kind: o.Kind, Object: o.Namespace + "/" + o.Name, Lease: o.Lease}
	updated, err := editObject(ctx, client, o.objectRef, func(m *metav1.ObjectMeta, spec *OriginalSpec) (bool, error) {
		p, err := PlanRestore(o.Kind, Marks{Labels: m.Labels, Annotations: m.Annotations}, *spec, keepLegacyMarks)
		if err != nil || !p.Changes() {
			return false, err
		}
		res.From, res.Wrote = p.From, p.Write
		if p.Write {
			*spec, res.Spec = p.Spec, p.Spec
		}
		for _, k := range p.DropLabels {
			delete(m.Labels, k)
		}
		for _, k := range p.DropAnnotations {
			delete(m.Annotations, k)
		}
		return true, nil
	}, nil)
	switch {
	case apierrors.IsNotFound(err):
		return Restored{}, false, nil
	case err != nil:
		return Restored{}, false, fmt.Errorf("kube: restore %s: %w", o.objectRef, err)
	}
	return res, updated, nil
}

// MarkedDomains is the domains whose Soldiers marked an HPA, Deployment or
// StatefulSet (LabelManagedBy) in nss (empty: every namespace), sorted:
// what `regiment kube restore --domain` checks its domain against.
func MarkedDomains(ctx context.Context, client kubernetes.Interface, nss []string) ([]string, error) {
	if len(nss) == 0 {
		nss = []string{metav1.NamespaceAll}
	}
	seen := map[string]bool{}
	opts := metav1.ListOptions{LabelSelector: LabelManagedBy}
	for _, ns := range nss {
		hpas, err := client.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list marked HPAs: %w", err)
		}
		deps, err := client.AppsV1().Deployments(ns).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list marked Deployments: %w", err)
		}
		sts, err := client.AppsV1().StatefulSets(ns).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("list marked StatefulSets: %w", err)
		}
		for _, m := range slices.Concat(
			metasOf(hpas.Items, func(o *autoscalingv2.HorizontalPodAutoscaler) metav1.ObjectMeta { return o.ObjectMeta }),
			metasOf(deps.Items, func(o *appsv1.Deployment) metav1.ObjectMeta { return o.ObjectMeta }),
			metasOf(sts.Items, func(o *appsv1.StatefulSet) metav1.ObjectMeta { return o.ObjectMeta })) {
			seen[m.Labels[LabelManagedBy]] = true
		}
	}
	delete(seen, "")
	return slices.Sorted(maps.Keys(seen)), nil
}

// WriteRestored writes a table of what a restore changed (Restorer.Restore)
// and its count.
func WriteRestored(w io.Writer, done []Restored) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tOBJECT\tFROM\tSPEC")
	for _, r := range done {
		spec := "(unchanged; marks removed)"
		if r.Wrote {
			spec = EncodeOriginal(r.Spec)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Kind, r.Object, r.From, spec)
	}
	tw.Flush()
	fmt.Fprintf(w, "%d objects restored\n", len(done))
}

// DefaultKubeconfig is $KUBECONFIG (its first file), else ~/.kube/config
// if it exists, else "".
func DefaultKubeconfig() string {
	if k := os.Getenv("KUBECONFIG"); k != "" {
		return filepath.SplitList(k)[0]
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".kube", "config")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
