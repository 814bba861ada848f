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

	"github.com/regimentd/regiment/rl"
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
	p, err := NewLearnedPolicy(rand.New(rand.NewPCG(1, 2)), 0.7, -1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLearned(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestUntrainedLearnedSizesAsProportionalBeyondTheDeadband(t *testing.T) {
	cfg, in := learnedDomain(4, 5, 1)
	l := newLearned(t, cfg)
	for _, budget := range []float64{math.Inf(1), 40, 15} {
		in.BudgetCores = budget
		got, want := make([]int32, len(cfg.Apps)), make([]int32, len(cfg.Apps))
		l.Decide(in, got)
		(&Proportional{}).Decide(in, want)
		for i := range got {
			cur := in.Obs.Apps[i].Replicas
			held := want[i] < cur && float64(want[i]) >= float64(cur)*0.9
			if budget == math.Inf(1) && held {
				if got[i] != cur {
					t.Errorf("budget %v app %d: a scale-down from %d to %d within the 10%% deadband moved to %d", budget, i, cur, want[i], got[i])
				}
				continue
			}
			if budget == math.Inf(1) && got[i] != want[i] {
				t.Errorf("budget %v app %d: learned %d, proportional %d", budget, i, got[i], want[i])
			}
		}
		if c := cores(cfg.Apps, got); budget < math.Inf(1) && c > budget+1e-9 {
			t.Errorf("budget %v: learned targets use %v cores", budget, c)
		}
	}
	k := l.GroupKnobs(0)
	if math.Abs(k.Util-0.7) > 1e-9 || k.Headroom != 0 || math.Abs(k.Tolerance-0.1) > 1e-9 {
		t.Errorf("warm-start knobs %+v, want util 0.7, headroom 0, tolerance 0.1", k)
	}
}

func TestLearnedTargetsRules(t *testing.T) {
	app := App{CPU: 1, Min: 1, Max: 100, Capacity: 100}
	act := func(util, head, tol float64) []float64 {
		return []float64{rl.Logit((util - UtilMin) / (UtilMax - UtilMin)), math.Atanh(head / HeadroomMax), rl.Logit(tol / ToleranceMax)}
	}
	tests := []struct {
		name string
		o    AppObservation
		act  []float64
		want int32
	}{
		{"deadband holds a scale-down within tolerance", AppObservation{RPS: 630, P99: 0.1, Ready: 10, Replicas: 10}, act(0.7, 0, 0.2), 10},
		{"scale-down beyond tolerance goes to desired", AppObservation{RPS: 420, P99: 0.1, Ready: 10, Replicas: 10}, act(0.7, 0, 0.2), 6},
		{"scale-up ignores tolerance", AppObservation{RPS: 770, P99: 0.1, Ready: 10, Replicas: 10}, act(0.7, 0, 0.39), 11},
		{"higher utilisation needs fewer replicas", AppObservation{RPS: 700, P99: 0.1, Ready: 10, Replicas: 10}, act(0.875, 0, 0.01), 8},
		{"headroom adds replicas", AppObservation{RPS: 700, P99: 0.1, Ready: 10, Replicas: 10}, act(0.7, 0.2, 0.1), 12},
		{"an app at risk goes to desired, never below ready, whatever the tolerance", AppObservation{RPS: 630, P99: 0.39, Ready: 10, Replicas: 12}, act(0.7, 0, 0.39), 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{SLO: 0.4, ErrorBudget: 0.001, Apps: []App{app}}
			l := newLearned(t, cfg)
			in := Input{Apps: cfg.Apps, Obs: &Observation{Apps: []AppObservation{tt.o}}, BudgetCores: math.Inf(1), TargetUtil: 0.7, SLO: 0.4}
			out := make([]int32, 1)
			l.Targets(in, [][]float64{tt.act}, out)
			if out[0] != tt.want {
				t.Fatalf("target %d, want %d (knobs %+v)", out[0], tt.want, l.GroupKnobs(0))
			}
		})
	}
}

func TestLearnedScaleDownWaitsForTheStabilisationWindow(t *testing.T) {
	app := App{CPU: 1, Min: 1, Max: 100, Capacity: 100}
	cfg := Config{SLO: 0.4, ErrorBudget: 0.001, Apps: []App{app}}
	l := newLearned(t, cfg)
	act := [][]float64{{rl.Logit(0), math.Atanh(0), rl.Logit(0.01 / ToleranceMax)}} // util 0.5, no headroom, tolerance 1%
	out := make([]int32, 1)
	step := func(rps float64, replicas int32) int32 {
		in := Input{Apps: cfg.Apps, Obs: &Observation{Apps: []AppObservation{{RPS: rps, P99: 0.1, Ready: replicas, Replicas: replicas}}},
			BudgetCores: math.Inf(1), TargetUtil: 0.7, SLO: 0.4}
		l.Targets(in, act, out)
		return out[0]
	}
	if got := step(1000, 20); got != 20 { // 1000 rps at 50% of 100 rps: 20 replicas
		t.Fatalf("first tick: target %d, want 20", got)
	}
	// Demand halves: the window still holds the 20 it desired.
	for k := 1; k < stabilisationTicks; k++ {
		if got := step(500, 20); got != 20 {
			t.Fatalf("tick %d of the window: scaled down to %d, want held at 20", k, got)
		}
	}
	if got := step(500, 20); got != 10 {
		t.Fatalf("after the window: target %d, want 10", got)
	}
	// A scale-up is never held by the window.
	if got := step(1500, 10); got != 30 {
		t.Fatalf("scale-up: target %d, want 30", got)
	}
	l.Reset()
	if got := step(500, 20); got != 10 {
		t.Fatalf("after Reset: target %d, want 10 (the window forgotten)", got)
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
