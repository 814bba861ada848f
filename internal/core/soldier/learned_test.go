package soldier

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/rl"
)

// learnedDomain is a domain of groups x perGroup apps with seeded telemetry.
func learnedDomain(groups, perGroup int, seed uint64) (Config, Input) {
	r := rand.New(rand.NewPCG(seed, 7))
	cfg := Config{Domain: "d", SLO: 0.4, ErrorBudget: 0.001, Priority: 1}
	obs := &Observation{}
	for g := range groups {
		for range perGroup {
			a := App{Index: len(cfg.Apps), Name: fmt.Sprintf("d/g%d-%d", g, len(cfg.Apps)), CPU: 0.5, Min: 1, Max: 200, Capacity: 100, Group: g}
			cfg.Apps = append(cfg.Apps, a)
			ready := int32(2 + r.IntN(20))
			obs.Apps = append(obs.Apps, AppObservation{
				RPS: float64(ready) * 100 * (0.3 + 0.6*r.Float64()), P99: 0.4 * (0.2 + 0.7*r.Float64()),
				CPUUtil: 0.3 + 0.6*r.Float64(), Ready: ready, Replicas: ready,
			})
		}
	}
	in := Input{Apps: cfg.Apps, Obs: obs, BudgetCores: math.Inf(1), TargetUtil: 0.7, SLO: 0.4,
		Now: time.Date(2026, 1, 1, 13, 0, 0, 0, time.UTC)}
	return cfg, in
}

func newLearned(t testing.TB, cfg Config) *Learned {
	t.Helper()
	p, err := NewLearnedPolicy(rand.New(rand.NewPCG(1, 2)), 3, -1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLearned(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestUntrainedLearnedSizesAsProportional(t *testing.T) {
	cfg, in := learnedDomain(4, 5, 1)
	in.MaxUtil, in.Safety, in.Headroom = 0.85, 3, 0.05
	l := newLearned(t, cfg)
	for _, budget := range []float64{math.Inf(1), 40, 15} {
		in.BudgetCores = budget
		got, want := make([]int32, len(cfg.Apps)), make([]int32, len(cfg.Apps))
		l.Decide(in, got)
		(&SqrtStaffing{}).Decide(in, want)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("budget %v app %d: learned %d, proportional %d", budget, i, got[i], want[i])
			}
		}
		if c := cores(cfg.Apps, got); budget < math.Inf(1) && c > budget+1e-9 {
			t.Errorf("budget %v: learned targets use %v cores", budget, c)
		}
	}
	k := l.GroupKnobs(0)
	if k.Headroom != 0 || math.Abs(k.Safety-3) > 1e-9 {
		t.Errorf("warm-start knobs %+v, want headroom 0, safety 3", k)
	}
}

func TestLearnedTargetsRules(t *testing.T) {
	app := App{CPU: 1, Min: 1, Max: 100, Capacity: 100}
	act := func(head, safety float64) []float64 {
		return []float64{math.Atanh(head / HeadroomSpan), rl.Logit(safety / SafetyMax)}
	}
	tests := []struct {
		name     string
		o        AppObservation
		headroom float64 // the directive's
		act      []float64
		want     int32
	}{
		// 700 rps on 100 rps replicas: 7 busy servers, 10 at the target utilisation 0.7.
		{"sized at the target utilisation", AppObservation{RPS: 700, P99: 0.1, Ready: 10, Replicas: 10}, 0, act(0, 3), 10},
		{"the group's headroom adds to the directive's", AppObservation{RPS: 700, P99: 0.1, Ready: 10, Replicas: 10}, 0.05, act(0.15, 3), 12},
		{"a negative headroom takes the directive's to no less than none", AppObservation{RPS: 700, P99: 0.1, Ready: 10, Replicas: 10}, 0.1, act(-0.19, 3), 10},
		// 5000 rps: 50 busy servers; x + beta sqrt(x) between x / 0.9 and x / 0.7.
		{"staffing safety 3", AppObservation{RPS: 5000, P99: 0.1, Ready: 60, Replicas: 60}, 0, act(0, 3), 72},
		{"staffing safety 1 runs a large app hotter", AppObservation{RPS: 5000, P99: 0.1, Ready: 60, Replicas: 60}, 0, act(0, 1), 58},
		{"a fall is proposed at once (the Soldier's Stabiliser holds it)", AppObservation{RPS: 420, P99: 0.1, Ready: 10, Replicas: 10}, 0, act(0, 3), 6},
		{"an app at risk keeps its ready replicas and is not boosted", AppObservation{RPS: 630, P99: 0.39, Ready: 10, Replicas: 12}, 0, act(0, 3), 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{SLO: 0.4, ErrorBudget: 0.001, Apps: []App{app}}
			l := newLearned(t, cfg)
			in := Input{Apps: cfg.Apps, Obs: &Observation{Apps: []AppObservation{tt.o}}, BudgetCores: math.Inf(1),
				Headroom: tt.headroom, TargetUtil: 0.7, MaxUtil: 0.9, Safety: 3, SLO: 0.4}
			out := make([]int32, 1)
			l.Targets(in, [][]float64{tt.act}, out)
			if out[0] != tt.want {
				t.Fatalf("target %d, want %d (knobs %+v)", out[0], tt.want, l.GroupKnobs(0))
			}
		})
	}
}

