package rl

import (
	"math"
	"strings"
	"testing"
)

// testSpec is a small Commander-like policy: 2 urgencies (Gaussian) and
// shares over 2 domains + reserve (Simplex of 3).
func testSpec(shared bool) Spec {
	s := DefaultSpec(
		ScalarLayout("test", 1, []string{"rps", "p99_over_slo", "free_share", "hour_sin"}),
		ActionLayout{Segments: []Segment{{"urgency", Gaussian, 2}, {"shares", Simplex, 3}}},
	)
	s.Actor = Arch{Hidden: []int{6, 5}, Activations: []Activation{Tanh, ReLU}}
	s.Critic = Arch{Hidden: []int{7}, Activations: []Activation{Tanh}}
	s.SharedTrunk = shared
	s.InitLogStd = -0.3
	return s
}

// Act's log-probability is the density of the environment's action: the
// Gaussian of the urgencies plus the logistic normal of the shares.
func TestActLogProbIsTheDensityOfTheEnvAction(t *testing.T) {
	for _, shared := range []bool{false, true} {
		r := seeded(t, 41)
		p, err := NewPolicy(testSpec(shared), r)
		if err != nil {
			t.Fatal(err)
		}
		randomize(p.Params(), 0.5, r)
		obs := []float64{1, 0.5, -0.2, 3}
		a := p.NewAction()
		mean := p.NewAction()
		for range 20 {
			p.Act(obs, r, a)
			p.Mean(obs, mean) // mean.Latent: the latent means
			want := GaussianLogProb(a.Env[:2], mean.Latent[:2], p.LogStd[:2]) +
				LogisticNormalLogProb(a.Env[2:], mean.Latent[2:], p.LogStd[2:], make([]float64, 2))
			if math.Abs(a.LogProb-want) > 1e-9 {
				t.Errorf("shared %v: Act log p = %v, density of Env %v", shared, a.LogProb, want)
			}
			if s := a.Env[2] + a.Env[3] + a.Env[4]; math.Abs(s-1) > 1e-12 {
				t.Errorf("shares sum to %v", s)
			}
			if v := p.Value(obs); v != a.Value {
				t.Errorf("Value %v, Act's value %v", v, a.Value)
			}
		}
	}
}

func TestActIsDeterministicForASeed(t *testing.T) {
	p, _ := NewPolicy(testSpec(false), seeded(t, 42))
	obs := []float64{1, 2, 3, 4}
	a, b := p.NewAction(), p.NewAction()
	r1, r2 := seeded(t, 5), seeded(t, 5)
	for range 10 {
		p.Act(obs, r1, a)
		p.Act(obs, r2, b)
		for k := range a.Env {
			if a.Env[k] != b.Env[k] {
				t.Fatalf("same seed, different actions: %v and %v", a.Env, b.Env)
			}
		}
	}
}

func TestNewPolicyInitialisation(t *testing.T) {
	for _, shared := range []bool{false, true} {
		spec := testSpec(shared)
		p, err := NewPolicy(spec, seeded(t, 43))
		if err != nil {
			t.Fatal(err)
		}
		a := p.NewAction()
		p.Mean([]float64{1, -1, 1, -1}, a)
		// Output gain 0.01: shares start close to uniform, urgencies near 0.
		for k, s := range a.Env[2:] {
			if math.Abs(s-1.0/3) > 0.05 {
				t.Errorf("shared %v: initial share %d = %v, want about 1/3", shared, k, s)
			}
		}
		for k, ls := range p.LogStd {
			if ls != spec.InitLogStd {
				t.Errorf("log-std %d = %v, want %v", k, ls, spec.InitLogStd)
			}
		}
		wantParams := NumParams([]int{4, 6, 5, 4}) + 4
		if shared {
			wantParams = NumParams([]int{4, 6, 5, 5}) + 4
		} else {
			wantParams += NumParams([]int{4, 7, 1})
		}
		if len(p.Params()) != wantParams {
			t.Errorf("shared %v: %d parameters, want %d", shared, len(p.Params()), wantParams)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*Spec)
		want   string // substring of the error; "" for valid
	}{
		{"default is valid", func(*Spec) {}, ""},
		{"no features", func(s *Spec) { s.Obs.Features = nil }, "has no features"},
		{"repeated feature", func(s *Spec) { s.Obs.Features[1].Name = "rps" }, `feature "rps" appears twice`},
		{"simplex of one share", func(s *Spec) { s.Action.Segments[1].Size = 1 }, "want >= 2"},
		{"activation count", func(s *Spec) { s.Actor.Activations = s.Actor.Activations[:1] }, "actor: 2 hidden layers need 2 activations, have 1"},
		{"critic ignored with a shared trunk", func(s *Spec) { s.SharedTrunk = true; s.Critic.Hidden = []int{0} }, ""},
		{"zero-width critic layer", func(s *Spec) { s.Critic.Hidden = []int{0} }, "critic: hidden layer 0 has width 0"},
	}
	for _, tt := range tests {
		s := testSpec(false)
		tt.modify(&s)
		err := s.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestActMeanValueDoNotAllocate(t *testing.T) {
	r := seeded(t, 44)
	p, _ := NewPolicy(testSpec(false), r)
	obs := []float64{1, 2, 3, 4}
	a := p.NewAction()
	roll := p.NewRollout(1000)
	allocs := testing.AllocsPerRun(200, func() {
		p.Norm.Observe(obs)
		p.Act(obs, r, a)
		p.Mean(obs, a)
		p.Value(obs)
		if roll.Full() {
			roll.Reset()
		}
		roll.Add(a, 1, false)
	})
	if allocs != 0 {
		t.Errorf("Observe+Act+Mean+Value+Add allocate %v times per run, want 0", allocs)
	}
}
