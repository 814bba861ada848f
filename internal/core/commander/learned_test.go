package commander

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regimentd/regiment/internal/core/rl"
)

// newTestLearned returns an untrained learned policy for cfg with the
// default architecture.
func newTestLearned(t testing.TB, seed uint64, n int, obs rl.Layout) *rl.Policy {
	t.Helper()
	p, err := rl.NewPolicy(rl.DefaultSpec(obs, ActionLayout(n)), rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pinOutput makes the actor's mean the constant latent z: output weights 0,
// output biases z.
func pinOutput(p *rl.Policy, z []float64) {
	last := len(p.Actor.Sizes()) - 2
	w, b := p.Actor.Layer(p.Actor.Params(), last)
	clear(w)
	copy(b, z)
}

func TestApplyResidual(t *testing.T) {
	heur := Action{Shares: []float64{0.3, 0.25, 0.4}, Reserve: 0.05, Urgency: []float64{0.1, 0.5, 0.9}, Headroom: []float64{0.05, 0.2, 0.3}}
	uniform := []float64{0.25, 0.25, 0.25, 0.25, 0, 0, 0, 0, 0, 0}
	shifted := []float64{0.4, 0.2, 0.2, 0.2, math.Log(3), 0, 0, -1, 0, 0}
	tests := []struct {
		name  string
		env   []float64
		check func(t *testing.T, got Action)
	}{
		{"a zero residual is the heuristic's action", uniform, func(t *testing.T, got Action) {
			for i := range 3 {
				if math.Abs(got.Shares[i]-heur.Shares[i]) > 1e-12 || math.Abs(got.Urgency[i]-heur.Urgency[i]) > 1e-12 ||
					math.Abs(got.Headroom[i]-heur.Headroom[i]) > 1e-12 {
					t.Fatalf("domain %d: %v %v %v, heuristic %v %v %v", i, got.Shares[i], got.Urgency[i], got.Headroom[i],
						heur.Shares[i], heur.Urgency[i], heur.Headroom[i])
				}
			}
			if math.Abs(got.Reserve-heur.Reserve) > 1e-12 {
				t.Fatalf("reserve %v, heuristic %v", got.Reserve, heur.Reserve)
			}
		}},
		{"a residual multiplies the share ratios and shifts the logits", shifted, func(t *testing.T, got Action) {
			// e_0 / e_reserve = 2: domain 0's ratio to the reserve doubles;
			// the others' stay.
			if r := (got.Shares[0] / got.Reserve) / (heur.Shares[0] / heur.Reserve); math.Abs(r-2) > 1e-9 {
				t.Errorf("domain 0's share ratio changed by %v, want 2", r)
			}
			if r := (got.Shares[1] / got.Reserve) / (heur.Shares[1] / heur.Reserve); math.Abs(r-1) > 1e-9 {
				t.Errorf("domain 1's share ratio changed by %v, want 1", r)
			}
			sum := got.Reserve
			for _, v := range got.Shares {
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("shares and reserve sum to %v", sum)
			}
			// logit(u) + log 3: odds times 3.
			if odds := got.Urgency[0] / (1 - got.Urgency[0]); math.Abs(odds-3*0.1/0.9) > 1e-9 {
				t.Errorf("urgency odds %v, want %v", odds, 3*0.1/0.9)
			}
			// headroom 0.05 of 0.5 is odds 1/9; a residual of -1 divides them by e.
			h := got.Headroom[0] / MaxHeadroom
			if odds := h / (1 - h); math.Abs(odds-(0.05/0.5)/(1-0.05/0.5)/math.E) > 1e-9 {
				t.Errorf("headroom odds %v", odds)
			}
			if got.Headroom[1] != heur.Headroom[1] && math.Abs(got.Headroom[1]-heur.Headroom[1]) > 1e-12 {
				t.Errorf("domain 1's headroom moved: %v", got.Headroom[1])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewAction(3)
			copyAction(&got, &heur)
			ApplyResidual(tt.env, &got)
			tt.check(t, got)
		})
	}
}

func TestLearnedDecidesTheHeuristicPlusTheMeanResidual(t *testing.T) {
	cfg := testConfig()
	b := NewBuilder(cfg)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for i, d := range cfg.Domains {
		b.OnReport(report(cfg, d.Name, 100+200*float64(i), 0.1, now))
	}
	o := b.Build(now, []float64{0.3, 0.3, 0.3}, cfg.Commander.Tick)
	heur := NewAction(3)
	(&Forecast{ReserveMin: cfg.Commander.ReserveMin}).Decide(o, &heur)

	p := newTestLearned(t, 1, 3, ObsLayout(cfg))
	z := make([]float64, ActionLayout(3).LatentDim())
	z[0] = math.Log(2) // domain 0's share ratio doubles
	pinOutput(p, z)
	l, err := NewLearned(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := NewAction(3)
	if reason := l.Decide(o, &got); reason == "" {
		t.Error("empty reason")
	}
	want := NewAction(3)
	copyAction(&want, &heur)
	ApplyResidual([]float64{0.4, 0.2, 0.2, 0.2, 0, 0, 0, 0, 0, 0}, &want)
	for i := range 3 {
		if math.Abs(got.Shares[i]-want.Shares[i]) > 1e-9 || math.Abs(got.Urgency[i]-want.Urgency[i]) > 1e-9 ||
			math.Abs(got.Headroom[i]-want.Headroom[i]) > 1e-9 {
			t.Fatalf("domain %d: got %v %v %v, want %v %v %v", i, got.Shares[i], got.Urgency[i], got.Headroom[i],
				want.Shares[i], want.Urgency[i], want.Headroom[i])
		}
	}
	if got.Shares[0] == heur.Shares[0] {
		t.Error("the residual did not move domain 0's share")
	}
	if allocs := testing.AllocsPerRun(100, func() { l.Decide(o, &got) }); allocs != 0 {
		t.Errorf("Decide allocates %v times, want 0", allocs)
	}
}

func TestLearnedRefusesACheckpointForOtherDomains(t *testing.T) {
	cfg := testConfig()
	two := testConfig()
	two.Domains = two.Domains[:2]
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "commander.ckpt")
	var buf bytes.Buffer
	if err := newTestLearned(t, 2, 2, ObsLayout(two)).Save(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ckpt, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func() error
		want []string
	}{
		{"load names the path and the domain count", func() error { _, err := LoadLearned(ckpt, cfg); return err },
			[]string{ckpt, "observation layout mismatch", "3 domains"}},
		{"new names the domain counts", func() error {
			_, err := NewLearned(newTestLearned(t, 3, 2, ObsLayout(two)), cfg)
			return err
		}, []string{"checkpoint is for 2 domains, the config has 3"}},
		{"a wrong action layout is refused", func() error {
			_, err := NewLearned(newTestLearned(t, 4, 2, ObsLayout(cfg)), cfg)
			return err
		}, []string{"action layout", "3 domains"}},
		{"a missing file names the path", func() error { _, err := LoadLearned(filepath.Join(dir, "nope.ckpt"), cfg); return err },
			[]string{"nope.ckpt", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLearnedLoadsWhatWasSaved(t *testing.T) {
	cfg := testConfig()
	p := newTestLearned(t, 5, 3, ObsLayout(cfg))
	p.Provenance = rl.Provenance{Stage: "commander", Steps: 1234}
	path := filepath.Join(t.TempDir(), "c.ckpt")
	var buf bytes.Buffer
	if err := p.Save(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := LoadLearned(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(cfg)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	o := b.Build(now, []float64{0.3, 0.3, 0.3}, cfg.Commander.Tick)
	want, got := NewAction(3), NewAction(3)
	mine, _ := NewLearned(p, cfg)
	mine.Decide(o, &want)
	if r := l.Decide(o, &got); !strings.Contains(r, "1234 steps") {
		t.Errorf("reason %q does not name the provenance", r)
	}
	for i := range 3 {
		if got.Shares[i] != want.Shares[i] || got.Urgency[i] != want.Urgency[i] {
			t.Fatalf("loaded policy decides %v, saved one %v", got, want)
		}
	}
}

// BenchmarkLearnedDecide measures the Commander's forward pass (normalise,
// actor MLP 2x64 tanh, critic, squash) for 5 domains, the paymentscale
// size. Target: < 50 us, 0 allocs.
func BenchmarkLearnedDecide(b *testing.B) {
	cfg := testConfig()
	for len(cfg.Domains) < 5 {
		d := cfg.Domains[len(cfg.Domains)-1]
		d.Name += "x"
		cfg.Domains = append(cfg.Domains, d)
	}
	n := len(cfg.Domains)
	l, err := NewLearned(newTestLearned(b, 6, n, ObsLayout(cfg)), cfg)
	if err != nil {
		b.Fatal(err)
	}
	bl := NewBuilder(cfg)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(7, 7))
	for _, d := range cfg.Domains {
		bl.OnReport(report(cfg, d.Name, 50+100*r.Float64(), 0.1, now))
	}
	o := bl.Build(now, make([]float64, n), cfg.Commander.Tick)
	a := NewAction(n)
	b.ReportAllocs()
	for b.Loop() {
		l.Decide(o, &a)
	}
}
