package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/adapter/recording"
	"github.com/regimentd/regiment/internal/adapter/store"
	"github.com/regimentd/regiment/internal/config"
	"github.com/regimentd/regiment/internal/core/domains"
	"github.com/regimentd/regiment/internal/core/soldier"
	"github.com/regimentd/regiment/internal/offline/episodes"
)

// found is n Deployments of namespace ns named prefix-0.., labelled for
// payment, whose pods request cpu cores.
func found(ns, prefix string, n int, cpu float64) []domains.FoundWorkload {
	var out []domains.FoundWorkload
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		out = append(out, domains.FoundWorkload{Kind: domains.KindDeployment, Namespace: ns, Name: name,
			Labels: map[string]string{"regiment.io/domain": "payment"}, PodSelector: "app=" + name, CPURequest: cpu})
	}
	return out
}

// recordEpisode records steps recommend-mode steps of payment's Soldier into
// st as the daemon does (recording.Soldier), every app of cfg at live
// replicas 1 and recommended 2; describe, when set, describes the apps in
// the episode's Meta as the daemon does.
func recordEpisode(t *testing.T, st *store.Store, id string, cfg *domains.Config, t0 time.Time, steps int, describe bool) {
	t.Helper()
	ep := recording.SoldierEpisode(id, cfg, "payment", "heuristic")
	ep.Started = t0
	if describe {
		ep.Meta = recording.AppsMeta(cfg, "payment", true)
	}
	if err := st.BeginEpisode(ep); err != nil {
		t.Fatal(err)
	}
	a := st.NewAppender(64, time.Hour)
	sr := &recording.Soldier{Episode: id, Out: a, Err: func(err error) { t.Error(err) }}
	apps := soldier.Apps(cfg, cfg.Domain("payment"))
	for k := range steps {
		r := soldier.Record{At: t0.Add(time.Duration(k) * 10 * time.Second), Seq: uint64(k), Domain: "payment", Mode: string(domains.ModeRecommend),
			Outcome: soldier.Outcome{SLOMet: true}, Features: make([]float64, len(soldier.Layout))}
		for _, app := range apps {
			r.Apps = append(r.Apps, soldier.NamedObservation{App: app.Name, AppObservation: soldier.AppObservation{RPS: 10, Ready: 1, Replicas: 1}})
			r.PolicyTargets, r.BaselineTargets = append(r.PolicyTargets, 2), append(r.BaselineTargets, 1)
		}
		sr.Record(r)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReportCoversTheDiscoveredApps records, in a real store, payment's
// Soldier deciding for 20 Deployments of payments and 10 of storefront found
// by label, none in the config, and 2 more found 5 steps into the episode:
// the report lists the 32 apps under their names in the store with their
// namespace and workload, costs them at their pods' CPU request (not the
// config's, which knows none of them), and counts the late ones from their
// first step only.
func TestReportCoversTheDiscoveredApps(t *testing.T) {
	cfg, err := config.LoadFile("../../../deploy/staging/regiment.hcl")
	if err != nil {
		t.Fatal(err)
	}
	di := cfg.Domain("payment")
	if n := len(soldier.Apps(cfg, di)); n != 0 {
		t.Fatalf("the staging config lists %d apps of payment, want none (all found by label)", n)
	}
	first := append(found("payments", "payments", 20, 0.25), found("storefront", "checkout", 10, 0.5)...)
	before, problems := cfg.WithDiscovered(di, first)
	after, problems2 := cfg.WithDiscovered(di, append(first, found("storefront", "late", 2, 1)...))
	if len(problems)+len(problems2) > 0 {
		t.Fatal(problems, problems2)
	}
	path := filepath.Join(t.TempDir(), "soldier-payment.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	recordEpisode(t, st, "soldier-payment-1", before, t0, 5, true)
	// The two late apps: the daemon describes them when found, and its
	// steps carry them from then on (here, in an episode of its own).
	recordEpisode(t, st, "soldier-payment-2", after, t0.Add(50*time.Second), 5, false)
	if err := st.SetEpisodeMeta("soldier-payment-2", recording.AppsMeta(after, "payment", true)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	rec, err := Read(context.Background(), cfg, []episodes.Source{{Name: path, Path: path}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Domains) != 1 || rec.Domains[0].Name != "payment" || len(rec.Domains[0].At) != 10 {
		t.Fatalf("domains %+v, want payment with 10 steps", rec.Domains)
	}
	d := rec.Domains[0]
	if len(d.Apps) != 32 {
		t.Fatalf("%d apps, want the 32 found by label", len(d.Apps))
	}
	byName := map[string]*App{}
	for i := range d.Apps {
		byName[d.Apps[i].Name] = &d.Apps[i]
	}
	for _, want := range []struct {
		name, ns, workload string
		cpu                float64
		steps              int
	}{
		{"payment/payments_payments-7", "payments", "payments-7", 0.25, 10},
		{"payment/storefront_checkout-3", "storefront", "checkout-3", 0.5, 10},
		{"payment/storefront_late-1", "storefront", "late-1", 1, 5},
	} {
		a := byName[want.name]
		if a == nil {
			t.Errorf("no %s in the report", want.name)
			continue
		}
		recorded := 0
		for _, v := range a.Live {
			if !math.IsNaN(v) {
				recorded++
			}
		}
		if a.Namespace != want.ns || a.Workload != want.workload || a.Kind != "Deployment" || !a.Discovered ||
			a.CPU != want.cpu || a.Attributes != AttributesStore || recorded != want.steps || a.ServiceTime != 0.025 {
			t.Errorf("%s: %s %s/%s discovered %v cpu %g (%s) service time %g, %d steps; want Deployment %s/%s discovered cpu %g (store) 0.025 s, %d steps",
				want.name, a.Kind, a.Namespace, a.Workload, a.Discovered, a.CPU, a.Attributes, a.ServiceTime, recorded, want.ns, want.workload, want.cpu, want.steps)
		}
	}
	res := Compare(rec)
	tick := cfg.Soldier.Tick.Hours()
	// By hand: 20 apps x 0.25 + 10 x 0.5 = 10 cores a step for 10 steps,
	// and 2 x 1 core for the last 5, at 1 replica live and 2 recommended.
	wantLive := (10*10 + 2*5) * tick
	if r := res[0]; math.Abs(r.Live.CoreHours-wantLive) > 1e-9 || math.Abs(r.Recommended.CoreHours-2*wantLive) > 1e-9 || len(r.Apps) != 32 {
		t.Errorf("core-hours live %g regiment %g over %d apps; want %g and %g over 32", r.Live.CoreHours, r.Recommended.CoreHours, len(r.Apps), wantLive, 2*wantLive)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rec, res, 5); err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?m)^\| payment/\S+ \| (payments|storefront) \| deployment/\S+ \| label \| `).FindAllString(md.String(), -1)
	if len(rows) != 32 || !strings.Contains(md.String(), "## payment: every app (32)") {
		t.Errorf("report.md has %d rows of discovered apps with their namespace and workload, want 32:\n%s", len(rows), md.String())
	}
}

// TestReportOnAStoreThatDoesNotDescribeItsApps reads discovered apps from
// episodes without app descriptions (an older Regiment's): they are listed
// under their names, without a workload, at the discover block's defaults,
// and report.md says their cost is unknown; an app the config lists keeps
// the config's attributes.
func TestReportOnAStoreThatDoesNotDescribeItsApps(t *testing.T) {
	cfg, err := config.LoadFile("../../../deploy/staging/regiment.hcl")
	if err != nil {
		t.Fatal(err)
	}
	di := cfg.Domain("payment")
	disc, _ := cfg.WithDiscovered(di, found("payments", "payments", 3, 0.25))
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	recordEpisode(t, st, "old", disc, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 4, false)
	st.Close()
	rec, err := Read(context.Background(), cfg, []episodes.Source{{Name: path, Path: path}})
	if err != nil {
		t.Fatal(err)
	}
	d := rec.Domains[0]
	if len(d.Apps) != 3 {
		t.Fatalf("%d apps, want 3", len(d.Apps))
	}
	for _, a := range d.Apps {
		if a.Workload != "" || a.Attributes != AttributesDiscover || a.CPU != 0 || a.ServiceTime != 0.025 || !a.Discovered {
			t.Errorf("%s: workload %q, %s, cpu %g, service time %g", a.Name, a.Workload, a.Attributes, a.CPU, a.ServiceTime)
		}
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, rec, Compare(rec), 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "3 apps have no CPU per replica") || !strings.Contains(md.String(), "| payment/payments_payments-0 | - | - | label | unknown |") {
		t.Errorf("report.md does not say the apps' cost is unknown:\n%s", md.String())
	}
}

// TestReadRefusesAStoreWithoutSteps: a store with no Soldier step of the
// cluster is an error naming the store.
func TestReadRefusesAStoreWithoutSteps(t *testing.T) {
	cfg, err := config.LoadFile("../../../deploy/staging/regiment.hcl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "empty.db")
	st, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, err = Read(context.Background(), cfg, []episodes.Source{{Name: "http://soldier:9465/", Path: path}})
	if err == nil || !strings.Contains(err.Error(), `no Soldier steps of cluster "staging" in http://soldier:9465/`) {
		t.Fatalf("err = %v", err)
	}
}