func TestLearnedFeaturesAreBoundedAndPerGroup(t *testing.T) {
	cfg, in := learnedDomain(3, 4, 2)
	in.BudgetCores = 20
	l := newLearned(t, cfg)
	obs := make([][]float64, l.Groups())
	for g := range obs {
		obs[g] = make([]float64, LearnedLayout().Dim())
	}
	l.Features(in, obs)
	if l.Groups() != 3 {
		t.Fatalf("%d groups, want 3", l.Groups())
	}
	for g, f := range obs {
		for k, v := range f {
			if math.IsNaN(v) || math.Abs(v) > 5 {
				t.Errorf("group %d feature %s = %v", g, learnedFeatures[k], v)
			}
		}
		if f[1] != 1 || f[0]+f[2]+f[3] != 0 {
			t.Errorf("group %d: priority one-hot %v for P1", g, f[:4])
		}
	}
	if obs[0][12] == obs[1][12] && obs[1][12] == obs[2][12] {
		t.Errorf("every group has the same p99 feature %v: features are not per group", obs[0][12])
	}
}

func TestLoadLearnedRoundTripAndRefusesAnotherLayout(t *testing.T) {
	cfg, in := learnedDomain(2, 3, 3)
	l := newLearned(t, cfg)
	dir := t.TempDir()
	path := filepath.Join(dir, "soldier.ckpt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Policy().Save(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m, err := LoadLearned(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]int32, len(cfg.Apps)), make([]int32, len(cfg.Apps))
	l.Decide(in, a)
	m.Decide(in, b)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("loaded policy decides %v, saved one %v", b, a)
		}
	}

	other, err := rl.NewPolicy(rl.DefaultSpec(rl.ScalarLayout("soldier", LearnedLayoutVersion+1, []string{"x"}), LearnedActions()), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "old.ckpt")
	f, _ = os.Create(bad)
	other.Save(f)
	f.Close()
	if _, err := LoadLearned(bad, cfg); !errors.Is(err, rl.ErrLayoutMismatch) {
		t.Fatalf("loading a checkpoint of another layout: %v, want ErrLayoutMismatch", err)
	}
	if _, err := LoadLearned(filepath.Join(dir, "missing.ckpt"), cfg); err == nil {
		t.Fatal("loading a missing file succeeded")
	}
}

func TestLearnedDecideDoesNotAllocate(t *testing.T) {
	cfg, in := learnedDomain(10, 10, 4)
	in.BudgetCores = 200
	l := newLearned(t, cfg)
	out := make([]int32, len(cfg.Apps))
	if n := testing.AllocsPerRun(20, func() { l.Decide(in, out) }); n != 0 {
		t.Fatalf("Decide allocates %v times per call", n)
	}
}

// BenchmarkLearnedDecide is one tick of the learned Soldier: 500 apps in
// 50 groups of 10 (the 500-app domain), and 500 groups of 1.
func BenchmarkLearnedDecide(b *testing.B) {
	for _, sz := range []struct{ groups, per int }{{50, 10}, {500, 1}} {
		b.Run(fmt.Sprintf("apps=500/groups=%d", sz.groups), func(b *testing.B) {
			cfg, in := learnedDomain(sz.groups, sz.per, 5)
			in.BudgetCores = 1500
			l := newLearned(b, cfg)
			out := make([]int32, len(cfg.Apps))
			b.ReportAllocs()
			for b.Loop() {
				l.Decide(in, out)
			}
		})
	}
}
